import { ERRORS } from '../../src/errors.js';
import { RUN_ERRORS } from '../../src/run-errors.js';
import { PROVIDER_SPECS } from '../../src/providers/index.js';
import type { SchemaNode } from '../../src/schema-node.js';
import { configSchema } from '../../src/config/schema.js';

/** The configuration reference rendered from the schema (STYLE.md #6), written by `npm run docs` into docs/configuration.md. */
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
    out.push(row(here, node, parent.required?.includes(key) ?? false));
    if (isMap(node)) rows(node, here, out);
    const items = node.type === 'array' && node.items ? [node.items, ...(node.items.anyOf ?? [])] : [];
    for (const item of items.filter(isMap)) rows(item, `${here}[]`, out);
  }
}

function row(path: string, node: SchemaNode, required: boolean): string {
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

function isMap(node: SchemaNode): boolean {
  return node.type === 'object' && node.properties !== undefined;
}

/** Outside code spans `<uuid>` would be taken for an HTML tag and vanish. */
function cell(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, ' ').replace(/(?<!\\)\|/g, '\\|');
  return flat.split('`').map((part, i) => (i % 2 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;'))).join('`');
}

export function errorCatalog(): string {
  const rows = Object.entries(ERRORS).map(([code, e]) => `| ${e.status} | \`${code}\` | ${e.summary} |`);
  return ['| status | code | meaning |', '|---|---|---|', ...rows].join('\n');
}

export function runErrorCatalog(): string {
  const rows = Object.entries(RUN_ERRORS).map(([code, e]) => `| \`${code}\` | \`${e.status}\` | ${e.summary} |`);
  return ['| errorCode | run status | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** One section per delivery provider (docs/providers.md), from the specs in src/providers/. */
export function providersGuide(): string {
  const out = ['<!-- generated from src/providers/*.ts by `npm run docs`; edit the specs, not this text -->', ''];
  for (const p of PROVIDER_SPECS) {
    out.push(`### \`${p.name}\`: ${(p.schema.description ?? '').replace(/\.$/, '')}`, '');
    out.push(p.summary, '');
    out.push(`Configured when ${p.required.map((k) => `\`providers.${p.name}.${k}\``).join(' and ')} ${p.required.length > 1 ? 'are' : 'is'} set. Replies longer than ${p.limit} characters go out as several messages, in order.`, '');
    out.push('```yaml', p.example, '```', '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}
