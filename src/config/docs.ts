import { ERRORS } from '../errors.js';
import { RUN_ERRORS } from '../run-errors.js';
import { PROVIDER_SPECS } from '../providers/index.js';
import type { SchemaNode } from '../schema-node.js';
import { configSchema } from './schema.js';

/**
 * The configuration reference as Markdown, rendered from the schema (its descriptions and
 * defaults are the docs, STYLE.md §6). docs/configuration.md carries this exact text between
 * `<!-- config-reference:start -->` and `<!-- config-reference:end -->`; `npm run docs`
 * writes it there (doc-sections.ts) and `spec/unit/config/docs.spec.ts` keeps the two in step.
 *
 * One section per top-level key, one row per key path: the leaves, plus the nested maps and
 * lists of maps (so that e.g. `hooks.mappings` and `hooks.mappings[].match` have their description);
 * a list's item keys are written `hooks.mappings[].id`.
 */
export function configReference(): string {
  const out = [
    '<!-- generated from src/config/schema.ts by `npm run docs`; edit the schema, not this text -->',
    '',
  ];
  for (const [key, node] of Object.entries(configSchema.properties ?? {})) {
    out.push(`### \`${key}\``, '');
    if (isMap(node)) out.push(node.description ?? '', '');
    out.push('| key | type | default | description |', '|---|---|---|---|');
    if (isMap(node)) rows(node, key, out);
    else out.push(row(key, node, false));
    out.push('');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

function rows(parent: SchemaNode, path: string, out: string[]): void {
  for (const [key, node] of Object.entries(parent.properties ?? {})) {
    const here = `${path}.${key}`;
    const required = parent.required?.includes(key) ?? false;
    if (isMap(node)) {
      out.push(row(here, node, required));
      rows(node, here, out);
    } else if (node.type === 'array' && node.items && isMap(node.items)) {
      out.push(row(here, node, required));
      rows(node.items, `${here}[]`, out);
    } else if (node.type === 'array' && node.items?.anyOf?.some(isMap)) {
      // A list of plain values or maps (`hooks.tokens`): the map's keys get their rows.
      out.push(row(here, node, required));
      for (const item of node.items.anyOf.filter(isMap)) rows(item, `${here}[]`, out);
    } else {
      out.push(row(here, node, required));
    }
  }
}

function row(path: string, node: SchemaNode, required: boolean): string {
  // The `secret` mark is what the loader and the logger act on; say so where users look.
  const description = `${required ? '**Required.** ' : ''}${node.description ?? ''}${node.secret ? ' Secret: never logged.' : ''}`;
  return `| \`${path}\` | ${cell(typeOf(node))} | ${cell(defaultOf(node))} | ${cell(description)} |`;
}

function typeOf(node: SchemaNode): string {
  if (node.enum) return node.enum.map((v) => `\`${v}\``).join(' \\| ');
  if (node.type === 'array' && node.items?.anyOf) return `list of ${node.items.anyOf.map((i) => (isMap(i) ? 'maps' : `${i.type}s`)).join(' or ')}`;
  if (node.type === 'array') return `list of ${node.items && isMap(node.items) ? 'maps' : `${node.items?.type ?? 'any'}s`}`;
  if (node.type === 'object') return typeof node.additionalProperties === 'object' ? `map of ${node.additionalProperties.type}s` : 'map';
  return node.type ?? 'any';
}

function defaultOf(node: SchemaNode): string {
  if (node.defaultDoc) return node.defaultDoc;
  if (node.default === undefined || (isMap(node) && node.type === 'object')) return '—';
  const text = typeof node.default === 'string' ? node.default : JSON.stringify(node.default);
  return text === '' ? '`""`' : `\`${text}\``;
}

/** An object with named keys (as opposed to a free-form map like `agent.aliases`). */
function isMap(node: SchemaNode): boolean {
  return node.type === 'object' && node.properties !== undefined;
}

/**
 * Table cells: no line breaks, `|` would end the cell, and outside code spans `<uuid>` would
 * be taken for an HTML tag and vanish.
 */
function cell(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, ' ').replace(/(?<!\\)\|/g, '\\|');
  return flat.split('`').map((part, i) => (i % 2 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;'))).join('`');
}

/** The error catalog as a Markdown table (docs/errors.md). */
export function errorCatalog(): string {
  const rows = Object.entries(ERRORS).map(([code, e]) => `| ${e.status} | \`${code}\` | ${e.summary} |`);
  return ['| status | code | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** The run error catalog as a Markdown table (docs/errors.md, "Run errors"). */
export function runErrorCatalog(): string {
  const rows = Object.entries(RUN_ERRORS).map(([code, e]) => `| \`${code}\` | \`${e.status}\` | ${e.summary} |`);
  return ['| errorCode | run status | meaning |', '|---|---|---|', ...rows].join('\n');
}

/**
 * One section per delivery provider (docs/providers.md), from the
 * provider specs (src/providers/): where the credentials come from, the length limit and a
 * working config example.
 */
export function providersGuide(): string {
  // The marker still names the specs' old home (they are in src/providers/ now): the README
  // must match this text, so it changes when the generated sections move to docs/ (issue 31).
  const out = ['<!-- generated from src/providers/*.ts by `npm run docs`; edit the specs, not this text -->', ''];
  for (const p of PROVIDER_SPECS) {
    out.push(`### \`${p.name}\`: ${(p.schema.description ?? '').replace(/\.$/, '')}`, '');
    out.push(p.summary, '');
    out.push(`Configured when ${p.required.map((k) => `\`providers.${p.name}.${k}\``).join(' and ')} ${p.required.length > 1 ? 'are' : 'is'} set. Replies longer than ${p.limit} characters go out as several messages, in order.`, '');
    out.push('```yaml', p.example, '```', '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}
