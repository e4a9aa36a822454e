import type { Config, LoadedConfig } from './config/types.js';
import { ConfigError } from './config/errors.js';
import { flushLog, logDropped, type Logger } from './log.js';
import { createEngine, type Engine, type WhenFailure } from './engine/engine.js';
import { createReloader } from './reload.js';
import { createRuntime } from './dispatch/runtime.js';
import { createRequestLog } from './store/request-log.js';
import { listen } from './http/server.js';
import { openStore } from './store/open.js';
import { createMetrics } from './metrics.js';
import { consoleFactory } from './console/console.js';
import type { AdminTokenAt } from './console/pages.js';
import { healthzAnswers } from './ready-check.js';
import { uuidv7 } from './ids.js';
import { compileHostRule } from './callback-url.js';
import { failureFields } from './failure.js';

export type Running = Awaited<ReturnType<typeof start>>;

export interface StartOptions {
  engine?: Engine;
  finish?: (loaded: LoadedConfig) => LoadedConfig;
  /** PostgreSQL: made first, so that every log line names it. */
  instanceId?: string;
  /** What sets the log level over the config's `log.level`, which a reload then does not change. */
  levelFixedBy?: string;
}

/**
 * The composition root. The listener opens last, so nothing is accepted before the store is open
 * and interrupted runs are recovered; a reload replaces only the engine and the hooks settings.
 */
export async function start(loaded: LoadedConfig, log: Logger, opts: StartOptions = {}) {
  const config = loaded.config;
  let engine = opts.engine ?? (await createEngine(config));
  const metrics = config.server.metrics ? createMetrics(() => store.countRuns(), () => logDropped(log), () => store.countHeld()) : undefined;
  const store = await openStore(config, log, metrics, opts.instanceId);
  // The callback hosts a reload serves: a callback queued before the list was narrowed is checked against the new one.
  let callbackHosts = compileHostRule(config.hooks.callbackHosts);
  const runtime = createRuntime({ config, store, log, metrics, callbackHosts: () => callbackHosts });
  await runtime.start();
  const requestLog = createRequestLog(store, { log, onDropped: metrics && ((rows) => metrics.requestLogDropped(rows)) });
  let current = loaded; // the config being served: a reload may change where its admin token is
  const consoleMount = config.server.console ? consoleFactory(() => adminTokenAt(current)) : undefined;
  const deps = (current: Engine) => ({
    engine: current,
    console: consoleMount,
    dispatch: runtime,
    store,
    metrics,
    requestLog,
    onDropped: (mappingId: string, dropped: number) =>
      log.warn({ mapping: mappingId, dropped, maxFanOut: config.hooks.maxFanOut }, 'forEach items past hooks.maxFanOut dropped'),
    // Said without payload data (engine/failure.ts, CONTRACT.md §16).
    onWhenFailed: (f: WhenFailure) =>
      log.warn({ ...failureFields(f), code: f.code }, 'match.when failed on a request; the mapping counted as not matching'),
  });
  const closeAll = async () => {
    await requestLog.close();
    await runtime.stop();
    await store.close();
    await engine.close();
  };
  const listener = await listen(config, deps(engine), log).catch(async (err: NodeJS.ErrnoException) => {
    await closeAll();
    throw listenProblem(err, config);
  });
  const retiring = new Set<Promise<void>>();
  const reloader = createReloader({
    loaded,
    finish: opts.finish,
    log,
    levelFixedBy: opts.levelFixedBy,
    swap: async (next, nextEngine) => {
      const old = engine;
      engine = nextEngine;
      current = next;
      callbackHosts = compileHostRule(next.config.hooks.callbackHosts);
      const done = listener.swap(next.config, deps(nextEngine)).then(() => old.close());
      retiring.add(done);
      await done.finally(() => retiring.delete(done));
    },
  });
  let stopping: Promise<void> | undefined;
  return {
    listener,
    /** README "Reloading the config"; false when refused. */
    reload: reloader.reload,
    /** Stop accepting, drain requests, persist or finish runs, close the store. */
    stop: (): Promise<void> =>
      (stopping ??= (async () => {
        await reloader.close();
        // Requests waiting for a run (?wait) answer now, so that the listener drains at once.
        runtime.endWaits();
        await listener.close();
        await Promise.all(retiring);
        await closeAll();
      })()),
    watch: reloader.watch,
  };
}

function adminTokenAt(l: LoadedConfig): AdminTokenAt {
  if (l.generatedAdminTokenFile) return { file: l.generatedAdminTokenFile };
  return { key: l.config.server.adminTokens ? 'server.adminTokens' : 'server.adminToken', configFile: l.file };
}

/** A port in use or not ours to take: say which key to change. */
function listenProblem(err: NodeJS.ErrnoException, config: Readonly<Config>): Error {
  const where = `${config.server.host}:${config.server.port}`;
  if (err.code === 'EADDRINUSE') return new ConfigError([{ path: 'server.port', message: `${where} is already in use: stop the other process or choose another port` }]);
  if (err.code === 'EACCES') return new ConfigError([{ path: 'server.port', message: `not allowed to listen on ${where}: choose a port above 1023` }]);
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') return new ConfigError([{ path: 'server.host', message: `${config.server.host} is not an address of this machine` }]);
  return err;
}

/** Says which config, starts, says where once `/healthz` answers, stops cleanly on SIGINT/SIGTERM. */
export async function serve(loaded: LoadedConfig, log: Logger, io: { out: (line: string) => void }, opts: StartOptions & { from?: string } = {}): Promise<void> {
  const t0 = performance.now();
  // Several instances on one PostgreSQL database: every line of this one names it.
  const instanceId = loaded.config.store.kind === 'postgres' ? uuidv7() : undefined;
  if (instanceId) log = log.child({ instance: instanceId });
  io.out(`hookrelay: config ${loaded.file}${opts.from ? ` (${opts.from})` : ''}${instanceId ? `; instance ${instanceId} on PostgreSQL` : ''}`);
  log.info({ file: loaded.file, from: opts.from }, 'config loaded');
  const running = await start(loaded, log, { ...opts, instanceId });
  const { config } = loaded;

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
        void flushLog(log).then(() => process.exit(0));
      },
      (err) => {
        log.error({ err }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', () => void running.reload().catch((err) => log.error({ err }, 'config reload failed')));
  running.watch();

  // "ready" is a promise to whoever watches for it: only once /healthz answers.
  if (!(await healthzAnswers(running.listener.url))) log.warn({ url: running.listener.url }, 'listening, but /healthz did not answer within 30 s');
  const ms = Math.round(performance.now() - t0);
  io.out(`hookrelay listening on ${running.listener.url}${config.hooks.enabled ? ` (hooks at ${config.hooks.path}${config.server.console ? `, console at ${running.listener.url}/console/` : ''})` : ' (hooks disabled)'}, ready in ${ms} ms`);
  if (loaded.generatedTokenFile) {
    io.out(`no hooks.token configured: using the token in ${loaded.generatedTokenFile} (mode 0600). Send it as "Authorization: Bearer <token>".`);
  }
  if (loaded.generatedAdminTokenFile) {
    io.out(`no server.adminToken configured: using the admin token in ${loaded.generatedAdminTokenFile} (mode 0600). It reads ${config.hooks.path}/events and /runs, /metrics and signs into the console; the hooks token does not.`);
  }
  log.info({ url: running.listener.url, mappings: config.hooks.mappings.length, readyMs: ms }, 'listening');
}
