import type { Config, LoadedConfig } from './config/types.js';
import { ConfigError } from './config/errors.js';
import type { Logger } from './log.js';
import { createEngine } from './engine/engine.js';
import { createRuntime } from './dispatch/runtime.js';
import { listen, type Listener } from './http/server.js';
import { openStore } from './store/open.js';

export interface Running {
  listener: Listener;
  /** Graceful stop: stop accepting, drain requests, persist or finish runs, close the store. */
  stop(): Promise<void>;
}

/**
 * The composition root: config → engine (compiled at load) → store → runtime → listener.
 * Startup order matters: the listener opens last, so nothing is accepted before the store
 * is open and interrupted runs are recovered.
 */
export async function start(loaded: LoadedConfig, log: Logger): Promise<Running> {
  const config = loaded.config;
  const engine = await createEngine(config);
  const store = await openStore(config, log);
  const runtime = createRuntime({ config, store, log });
  await runtime.start();
  const listener = await listen(
    config,
    {
      engine,
      dispatch: (actions, claims) => runtime.dispatchKeyed(actions, claims ?? []),
      store,
      onDropped: (mappingId, dropped) =>
        log.warn({ mapping: mappingId, dropped, maxFanOut: config.hooks.maxFanOut }, 'forEach items past hooks.maxFanOut dropped'),
    },
    log,
  ).catch(async (err: NodeJS.ErrnoException) => {
    await runtime.stop();
    await store.close();
    await engine.close();
    throw listenProblem(err, config);
  });
  let stopping: Promise<void> | undefined;
  return {
    listener,
    stop: () =>
      (stopping ??= (async () => {
        await listener.close();
        await runtime.stop();
        await store.close();
        await engine.close();
      })()),
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
export async function serve(loaded: LoadedConfig, log: Logger, io: { out: (line: string) => void }): Promise<void> {
  const t0 = performance.now();
  const running = await start(loaded, log);
  const { config } = loaded;
  const ms = Math.round(performance.now() - t0);
  io.out(`hookrelay listening on ${running.listener.url}${config.hooks.enabled ? ` (hooks at ${config.hooks.path})` : ' (hooks disabled)'}, ready in ${ms} ms`);
  if (loaded.generatedTokenFile) {
    io.out(`no hooks.token configured: using the token in ${loaded.generatedTokenFile} (mode 0600). Send it as "Authorization: Bearer <token>".`);
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
}
