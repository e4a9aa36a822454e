import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError, type ConfigProblem } from './errors.js';
import { joinPath } from './problems.js';

export type Env = Record<string, string | undefined>;
export type Obj = Record<string, any>;

export function isPlainObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export const NOT_A_MAP = 'the config must be a map of keys (server, hooks, agent…)';

/** @throws ConfigError when the file cannot be read or parsed, or holds no map. */
export function readConfigFile(file: string): Obj {
  return parseConfigText(readConfigText(file), file);
}

/** @throws ConfigError when it cannot be read. */
export function readConfigText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file (give --config or set HOOKRELAY_CONFIG)' : (e as Error).message;
    throw new ConfigError([{ path: file, message: `cannot read the config file: ${why}` }]);
  }
}

/** `file` names the format and locates errors. @throws ConfigError when it cannot be parsed, or holds no map. */
export function parseConfigText(text: string, file: string): Obj {
  const raw = extname(file).toLowerCase() === '.json' ? parseJson(text, file) : parseYaml(text, file);
  // YAML reads an empty file as null; taken for "no settings", a reload would drop every mapping.
  if (raw === null || raw === undefined) {
    throw new ConfigError([{ path: file, message: 'the config file holds no settings (it is empty, only comments, or null): write its keys (server, hooks, agent…) as in hookrelay.example.yaml' }]);
  }
  if (!isPlainObject(raw)) throw new ConfigError([{ path: file, message: NOT_A_MAP }]);
  return raw;
}

function parseYaml(text: string, file: string): unknown {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length) throw new ConfigError(doc.errors.map((e) => locate(file, e.linePos?.[0], e.message)));
  return doc.toJS();
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    // V8 quotes the offending source, which may hold a secret; yaml (JSON is YAML) gives the position.
    const message = (e as Error).message.replace(/, ".*" is not valid JSON$/s, ' (not valid JSON)');
    const yamlError = parseDocument(text, { schema: 'json' }).errors[0];
    throw new ConfigError([locate(file, yamlError?.linePos?.[0], message)]);
  }
}

function locate(file: string, pos: { line: number; col: number } | undefined, message: string): ConfigProblem {
  const text = message.split(/ at line \d+, column \d+/)[0];
  return { path: pos ? `${file}:${pos.line}:${pos.col}` : file, message: text.trim() };
}

/** `${VAR}` and `${VAR:-default}` as in the shell, `$${X}` literal; an unset variable without default goes to `missing`. */
export function expandEnv(s: string, env: Env, missing: (name: string) => void = () => {}): string {
  return s.replace(/\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (whole, escaped: string, name: string, dflt?: string) => {
    if (escaped) return whole.slice(1);
    const value = env[name];
    if (dflt !== undefined) return value || dflt;
    if (value === undefined) missing(name);
    return value ?? '';
  });
}

/** Expands `${VAR}` and drops null-valued keys (YAML's empty value is "unset"), except in a mapping's `schema`. */
export function prepare(value: unknown, env: Env | null, path = '', problems: ConfigProblem[] = [], keepNulls = false): unknown {
  if (typeof value === 'string') {
    return env ? expandEnv(value, env, (name) => problems.push({ path: path || '(top level)', message: `\${${name}} is not set: set ${name}, or write \${${name}:-} (empty) or \${${name}:-default}` })) : value;
  }
  if (Array.isArray(value)) return value.map((v, i) => prepare(v, env, `${path}[${i}]`, problems, keepNulls));
  if (!isPlainObject(value)) return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) {
    if ((v === null && !keepNulls) || v === undefined) continue;
    const inSchema = keepNulls || (k === 'schema' && path.endsWith(']'));
    // defineProperty: a `__proto__` key stays an ordinary (and then unknown) key.
    Object.defineProperty(out, k, { value: prepare(v, env, joinPath(path, k), problems, inSchema), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
