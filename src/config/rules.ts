import { BlockList } from 'node:net';
import { addTrusted } from '../address-rules.js';
import { callbackUrlProblem, compileHostRule } from '../callback-url.js';
import { parseTarget, routeKind } from '../request-target.js';
import { transformPathProblem } from '../transform-module-path.js';
import { credentialProblems } from './credentials.js';
import type { ConfigProblem } from './errors.js';
import { loadPresets, type MappingValidator } from './presets.js';
import { joinPath } from './problems.js';
import { isPlainObject, type Obj } from './read.js';
import type { SchemaNode } from '../schema-node.js';
import { sessionKeyRule, unconfiguredProvider, wholeSeconds } from './schema.js';
import type { Config } from './types.js';
import { publicUrlProblems, verifyProblems } from './verify.js';
import { answerProblems } from './answer-rules.js';

/** What JSON Schema cannot say (one key against another, an unroutable path, a provider that cannot deliver); some rules also normalise what they check. */

const PROTO_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

export function checkRules(cfg: Config, problems: ConfigProblem[], validateMappings: MappingValidator): void {
  if (isPlainObject(cfg.agent) && typeof cfg.agent.timeoutSeconds === 'number') cfg.agent.timeoutSeconds = wholeSeconds(cfg.agent.timeoutSeconds);
  checkHooks(cfg, problems, validateMappings);
  problems.push(...credentialProblems(cfg));
  problems.push(...callbackProblems(cfg));
  checkRuntime(cfg, problems);
  // Forward mode: chat delivery is the upstream's, with the upstream's providers.
  if (!isForward(cfg)) checkProviders(cfg, problems);
  checkServer(cfg, problems);
}

function checkServer(cfg: Config, problems: ConfigProblem[]): void {
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
}

function checkHooks(cfg: Config, problems: ConfigProblem[], validateMappings: MappingValidator): void {
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
  // The session-key rule of a request (CONTRACT.md §5) first: the prefix check below quotes the key.
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
  problems.push(...publicUrlProblems(mappings.slice(0, userCount), isPlainObject(cfg.server) ? cfg.server.publicUrl : undefined));
  if (prefixes) {
    (Array.isArray(hooks.mappings) ? hooks.mappings : []).forEach((m: unknown, i: number) => {
      if (!isPlainObject(m) || !sessionKeyNeverAllowed(m, prefixes, i >= userCount)) return;
      problems.push(i < userCount
        ? { path: `hooks.mappings[${i}].sessionKey`, message: `"${m.sessionKey}" can never start with one of hooks.allowedSessionKeyPrefixes` }
        : { path: 'hooks.allowedSessionKeyPrefixes', message: `admits no session key of preset mapping "${m.id}" ("${m.sessionKey}")` });
    });
  }
}

export function checkMapping(m: Obj, path: string, defaultId: string, problems: ConfigProblem[]): void {
  m.id ??= defaultId;
  if (typeof m.timeoutSeconds === 'number') m.timeoutSeconds = wholeSeconds(m.timeoutSeconds);
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
    // The gate routes these names to the built-in endpoints, so such a mapping could never be reached.
    else if (routeKind(m.match.path) !== 'mapped') problems.push({ path: `${path}.match.path`, message: `"${m.match.path}" is a built-in endpoint ({hooks.path}/${m.match.path}); choose another name` });
  }
  if (isPlainObject(m.match) && isPlainObject(m.match.headers)) m.match.headers = headerConditions(m.match.headers, `${path}.match.headers`, problems);
  // A reply for an explicit provider needs its recipient; `last` finds its own (CONTRACT.md §5).
  if (m.deliver === true && typeof m.provider === 'string' && m.provider !== 'last' && m.to === undefined && m.transform === undefined) {
    problems.push({ path: `${path}.to`, message: `is required with deliver: true and provider: ${m.provider} (or use provider: last, or a transform that returns to)` });
  }
  problems.push(...verifyProblems(m, path));
  if (m.maxBodyBytes !== undefined && (!isPlainObject(m.match) || typeof m.match.path !== 'string' || m.match.path === '')) {
    problems.push({ path: `${path}.match.path`, message: 'is required with maxBodyBytes: the body limit is decided from the request path (POST {hooks.path}/NAME) before the body is read' });
  }
  problems.push(...answerProblems(m, path));
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

/** Lower-case names, as requests carry them; a credential header is matched on the request as it came, though no template sees it. */
function headerConditions(headers: Obj, path: string, problems: ConfigProblem[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (Object.hasOwn(out, lower)) problems.push({ path: joinPath(path, name), message: `"${lower}" is given twice (header names are case-insensitive)` });
    else Object.defineProperty(out, lower, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** The path as the gate matches requests on it (src/request-target.ts), or undefined when none could be. */
function normalPath(path: string): string | undefined {
  const target = parseTarget(path);
  return target && target.query === '' ? target.path : undefined;
}

/** A handlebars sessionKey whose literal start no allowed prefix can match would fail on every request: say so at load. */
function sessionKeyNeverAllowed(m: Obj, prefixes: string[], preset: boolean): boolean {
  if (typeof m.sessionKey !== 'string') return false;
  const starts = m.engine === 'handlebars' ? [m.sessionKey.split('{{')[0]]
    // A preset's JSONata key: each branch starts with a string literal (`"hook:email:" & threadId`).
    : preset && m.engine === 'jsonata' ? [...m.sessionKey.matchAll(/(?:^|[?:(])\s*"([^"]*)"\s*&/g)].map((g) => g[1]!)
      : [];
  if (starts.length === 0) return false;
  return starts.every((start) => !prefixes.some((p) => start.toLowerCase().startsWith(p) || p.startsWith(start.toLowerCase())));
}

/** A provider named in the config itself must be able to deliver (CONTRACT.md §9); `last` is decided per run. */
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

/** A mapping's `callback` needs a secret, a URL a request's `callbackUrl` could name, an agent run, and a local runtime (in forward mode the run never ends here). */
function callbackProblems(cfg: Config): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (!isPlainObject(cfg.hooks)) return problems;
  const hosts = Array.isArray(cfg.hooks.callbackHosts) ? cfg.hooks.callbackHosts : [];
  hosts.forEach((entry, i) => {
    try {
      compileHostRule([entry]);
    } catch (err) {
      problems.push({ path: `hooks.callbackHosts[${i}]`, message: (err as Error).message });
    }
  });
  const rule = problems.length === 0 ? compileHostRule(hosts) : undefined;
  (Array.isArray(cfg.hooks.mappings) ? cfg.hooks.mappings : []).forEach((m, i) => {
    if (!isPlainObject(m) || !isPlainObject(m.callback)) return;
    const path = `hooks.mappings[${i}].callback`;
    if (m.action === 'wake') problems.push({ path, message: 'is for agent mappings: a wake has no run to report on' });
    if (!cfg.hooks.callbackSecret) problems.push({ path, message: 'needs hooks.callbackSecret (a whsec_ secret) to sign callbacks with' });
    if (isForward(cfg)) problems.push({ path, message: 'is not available with runtime.kind: forward: the run is carried out upstream and never ends here' });
    const problem = rule && typeof m.callback.url === 'string' ? callbackUrlProblem(m.callback.url, rule) : undefined;
    if (problem) problems.push({ path: `${path}.url`, message: problem });
  });
  return problems;
}

function isForward(cfg: Config): boolean {
  return isPlainObject(cfg.runtime) && cfg.runtime.kind === 'forward';
}

function checkRuntime(cfg: Config, problems: ConfigProblem[]): void {
  if (!isForward(cfg) || !isPlainObject(cfg.runtime.forward)) return;
  const { url, token } = cfg.runtime.forward;
  if (url === undefined) problems.push({ path: 'runtime.forward.url', message: 'is required with runtime.kind: forward: the upstream\'s hooks base URL, e.g. http://127.0.0.1:18789/hooks' });
  if (token === '') problems.push({ path: 'runtime.forward.token', message: 'is required with runtime.kind: forward: the upstream\'s hooks token' });
}

/** `localhost:11434` is a URL whose scheme is `localhost:`; a value from a `${VAR}` is never echoed. */
export function urlProblems(node: SchemaNode, value: unknown, raw: unknown, path = '', problems: ConfigProblem[] = []): ConfigProblem[] {
  if (node.url) {
    if (typeof value === 'string' && value !== '' && !isHttpUrl(value)) {
      const guess = `http://${value}`;
      const literal = typeof raw === 'string' && !raw.includes('${');
      const hint = literal && !value.includes('://') && isHttpUrl(guess) ? `: did you mean ${guess}?` : '';
      problems.push({ path, message: `must be an http:// or https:// URL${hint}` });
    }
  } else if (Array.isArray(value)) {
    if (node.items) value.forEach((v, i) => urlProblems(node.items!, v, Array.isArray(raw) ? raw[i] : undefined, `${path}[${i}]`, problems));
  } else if (isPlainObject(value)) {
    const rest = typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
    for (const [k, v] of Object.entries(value)) {
      const child = node.properties && Object.hasOwn(node.properties, k) ? node.properties[k] : rest;
      if (child) urlProblems(child, v, isPlainObject(raw) && Object.hasOwn(raw, k) ? raw[k] : undefined, joinPath(path, k), problems);
    }
  }
  return problems;
}

export function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** Two spellings of one key in a mapping: `channel` is only an alias of `provider`. */
export function channelConflicts(mappings: unknown, path: string): ConfigProblem[] {
  if (!Array.isArray(mappings)) return [];
  return mappings.flatMap((m, i) => (isPlainObject(m) && m.channel !== undefined && m.provider !== undefined
    ? [{ path: `${path}[${i}].channel`, message: 'give provider or channel (its alias), not both' }]
    : []));
}
