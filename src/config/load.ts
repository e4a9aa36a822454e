import { existsSync, readFileSync } from 'node:fs';
import { BlockList } from 'node:net';
import { dirname, extname, isAbsolute, resolve, win32 } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parseDocument } from 'yaml';
import { ConfigError, type ConfigProblem } from './errors.js';
import { loadPresets, type MappingValidator } from './presets.js';
import { configSchema, mappingSchema, SECRET_HEADERS, SECRET_KEYS, sessionKeyRule, unconfiguredProvider } from './schema.js';
import type { SchemaNode } from '../schema-node.js';
import type { Config, LoadedConfig, MappingConfig } from './types.js';
import { addTrusted } from '../address-rules.js';
import { parseTarget, routeKind } from '../request-target.js';
import { transformPathProblem } from '../transform-module-path.js';
import { verifyProblems } from './verify.js';
import { credentialProblems } from './credentials.js';

type Env = Record<string, string | undefined>;
type Obj = Record<string, any>; // data of any shape, before and while it is checked

// Compiled once at module load (STYLE.md §2). coerceTypes lets `port: ${PORT:-8788}` and
// `to: 123456` work: after ${VAR} expansion every such scalar is a string or a number.
const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: true, strict: true, verbose: true });
ajv.addKeyword('defaultDoc');
ajv.addKeyword('secret');
const validateShape = ajv.compile(configSchema);
// Only preset files need it: compiled on first use (~10 ms of start-up otherwise).
let validateMappingList: ValidateFunction | undefined;

const PROTO_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

/**
 * The config file to use (CONTRACT.md §2): `--config`, else `$HOOKRELAY_CONFIG`, else
 * `./hookrelay.yaml`. `fallback` (what `npm start` passes: the example config) is used only
 * when none of those was given and `./hookrelay.yaml` does not exist, so a user's own file
 * always wins over the example.
 */
export function resolveConfigPath(flag?: string, env: Env = process.env, fallback?: string): string {
  const chosen = flag || env.HOOKRELAY_CONFIG;
  if (chosen) return chosen;
  return fallback && !existsSync('./hookrelay.yaml') ? fallback : './hookrelay.yaml';
}

/** Command-line settings that take precedence over the file's (`serve --host/--port`). */
export interface ConfigOverrides {
  host?: string;
  port?: number;
}

/**
 * Reads, expands, validates and freezes a config file (`.json` as JSON, anything else as YAML).
 * @throws ConfigError listing every problem found, each with its YAML path.
 */
export function loadConfig(file: string, env: Env = process.env, overrides: ConfigOverrides = {}): LoadedConfig {
  return configFromObject(readConfig(file, overrides), file, env);
}

/**
 * The parsed config file with the command-line overrides applied, before `${VAR}` expansion
 * and validation: what a reload starts from (and what it takes the restart-only keys from).
 * @throws ConfigError when the file cannot be read or parsed.
 */
export function readConfig(file: string, overrides: ConfigOverrides = {}): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file (give --config or set HOOKRELAY_CONFIG)' : (e as Error).message;
    throw new ConfigError([{ path: file, message: `cannot read the config file: ${why}` }]);
  }
  const raw = extname(file).toLowerCase() === '.json' ? parseJson(text, file) : parseYaml(text, file);
  // YAML reads an empty file, one of only comments, or `~` as null. Taken for "no settings",
  // it served defaults: on a reload every mapping went, a new token was generated and later
  // reloads kept defaults for restart-only keys (issue 30). A config file says something.
  if (raw === null || raw === undefined) {
    throw new ConfigError([{ path: file, message: 'the config file holds no settings (it is empty, only comments, or null): write its keys (server, hooks, agent…) as in hookrelay.example.yaml' }]);
  }
  if (!isPlainObject(raw)) throw new ConfigError([{ path: file, message: NOT_A_MAP }]);
  return withOverrides(raw, overrides);
}

const NOT_A_MAP = 'the config must be a map of keys (server, hooks, agent…)';

/**
 * The overrides applied to the parsed file, before validation: `--port 0` or `--host 0.0.0.0`
 * are checked like the file's own values (a non-loopback host still needs a token).
 */
function withOverrides(raw: unknown, { host, port }: ConfigOverrides): unknown {
  if (host === undefined && port === undefined) return raw;
  if (raw !== null && raw !== undefined && !isPlainObject(raw)) return raw; // reported by configFromObject
  const doc = { ...(raw as Obj | undefined) };
  const server = isPlainObject(doc.server) ? { ...doc.server } : {};
  if (host !== undefined) server.host = host;
  if (port !== undefined) server.port = port;
  doc.server = server;
  return doc;
}

/**
 * Builds a {@link LoadedConfig} from an already parsed document, as {@link loadConfig} does
 * after parsing; `file` only locates relative paths (`dataDir`, `hooks.transformsDir`…).
 * @throws ConfigError listing every problem found, each with its YAML path.
 */
export function configFromObject(raw: unknown, file: string, env: Env = process.env): LoadedConfig {
  const { problems, loaded } = inspectConfig(raw, file, env);
  if (!loaded) throw new ConfigError(problems);
  return loaded;
}

/** What {@link inspectConfig} found. */
export interface Inspected {
  /** Every problem of shape and static rules, each with its YAML path. */
  problems: ConfigProblem[];
  /** The frozen config, when there are no problems. */
  loaded?: LoadedConfig;
  /**
   * The config as far as it could be read (defaults applied, mappings normalised, presets
   * appended, paths resolved) even when it has problems, so that the parts whose own shape
   * is right can still be compiled and their problems reported in the same pass.
   */
  draft: Obj;
}

/**
 * Validates a parsed document and collects every problem instead of stopping at the first
 * stage that has one. The document itself is not changed (a reload keeps it).
 */
export function inspectConfig(raw: unknown, file: string, env: Env = process.env): Inspected {
  const abs = resolve(file);
  const baseDir = dirname(abs);
  if (raw !== null && raw !== undefined && !isPlainObject(raw)) {
    return { problems: [{ path: file, message: NOT_A_MAP }], draft: {} };
  }
  const unset: ConfigProblem[] = [];
  const data = prepare(raw ?? {}, env, '', unset) as Obj;
  const problems = [...unset, ...channelConflicts(data.hooks?.mappings, 'hooks.mappings')];
  if (!validateShape(data)) problems.push(...ajvProblems(validateShape.errors, ''));
  const cfg = data as Config;
  checkHooks(cfg, problems);
  problems.push(...credentialProblems(cfg));
  checkRuntime(cfg, problems);
  // Forward mode: chat delivery is the upstream's, with the upstream's providers.
  if (!isForward(cfg)) checkProviders(cfg, problems);
  if (isPlainObject(cfg.store) && cfg.store.kind === 'postgres' && !cfg.store.url) {
    problems.push({ path: 'store.url', message: 'is required with store.kind: postgres, e.g. postgres://user:${PGPASSWORD}@host:5432/hookrelay' });
  }
  if (isPlainObject(cfg.server) && cfg.server.headersTimeoutMs > cfg.server.requestTimeoutMs) {
    problems.push({ path: 'server.requestTimeoutMs', message: `must be at least server.headersTimeoutMs (${cfg.server.headersTimeoutMs}): the headers are part of the request` });
  }
  if (isPlainObject(cfg.server) && Array.isArray(cfg.server.trustedProxies)) {
    const list = new BlockList();
    cfg.server.trustedProxies.forEach((p, i) => {
      if (typeof p !== 'string') return;
      try {
        addTrusted(list, p);
      } catch (err) {
        problems.push({ path: `server.trustedProxies[${i}]`, message: (err as Error).message });
      }
    });
  }
  if (typeof cfg.dataDir === 'string') cfg.dataDir = resolve(baseDir, cfg.dataDir);
  if (isPlainObject(cfg.hooks) && typeof cfg.hooks.transformsDir === 'string') cfg.hooks.transformsDir = resolve(baseDir, cfg.hooks.transformsDir);
  if (problems.length) return { problems: dedupe(problems), draft: data };
  return { problems, draft: data, loaded: deepFreeze({ file: abs, baseDir, config: cfg }) };
}

/** Freezes a value and everything reachable from it; returns it. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
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
 * Expands `${VAR}` in string values (never in keys; `env` null: no expansion) and drops
 * null-valued keys, so that YAML's empty value means "unset" and the default applies. An
 * unset variable without default is a problem at the key's path. A mapping's `schema` keeps
 * its nulls: there `const: null` or `default: null` is the schema's own value, and dropping it
 * would quietly widen what the schema accepts.
 */
function prepare(value: unknown, env: Env | null, path = '', problems: ConfigProblem[] = [], keepNulls = false): unknown {
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
    Object.defineProperty(out, k, { value: prepare(v, env, join(path, k), problems, inSchema), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Validates and normalises a list of mappings (the presets use it too). */
const validateMappings: MappingValidator = (raw, path, idPrefix) => {
  const list = prepare(raw, null); // shipped files: no ${VAR}
  const problems = channelConflicts(list, path);
  validateMappingList ??= ajv.compile({ type: 'array', items: mappingSchema });
  if (!validateMappingList(list)) problems.push(...ajvProblems(validateMappingList.errors, path));
  if (!Array.isArray(list)) return { problems, mappings: [] };
  list.forEach((m, i) => isPlainObject(m) && checkMapping(m, `${path}[${i}]`, `${idPrefix}${i + 1}`, problems));
  return { problems, mappings: list as MappingConfig[] };
};

function checkHooks(cfg: Config, problems: ConfigProblem[]): void {
  const hooks = cfg.hooks as Obj;
  if (!isPlainObject(hooks)) return;
  if (typeof hooks.path === 'string') {
    const p = hooks.path.replace(/\/+$/, '');
    if (!hooks.path.startsWith('/')) problems.push({ path: 'hooks.path', message: `must start with "/" (got "${hooks.path}")` });
    else if (p === '') problems.push({ path: 'hooks.path', message: '"/" is refused: give the hooks their own base path, e.g. /hooks' });
    else if (/[\s?#]/.test(p)) problems.push({ path: 'hooks.path', message: 'must be a plain URL path (no spaces, "?" or "#")' });
    else if (normalPath(p) !== p) problems.push({ path: 'hooks.path', message: `requests are matched on their normalised path, which this can never be: write it as "${normalPath(p) ?? '/hooks'}"` });
    else hooks.path = p;
  }
  const prefixes: string[] | undefined = Array.isArray(hooks.allowedSessionKeyPrefixes)
    ? hooks.allowedSessionKeyPrefixes.filter((p: unknown) => typeof p === 'string').map((p: string) => p.toLowerCase())
    : undefined;
  // The same rule as a session key in a request (CONTRACT.md §5); the prefix check below
  // quotes the key, so it only runs on a key that passed this one.
  const keyRule = typeof hooks.defaultSessionKey === 'string' && hooks.defaultSessionKey ? sessionKeyRule(hooks.defaultSessionKey) : undefined;
  if (keyRule) problems.push({ path: 'hooks.defaultSessionKey', message: keyRule });
  if (hooks.tokens !== undefined && hooks.token) problems.push({ path: 'hooks.tokens', message: 'give hooks.token or hooks.tokens (a list, for rotation), not both' });
  const imap = isPlainObject(hooks.email) && isPlainObject(hooks.email.imap) ? hooks.email.imap : undefined;
  if (imap && (imap.passwordEnv === undefined) === (imap.passwordFile === undefined)) {
    problems.push({ path: 'hooks.email.imap.passwordEnv', message: 'give passwordEnv (the name of an environment variable) or passwordFile (a file holding the password), exactly one' });
  }
  if (prefixes && typeof hooks.defaultSessionKey === 'string') {
    const shown = JSON.stringify(hooks.allowedSessionKeyPrefixes);
    if (!hooks.defaultSessionKey && !prefixes.some((p) => 'hook:'.startsWith(p))) {
      problems.push({ path: 'hooks.allowedSessionKeyPrefixes', message: `must admit keys starting "hook:" (runs without a session key get hook:<uuid>), or set hooks.defaultSessionKey; got ${shown}` });
    } else if (hooks.defaultSessionKey && !keyRule && !prefixes.some((p) => hooks.defaultSessionKey.toLowerCase().startsWith(p))) {
      problems.push({ path: 'hooks.defaultSessionKey', message: `"${hooks.defaultSessionKey}" does not start with any of hooks.allowedSessionKeyPrefixes ${shown}` });
    }
  }
  const mappings: unknown[] = Array.isArray(hooks.mappings) ? hooks.mappings : [];
  const ids = new Map<string, string>();
  mappings.forEach((m, i) => {
    if (!isPlainObject(m)) return;
    const where = `hooks.mappings[${i}]`;
    checkMapping(m, where, `mapping-${i + 1}`, problems);
    if (typeof m.id !== 'string') return;
    if (ids.has(m.id)) problems.push({ path: `${where}.id`, message: `duplicate mapping id "${m.id}" (also ${ids.get(m.id)})` });
    else ids.set(m.id, where);
  });

  const presets = loadPresets(Array.isArray(hooks.presets) ? hooks.presets.filter((n: unknown) => typeof n === 'string') : [], validateMappings);
  problems.push(...presets.problems);
  for (const m of presets.mappings) {
    const taken = ids.get(m.id);
    if (taken) problems.push({ path: `${taken}.id`, message: `mapping id "${m.id}" is also used by a preset in hooks.presets; choose another id` });
    ids.set(m.id, taken ?? 'hooks.presets');
  }
  // User mappings first: the first match wins, so a user mapping for a preset's path overrides it.
  const userCount = mappings.length;
  if (Array.isArray(hooks.mappings)) hooks.mappings.push(...presets.mappings);
  if (prefixes) {
    (Array.isArray(hooks.mappings) ? hooks.mappings : []).forEach((m: unknown, i: number) => {
      if (!isPlainObject(m) || !sessionKeyNeverAllowed(m, prefixes)) return;
      problems.push(i < userCount
        ? { path: `hooks.mappings[${i}].sessionKey`, message: `"${m.sessionKey}" can never start with one of hooks.allowedSessionKeyPrefixes` }
        : { path: 'hooks.allowedSessionKeyPrefixes', message: `admits no session key of preset mapping "${m.id}" ("${m.sessionKey}")` });
    });
  }
}

/** Mapping-level checks and normalisation: ids, `channel`, `match.path`, `forEach`, templates. */
function checkMapping(m: Obj, path: string, defaultId: string, problems: ConfigProblem[]): void {
  m.id ??= defaultId;
  if (m.channel !== undefined) {
    m.provider = m.channel; // a conflicting provider was reported before validation
    delete m.channel;
  }
  if (isPlainObject(m.match) && typeof m.match.path === 'string') {
    m.match.path = m.match.path.replace(/^\/+|\/+$/g, '');
    const normal = normalPath(`/${m.match.path}`)?.slice(1);
    if (!m.match.path) problems.push({ path: `${path}.match.path`, message: 'must name the hook, e.g. github for POST {hooks.path}/github' });
    // The gate decodes percent-escapes and drops empty and dot segments before matching.
    else if (normal !== m.match.path) problems.push({ path: `${path}.match.path`, message: `requests are matched on their normalised path, so this never matches: write it as "${normal ?? ''}"` });
    // The names the gate routes to the built-in endpoints (README: reserved names), whose
    // mapping could never be reached: wake, agent, events, runs and runs/ID.
    else if (routeKind(m.match.path) !== 'mapped') problems.push({ path: `${path}.match.path`, message: `"${m.match.path}" is a built-in endpoint ({hooks.path}/${m.match.path}); choose another name` });
  }
  if (isPlainObject(m.match) && isPlainObject(m.match.headers)) m.match.headers = headerConditions(m.match.headers, `${path}.match.headers`, problems);
  // A reply for an explicit provider needs its recipient; only a transform could still give
  // one, per request (`last` finds its own, CONTRACT.md §5).
  if (m.deliver === true && typeof m.provider === 'string' && m.provider !== 'last' && m.to === undefined && m.transform === undefined) {
    problems.push({ path: `${path}.to`, message: `is required with deliver: true and provider: ${m.provider} (or use provider: last, or a transform that returns to)` });
  }
  problems.push(...verifyProblems(m, path));
  if (typeof m.forEach === 'string') {
    if (/[.[\]]/.test(m.forEach)) problems.push({ path: `${path}.forEach`, message: `must be a top-level key of the payload, not a path (got "${m.forEach}")` });
    else if (PROTO_KEYS.has(m.forEach)) problems.push({ path: `${path}.forEach`, message: `"${m.forEach}" is not allowed as a key` });
  }
  const needs = m.action === 'wake' ? 'textTemplate' : 'messageTemplate';
  if ((m.action === 'wake' || m.action === 'agent') && m[needs] === undefined && m.transform === undefined) {
    problems.push({ path: `${path}.${needs}`, message: `${m.action === 'wake' ? 'a wake' : 'an agent'} mapping needs ${needs} or transform` });
  }
  const module = m.transform?.module;
  if (typeof module === 'string') {
    const problem = transformPathProblem(module);
    if (problem) problems.push({ path: `${path}.transform.module`, message: problem });
  }
}

/**
 * `match.headers` with lower-case names, as requests carry them. Two spellings of one name,
 * or a token header (removed before mappings see a request, so it could never match), are
 * problems.
 */
function headerConditions(headers: Obj, path: string, problems: ConfigProblem[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (SECRET_HEADERS.includes(lower)) problems.push({ path: join(path, name), message: 'credential headers never reach mappings, so this can never match; match on another header' });
    else if (Object.hasOwn(out, lower)) problems.push({ path: join(path, name), message: `"${lower}" is given twice (header names are case-insensitive)` });
    else Object.defineProperty(out, lower, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** The path as the gate matches requests on it (routes-table.ts), or undefined when none could be. */
function normalPath(path: string): string | undefined {
  const target = parseTarget(path);
  return target && target.query === '' ? target.path : undefined;
}

/**
 * A handlebars sessionKey whose literal start no allowed prefix can match would fail on every
 * request; say so at load instead.
 */
function sessionKeyNeverAllowed(m: Obj, prefixes: string[]): boolean {
  if (typeof m.sessionKey !== 'string' || m.engine !== 'handlebars') return false;
  const literal = m.sessionKey.split('{{')[0].toLowerCase();
  return !prefixes.some((p) => literal.startsWith(p) || p.startsWith(literal));
}


/**
 * A provider named in the config itself must be able to deliver (CONTRACT.md §9): a mapping's
 * `provider` (or `channel`, folded into it by now) and `session.provider`. `last` is decided
 * per run and is not checked here.
 */
function checkProviders(cfg: Config, problems: ConfigProblem[]): void {
  const providers = isPlainObject(cfg.providers) ? cfg.providers : {};
  const check = (name: unknown, path: string) => {
    const problem = typeof name === 'string' && name !== 'last' ? unconfiguredProvider(name, providers) : undefined;
    if (problem) problems.push({ path, message: `provider ${name} is not configured: ${problem}` });
  };
  const mappings: unknown[] = isPlainObject(cfg.hooks) && Array.isArray(cfg.hooks.mappings) ? cfg.hooks.mappings : [];
  mappings.forEach((m, i) => isPlainObject(m) && check(m.provider, `hooks.mappings[${i}].provider`));
  if (isPlainObject(cfg.session)) check(cfg.session.provider, 'session.provider');
}

function isForward(cfg: Config): boolean {
  return isPlainObject(cfg.runtime) && cfg.runtime.kind === 'forward';
}

/** Forward mode needs an upstream to forward to (CONTRACT.md §9): an http(s) URL and its token. */
function checkRuntime(cfg: Config, problems: ConfigProblem[]): void {
  if (!isForward(cfg) || !isPlainObject(cfg.runtime.forward)) return;
  const { url, token } = cfg.runtime.forward;
  if (url === undefined) problems.push({ path: 'runtime.forward.url', message: 'is required with runtime.kind: forward: the upstream\'s hooks base URL, e.g. http://127.0.0.1:18789/hooks' });
  else if (typeof url === 'string' && !isHttpUrl(url)) problems.push({ path: 'runtime.forward.url', message: 'must be an http:// or https:// URL, e.g. http://127.0.0.1:18789/hooks' });
  if (token === '') problems.push({ path: 'runtime.forward.token', message: 'is required with runtime.kind: forward: the upstream\'s hooks token' });
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** Two spellings of one key in a mapping: `channel` is only an alias of `provider`. */
function channelConflicts(mappings: unknown, path: string): ConfigProblem[] {
  if (!Array.isArray(mappings)) return [];
  return mappings.flatMap((m, i) => (isPlainObject(m) && m.channel !== undefined && m.provider !== undefined
    ? [{ path: `${path}[${i}].channel`, message: 'give provider or channel (its alias), not both' }]
    : []));
}

/** ajv errors as problems with YAML paths and messages that say what to change. */
function ajvProblems(errors: ErrorObject[] | null | undefined, prefix: string): ConfigProblem[] {
  return withoutBranchMisses(errors ?? []).map((e) => {
    const path = yamlPath(e.instancePath, prefix);
    const key = path.split(/[.[]/).pop() ?? '';
    switch (e.keyword) {
      case 'additionalProperties': {
        const bad = (e.params as { additionalProperty: string }).additionalProperty;
        const known = Object.keys((e.parentSchema as SchemaNode).properties ?? {});
        const hint = closest(bad, known);
        return { path: join(path, bad), message: `unknown key "${bad}"; ${hint ? `did you mean "${hint}"?` : `allowed keys: ${known.join(', ')}`}` };
      }
      case 'required':
        return { path: join(path, (e.params as { missingProperty: string }).missingProperty), message: 'is required' };
      case 'enum': {
        const allowed = (e.params as { allowedValues: unknown[] }).allowedValues.join(', ');
        return { path, message: `must be one of ${allowed}${SECRET_KEYS.has(key) ? '' : ` (got ${show(e.data)})`}` };
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

/**
 * An `anyOf` (a `hooks.tokens` entry: a string or a map) reports every branch's misses. Those
 * of the branch whose type the value has are what to fix; the other branches' type misses
 * are noise, and the `anyOf` summary is only kept when nothing more precise is left.
 */
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
    out = /^\d+$/.test(seg) ? `${out}[${seg}]` : join(out, seg);
  }
  return out;
}

function join(path: string, key: string): string {
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
const dedupe = (ps: ConfigProblem[]) => ps.filter((p, i) => ps.findIndex((q) => q.path === p.path && q.message === p.message) === i);

function isPlainObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

