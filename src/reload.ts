import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { compileConfig } from './compile-config.js';
import { ConfigError } from './config/errors.js';
import { inspectConfig } from './config/load.js';
import { isPlainObject, parseConfigText, readConfigText } from './config/read.js';
import type { Config, LoadedConfig } from './config/types.js';
import type { Engine } from './engine/engine.js';
import type { Logger } from './log.js';

/** Editors write a file several times (truncate, write, rename): one reload after they settle. */
const DEBOUNCE_MS = 200;
/** A save still being written may itself parse as a config with fewer mappings: taken once two reads this far apart agree (CONTRACT.md §8). */
const STABLE_MS = 100;

/** Every top-level key but `hooks`, and `hooks.mainSummary`, which the dispatcher was built with. */
const RESTART_ONLY_HOOKS = ['mainSummary'] as const;
/** Token rotation and revocation need no restart; nor does `log.level`. */
const RELOADED_SERVER = ['adminToken', 'adminTokens'] as const;

export interface ReloadOptions {
  loaded: LoadedConfig;
  env?: Record<string, string | undefined>;
  finish?: (loaded: LoadedConfig) => LoadedConfig;
  /** Resolves once requests begun on the old config are done. */
  swap(next: LoadedConfig, engine: Engine): Promise<void>;
  log: Logger;
  /** What sets the log level over `log.level` (`--log-level`, `$HOOKRELAY_LOG_LEVEL`): a reload then keeps it. */
  levelFixedBy?: string;
  wait?: (ms: number) => Promise<void>;
}

/**
 * Hot reload (CONTRACT.md §8): compiled first, then swapped in at once; an invalid config is
 * refused and the old one keeps serving. The old engine is closed only after its requests finish.
 */
export function createReloader(opts: ReloadOptions) {
  const { log } = opts;
  const env = opts.env ?? process.env;
  const wait = opts.wait ?? ((ms: number) => sleep(ms));
  let running = opts.loaded;
  let busy: Promise<boolean> | undefined;
  let again = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let configWatcher: FSWatcher | undefined;
  let transformWatchers: FSWatcher[] = [];

  async function once(): Promise<boolean> {
    let next: { loaded: LoadedConfig; engine: Engine };
    try {
      const text = await stableText();
      if (text === undefined) return false;
      const raw = parseConfigText(text, running.file);
      for (const key of restartOnlyChanges(running.config, inspectConfig(raw, running.file, env).draft)) {
        log.warn({ key }, `config reload: ${key} changed, which needs a restart; keeping the running value`);
      }
      const compiled = await compileConfig(keepRunning(raw, running.config), running.file, env);
      try {
        next = { loaded: opts.finish ? opts.finish(compiled.loaded) : compiled.loaded, engine: compiled.engine };
      } catch (err) {
        await compiled.engine.close();
        throw err;
      }
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      log.error({ problems: err.problems.map((p) => `${p.path}: ${p.message}`) }, 'config reload refused');
      return false;
    }
    const level = next.loaded.config.log.level;
    if (level !== running.config.log.level) {
      if (opts.levelFixedBy !== undefined) log.warn({ key: 'log.level' }, `config reload: log.level changed, but ${opts.levelFixedBy} sets the level; keeping ${log.level}`);
      else log.level = level;
    }
    running = next.loaded;
    log.info({ mappings: running.config.hooks.mappings.length, level: log.level }, 'config reloaded');
    if (configWatcher) watchTransforms();
    await opts.swap(next.loaded, next.engine);
    return true;
  }

  async function stableText(): Promise<string | undefined> {
    let text = readConfigText(running.file);
    for (;;) {
      await wait(STABLE_MS);
      if (closed) return undefined;
      const again = readConfigText(running.file);
      if (again === text) return text;
      text = again;
    }
  }

  /** False when the new config was refused. */
  function reload(): Promise<boolean> {
    if (busy) {
      again = true;
      return busy;
    }
    busy = once().finally(() => {
      busy = undefined;
      if (again && !closed) {
        again = false;
        void reload();
      }
    });
    return busy;
  }

  function soon(): void {
    clearTimeout(timer);
    timer = setTimeout(() => void reload().catch((err) => log.error({ err }, 'config reload failed')), DEBOUNCE_MS);
  }

  /**
   * A directory watch survives editors that replace the file by a rename. Not recursive: Node 20's
   * recursive watch on Linux misses a file replaced by a rename (https://github.com/nodejs/node/issues/48437).
   */
  function watchDir(dir: string, wanted: (name: string) => boolean): FSWatcher | undefined {
    try {
      const w = watch(dir, { persistent: false }, (_event, name) => {
        if (name !== null && wanted(name.toString())) soon();
      });
      w.on('error', (err) => log.warn({ err, dir }, 'config reload: stopped watching a directory'));
      return w;
    } catch (err) {
      log.warn({ err, dir }, 'config reload: cannot watch this directory (SIGHUP still reloads)');
      return undefined;
    }
  }

  function watchTransforms(): void {
    for (const w of transformWatchers) w.close();
    const { hooks } = running.config;
    const byDir = new Map<string, Set<string>>();
    for (const m of hooks.mappings) {
      if (!m.transform) continue;
      const file = path.join(hooks.transformsDir, m.transform.module);
      const names = byDir.get(path.dirname(file)) ?? new Set<string>();
      byDir.set(path.dirname(file), names.add(path.basename(file)));
    }
    transformWatchers = [...byDir].flatMap(([dir, names]) => watchDir(dir, (name) => names.has(name)) ?? []);
  }

  return {
    reload,
    watch() {
      const file = path.basename(running.file);
      configWatcher = watchDir(path.dirname(running.file), (name) => name === file);
      watchTransforms();
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      for (const w of [configWatcher, ...transformWatchers]) w?.close();
      configWatcher = undefined;
      transformWatchers = [];
      await busy?.catch(() => {});
    },
  };
}

function restartOnlyChanges(running: Readonly<Config>, next: Record<string, any>): string[] {
  const out: string[] = [];
  const keys = new Set([...Object.keys(running), ...Object.keys(next)]);
  keys.delete('hooks');
  for (const key of keys) diff((running as Record<string, unknown>)[key], next[key], key, out);
  const hooks = next.hooks !== null && typeof next.hooks === 'object' ? next.hooks : {};
  for (const key of RESTART_ONLY_HOOKS) diff(running.hooks[key], hooks[key], `hooks.${key}`, out);
  return out.filter((at) => at !== 'log.level' && !RELOADED_SERVER.some((key) => at === `server.${key}`));
}

function diff(a: unknown, b: unknown, at: string, out: string[]): void {
  if (isPlainObject(a) && isPlainObject(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) diff(a[key], b[key], `${at}.${key}`, out);
  } else if (JSON.stringify(a) !== JSON.stringify(b)) {
    out.push(at);
  }
}

/** Restart-only keys set to the running values, so the new config is validated against what runs; `${` escaped as they are expanded already. */
function keepRunning(raw: unknown, running: Readonly<Config>): unknown {
  if (!isPlainObject(raw)) return raw;
  const out: Record<string, unknown> = { ...raw };
  for (const [key, value] of Object.entries(running)) if (key !== 'hooks') out[key] = literal(value);
  const server = { ...(out.server as Record<string, unknown>) };
  for (const key of RELOADED_SERVER) {
    delete server[key];
    if (isPlainObject(raw.server) && raw.server[key] !== undefined) server[key] = raw.server[key];
  }
  out.server = server;
  const log = { ...(out.log as Record<string, unknown>) };
  delete log.level;
  if (isPlainObject(raw.log) && raw.log.level !== undefined) log.level = raw.log.level;
  out.log = log;
  if (isPlainObject(raw.hooks)) {
    out.hooks = { ...raw.hooks };
    for (const key of RESTART_ONLY_HOOKS) (out.hooks as Record<string, unknown>)[key] = running.hooks[key];
  }
  return out;
}

function literal(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/\$\{/g, '$${');
  if (Array.isArray(value)) return value.map(literal);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, literal(v)]));
  return value;
}
