import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError, type ConfigProblem } from './errors.js';
import { joinPath } from './problems.js';

/**
 * Reading a config: the file (`.json` as JSON, anything else as YAML, each error at
 * `file:line:col`), then `${VAR}` expansion and YAML's empty values, before anything is
 * validated (load.ts).
 */

/** The environment `${VAR}` is expanded from. */
export type Env = Record<string, string | undefined>;
/** Data of any shape, before and while it is checked. */
export type Obj = Record<string, any>;

/** A map (not null, not a list): what a config section must be before its keys are read. */
export function isPlainObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Why a document is not a config at all. */
export const NOT_A_MAP = 'the config must be a map of keys (server, hooks, agent…)';

/**
 * The parsed config file: a map, not yet expanded or validated.
 * @throws ConfigError when the file cannot be read or parsed, or holds no map.
 */
export function readConfigFile(file: string): Obj {
  return parseConfigText(readConfigText(file), file);
}

/**
 * The config file's text.
 * @throws ConfigError when it cannot be read.
 */
export function readConfigText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file (give --config or set HOOKRELAY_CONFIG)' : (e as Error).message;
    throw new ConfigError([{ path: file, message: `cannot read the config file: ${why}` }]);
  }
}

/**
 * The config file's text parsed (`file` names the format and locates errors).
 * @throws ConfigError when it cannot be parsed, or holds no map.
 */
export function parseConfigText(text: string, file: string): Obj {
  const raw = extname(file).toLowerCase() === '.json' ? parseJson(text, file) : parseYaml(text, file);
  // YAML reads an empty file, one of only comments, or `~` as null. Taken for "no settings",
  // it served defaults: on a reload every mapping went, a new token was generated and later
  // reloads kept defaults for restart-only keys (issue 30). A config file says something.
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
    // V8 quotes the offending source in its message; cut it so a secret on that line is not
    // echoed, and borrow the position from yaml (JSON is YAML), which reports line/column.
    const message = (e as Error).message.replace(/, ".*" is not valid JSON$/s, ' (not valid JSON)');
    const yamlError = parseDocument(text, { schema: 'json' }).errors[0];
    throw new ConfigError([locate(file, yamlError?.linePos?.[0], message)]);
  }
}

/** A parse problem at `file:line:col`, without the source excerpt yaml appends. */
function locate(file: string, pos: { line: number; col: number } | undefined, message: string): ConfigProblem {
  const text = message.split(/ at line \d+, column \d+/)[0];
  return { path: pos ? `${file}:${pos.line}:${pos.col}` : file, message: text.trim() };
}

/**
 * `${VAR}` and `${VAR:-default}` in a string (the default also replaces an empty value, as in
 * the shell); `$${X}` is a literal `${X}`. A variable that is unset and has no default is
 * passed to `missing` (and expands to nothing): a config that names a variable means it to be
 * set, and an empty token or key in its place would change what the config does unnoticed.
 */
export function expandEnv(s: string, env: Env, missing: (name: string) => void = () => {}): string {
  return s.replace(/\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (whole, escaped: string, name: string, dflt?: string) => {
    if (escaped) return whole.slice(1);
    const value = env[name];
    if (dflt !== undefined) return value || dflt;
    if (value === undefined) missing(name);
    return value ?? '';
  });
}

/**
 * Expands `${VAR}` in string values (never in keys; `env` null: no expansion) and drops
 * null-valued keys, so that YAML's empty value means "unset" and the default applies. An
 * unset variable without default is a problem at the key's path. A mapping's `schema` keeps
 * its nulls: there `const: null` or `default: null` is the schema's own value, and dropping it
 * would quietly widen what the schema accepts.
 */
export function prepare(value: unknown, env: Env | null, path = '', problems: ConfigProblem[] = [], keepNulls = false): unknown {
  if (typeof value === 'string') {
    return env ? expandEnv(value, env, (name) => problems.push({ path: path || '(top level)', message: `\${${name}} is not set: set ${name}, or write \${${name}:-} (empty) or \${${name}:-default}` })) : value;
  }
  if (Array.isArray(value)) return value.map((v, i) => prepare(v, env, `${path}[${i}]`, problems, keepNulls));
  if (!isPlainObject(value)) return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) {
    if ((v === null && !keepNulls) || v === undefined) continue;
    // A mapping's schema: the key `schema` of a list item (hooks.mappings[i], or a preset's [i]).
    const inSchema = keepNulls || (k === 'schema' && path.endsWith(']'));
    // defineProperty: a `__proto__` key stays an ordinary (and then unknown) key.
    Object.defineProperty(out, k, { value: prepare(v, env, joinPath(path, k), problems, inSchema), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
