import { pino } from 'pino';

// sonic-boom (https://github.com/pinojs/sonic-boom#API) writes off the event loop; past
// `maxLength` unwritten bytes a line is dropped with a 'drop' event, so a stalled reader never holds up a request.
const MIN_LENGTH = 4096;
const FLUSH_MS = 100;
/** No write completed for this long: the reader has stopped reading, and waiting on it would never end. */
const STALL_MS = 1000;

export type LogOutput = ReturnType<typeof stderrOutput>;

/** stderr through sonic-boom with at most `bufferBytes` waiting; `onCaughtUp(n)` once drained after `n` lines were dropped. */
export function stderrOutput(o: { bufferBytes: number; onCaughtUp: (dropped: number) => void }) {
  const destination = pino.destination({ dest: 2, sync: false, minLength: MIN_LENGTH, maxLength: o.bufferBytes, periodicFlush: FLUSH_MS });
  let dropped = 0;
  let unreported = 0;
  let broken = false;
  let lastWrite = Date.now();
  destination.on('drop', () => {
    dropped++;
    unreported++;
  });
  destination.on('write', () => {
    lastWrite = Date.now();
  });
  destination.on('drain', () => {
    if (unreported === 0) return;
    const n = unreported;
    unreported = 0;
    setImmediate(() => o.onCaughtUp(n));
  });
  // pino stops writing on EPIPE (the reader went away); any other write error (EBADF: stderr
  // closed) would be thrown from the event. Either way what follows is lost.
  destination.on('error', () => {
    broken = true;
  });
  // Stalled: the event loop kept turning and still no write completed (a blocked loop is not the reader's fault).
  let lastTurn = Date.now();
  const turns = setInterval(() => {
    lastTurn = Date.now();
  }, FLUSH_MS).unref();
  const stalled = () => broken || lastTurn - lastWrite > STALL_MS;
  // pino's exit hook writes what waits synchronously, which on a stalled reader never ends; it
  // skips a destroyed destination.
  const onExit = () => {
    if (stalled()) destination.destroy();
  };
  process.prependListener('exit', onExit);
  destination.on('close', () => {
    clearInterval(turns);
    process.removeListener('exit', onExit);
  });
  return {
    destination,
    /** Lines dropped so far because `bufferBytes` were waiting (or stderr failed). */
    dropped: () => dropped,
    /** Resolves once the lines logged so far are written, or once the reader has stalled (the rest is given up). */
    flush: () =>
      new Promise<void>((resolve) => {
        const watch = setInterval(() => {
          if (!stalled()) return;
          clearInterval(watch);
          destination.destroy();
          resolve();
        }, 50);
        destination.flush(() => {
          clearInterval(watch);
          resolve();
        });
      }),
  };
}
