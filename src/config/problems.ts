import type { ErrorObject } from 'ajv';
import type { ConfigProblem } from './errors.js';
import { SECRET_KEYS } from './schema.js';
import type { SchemaNode } from '../schema-node.js';

/** ajv's errors as problems at YAML paths, saying what to change, never a secret's value (STYLE.md #6). */
export function ajvProblems(errors: ErrorObject[] | null | undefined, prefix: string): ConfigProblem[] {
  return withoutBranchMisses(errors ?? []).map((e) => {
    const path = yamlPath(e.instancePath, prefix);
    const key = path.split(/[.[]/).pop() ?? '';
    switch (e.keyword) {
      case 'additionalProperties': {
        const bad = (e.params as { additionalProperty: string }).additionalProperty;
        const known = Object.keys((e.parentSchema as SchemaNode).properties ?? {});
        const hint = closest(bad, known);
        return { path: joinPath(path, bad), message: `unknown key "${bad}"; ${hint ? `did you mean "${hint}"?` : `allowed keys: ${known.join(', ')}`}` };
      }
      case 'required':
        return { path: joinPath(path, (e.params as { missingProperty: string }).missingProperty), message: 'is required' };
      case 'enum': {
        const values = (e.params as { allowedValues: unknown[] }).allowedValues;
        if (SECRET_KEYS.has(key)) return { path, message: `must be one of ${values.join(', ')}` };
        const hint = typeof e.data === 'string' ? closest(e.data, values.map(String)) : undefined;
        return { path, message: `must be one of ${values.join(', ')} (got ${show(e.data)})${hint ? `: did you mean "${hint}"?` : ''}` };
      }
      case 'type':
        return { path, message: `must be ${article(String((e.params as { type: string }).type))} (got ${describe(e.data)})` };
      case 'minLength':
        return { path, message: (e.params as { limit: number }).limit === 1 ? 'must not be empty' : e.message ?? 'is too short' };
      case 'pattern':
        return { path, message: `must match /${(e.params as { pattern: string }).pattern}/` };
      case 'anyOf':
        return { path, message: `must be ${(e.schema as SchemaNode[]).map((b) => (b.properties ? `a map of ${Object.keys(b.properties).join(', ')}` : article(String(b.type)))).join(' or ')} (got ${describe(e.data)})` };
      default:
        return { path, message: e.message ?? 'is invalid' };
    }
  });
}

/** An `anyOf`'s misses, only those of the branch whose type the value has; its summary only when nothing more precise is left. */
function withoutBranchMisses(errors: ErrorObject[]): ErrorObject[] {
  const drop = new Set<ErrorObject>();
  for (const a of errors) {
    if (a.keyword !== 'anyOf') continue;
    const branches = errors.filter((e) => e.schemaPath.startsWith(`${a.schemaPath}/`));
    const typeMisses = branches.filter((e) => e.keyword === 'type' && e.instancePath === a.instancePath);
    for (const e of typeMisses) drop.add(e);
    if (branches.length > typeMisses.length) drop.add(a);
  }
  return drop.size ? errors.filter((e) => !drop.has(e)) : errors;
}

/** `/hooks/mappings/2/transform/module` → `hooks.mappings[2].transform.module`. */
export function yamlPath(pointer: string, prefix = ''): string {
  let out = prefix;
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out = /^\d+$/.test(seg) ? `${out}[${seg}]` : joinPath(out, seg);
  }
  return out;
}

/** `path` and one more key, quoted when it is not a plain name: `a.b`, `a["x y"]`. */
export function joinPath(path: string, key: string): string {
  const k = /^[A-Za-z_$][\w$-]*$/.test(key) ? key : JSON.stringify(key);
  if (k.startsWith('"')) return `${path}[${k}]`;
  return path ? `${path}.${k}` : k;
}

/** The known key closest to a typo, when it is close enough to be what was meant. */
function closest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = c.toLowerCase() === word.toLowerCase() ? 0 : levenshtein(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return bestDistance <= Math.max(1, Math.min(3, Math.floor(word.length / 3))) ? best : undefined;
}

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

const TYPE_NAMES: Record<string, string> = { string: 'a string', integer: 'an integer', number: 'a number', boolean: 'true or false', array: 'a list', object: 'a map' };
const article = (type: string) => TYPE_NAMES[type] ?? type;
const describe = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a map' : `a ${typeof v}`);
const show = (v: unknown) => { const s = JSON.stringify(v) ?? String(v); return s.length > 60 ? `${s.slice(0, 57)}...` : s; };
/** The problems without repeats (one rule can report the same path twice). */
export const dedupe = (ps: ConfigProblem[]) => ps.filter((p, i) => ps.findIndex((q) => q.path === p.path && q.message === p.message) === i);
