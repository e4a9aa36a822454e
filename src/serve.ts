import type { Config, LoadedConfig } from './config/types.js';
import { ConfigError } from './config/errors.js';
import type { Logger } from './log.js';
import { createEngine, type Engine, type WhenFailure } from './engine/engine.js';
import { createReloader } from './reload.js';
import { createRuntime } from './dispatch/runtime.js';
import { createRequestLog } from './store/request-log.js';
import { listen, type Listener } from './http/server.js';
import { openStore } from './store/open.js';
import { createMetrics } from './metrics.js';
import { consoleFactory } from './console/console.js';

export interface Running {
  listener: Listener;
  /** Validates and compiles the config file again and swaps it in (README "Reloading the config"); false when refused. */
  reload(): Promise<boolean>;
  /** Reloads on a change of the config file or of a transform module it names (`serve` turns it on). */
  watch(): void;
  /** Graceful stop: stop accepting, drain requests, persist or finish runs, close the store. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** The engine already compiled from `loaded` (compile-config.ts); else it is compiled here. */
  engine?: Engine;
  /** Last steps before a reloaded config is served (the first-use token). */
  finish?: (loaded: LoadedConfig) => LoadedConfig;
}

/**
 * The composition root: config → engine (compiled at load) → store → runtime → listener.
 * Startup order matters: the listener opens last, so nothing is accepted before the store
 * is open and interrupted runs are recovered. A reload replaces the engine and the listener's
 * hooks settings; the store and the runtime keep the config they started with.
 */
export async function start(loaded: LoadedConfig, log: Logger, opts: StartOptions = {}): Promise<Running> {
  const config = loaded.config;
  let engine = opts.engine ?? (await createEngine(config));
  // Made before the store, which reports its commits to it; it reads the store only when scraped.
  const metrics = config.server.metrics ? createMetrics(() => store.countRuns()) : undefined;
  const store = await openStore(config, log, metrics);
  const runtime = createRuntime({ config, store, log, metrics });
  await runtime.start();
  // Rows of requests that no accept committed, written off the request path (store/request-log.ts).
  const requestLog = createRequestLog(store, { log, onDropped: metrics && ((rows) => metrics.requestLogDropped(rows)) });
  // The web console is mounted on the listener, which does not import it (http/server.ts ConsoleFactory).
  const consoleMount = config.server.console ? consoleFactory() : undefined;
  const deps = (current: Engine) => ({
    engine: current,
    console: consoleMount,
    // The listener prepares its actions, builds from them what it commits, and hands that to commit (http/accept.ts).
    dispatch: runtime,
    store,
    metrics,
    requestLog,
    onDropped: (mappingId: string, dropped: number) =>
      log.warn({ mapping: mappingId, dropped, maxFanOut: config.hooks.maxFanOut }, 'forEach items past hooks.maxFanOut dropped'),
    // The code only: a JSONata message may quote payload values (STYLE.md "expose or log").
    onWhenFailed: (f: WhenFailure) =>
      log.warn({ mapping: f.mappingId, code: f.code }, 'match.when failed on a request; the mapping counted as not matching'),
  });
  const listener = await listen(config, deps(engine), log).catch(async (err: NodeJS.ErrnoException) => {
    await requestLog.close();
    await runtime.stop();
    await store.close();
    await engine.close();
    throw listenProblem(err, config);
  });
  // Old engines whose requests are still finishing; each closes once they have.
  const retiring = new Set<Promise<void>>();
  const reloader = createReloader({
    loaded,
    finish: opts.finish,
    log,
    swap: async (next, nextEngine) => {
      const old = engine;
      engine = nextEngine;
      const done = listener.swap(next.config, deps(nextEngine)).then(() => old.close());
      retiring.add(done);
      await done.finally(() => retiring.delete(done));
    },
  });
  let stopping: Promise<void> | undefined;
  return {
    listener,
    reload: reloader.reload,
    stop: () =>
      (stopping ??= (async () => {
        await reloader.close();
        await listener.close();
        await Promise.all(retiring);
        await requestLog.close();
        await runtime.stop();
        await store.close();
        await engine.close();
      })()),
    watch: reloader.watch,
  };
}

/** A port in use or not ours to take is a configuration problem: say which key to change. */
function listenProblem(err: NodeJS.ErrnoException, config: Readonly<Config>): Error {
  const where = `${config.server.host}:${config.server.port}`;
  if (err.code === 'EADDRINUSE') return new ConfigError([{ path: 'server.port', message: `${where} is already in use: stop the other process or choose another port` }]);
  if (err.code === 'EACCES') return new ConfigError([{ path: 'server.port', message: `not allowed to listen on ${where}: choose a port above 1023` }]);
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') return new ConfigError([{ path: 'server.host', message: `${config.server.host} is not an address of this machine` }]);
  return err;
}

/** `hookrelay serve`: start, say where, and stop cleanly on SIGINT/SIGTERM (exit 0). */
export async function serve(loaded: LoadedConfig, log: Logger, io: { out: (line: string) => void }, opts: StartOptions = {}): Promise<void> {
  const t0 = performance.now();
  const running = await start(loaded, log, opts);
  const { config } = loaded;
  const ms = Math.round(performance.now() - t0);
  io.out(`hookrelay listening on ${running.listener.url}${config.hooks.enabled ? ` (hooks at ${config.hooks.path}${config.server.console ? `, console at ${running.listener.url}/console/` : ''})` : ' (hooks disabled)'}, ready in ${ms} ms`);
  if (loaded.generatedTokenFile) {
    io.out(`no hooks.token configured: using the token in ${loaded.generatedTokenFile} (mode 0600). Send it as "Authorization: Bearer <token>".`);
  }
  if (loaded.generatedAdminTokenFile) {
    io.out(`no server.adminToken configured: using the admin token in ${loaded.generatedAdminTokenFile} (mode 0600). It reads ${config.hooks.path}/events and /runs, /metrics and signs into the console; the hooks token does not.`);
  }
  log.info({ url: running.listener.url, mappings: config.hooks.mappings.length, readyMs: ms }, 'listening');

  let signals = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    if (++signals > 1) {
      log.warn({ signal: sig }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    log.info({ signal: sig }, 'stopping: draining requests and runs');
    running.stop().then(
      () => {
        log.info('stopped');
        log.flush?.();
        process.exit(0);
      },
      (err) => {
        log.error({ err }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // SIGHUP, or a change of the config file or of a transform module it names: reload.
  process.on('SIGHUP', () => void running.reload().catch((err) => log.error({ err }, 'config reload failed')));
  running.watch();
}
