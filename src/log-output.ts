import { pino, type DestinationStream } from 'pino';

/**
 * Bytes gathered before a write is started on their own; below it, what an event-loop turn
 * logged is written at the end of that turn (one write for the turn's lines, not one each).
 */
const BATCH_BYTES = 4096;
/** No write completed for this long while lines wait: the reader has stopped reading. */
const STALL_MS = 1000;

/** Where the process's log lines go: stderr, written off the event loop, with a bounded buffer. */
export interface LogOutput {
  /** What pino writes to. */
  readonly stream: DestinationStream;
  /** Lines dropped so far because the buffer was full (or the output failed). */
  dropped(): number;
  /**
   * Resolves once every line accepted so far is written, or once the reader has made no
   * progress for a second (then the rest is given up, so that a stopping process is not held
   * by a reader that stopped reading).
   */
  flush(): Promise<void>;
}

/**
 * The log output of `serve` and the e-mail companion: pino's asynchronous destination
 * (sonic-boom) on `fd`, so that a log line costs the request path an append to a buffer and
 * never a blocking write. A reader that stops draining the pipe (a full pipe, a stalled
 * journald) used to stall the whole gateway on the next line (issue 34); now the buffer
 * fills to `bufferBytes`, further lines are dropped and counted, and `onCaughtUp(n)` is
 * called once the buffer is under half full again, with the lines dropped since the last
 * call, so that the log itself says what it lost.
 *
 * Lines are written in batches: what one event-loop turn logged goes out in one write at the
 * end of the turn (`setImmediate`), or as soon as {@link BATCH_BYTES} are waiting. On exit —
 * `process.exit`, an uncaught exception — pino writes what is left synchronously (its own
 * exit hook), unless the reader has stalled: then waiting on it would keep the process from
 * ever ending, so the rest is given up.
 */
export function createLogOutput(fd: number, o: { bufferBytes: number; onCaughtUp: (dropped: number) => void }): LogOutput {
  const sonic = pino.destination({ dest: fd, sync: false, minLength: BATCH_BYTES, maxLength: o.bufferBytes });
  // Bytes handed to sonic-boom and bytes it has written: what is waiting is the difference.
  let accepted = 0;
  let written = 0;
  let dropped = 0;
  let unreported = 0;
  let broken = false;
  // Set once the rest was given up (a stalled reader at exit): sonic-boom is destroyed then.
  let gaveUp = false;
  const giveUp = () => {
    if (gaveUp) return;
    gaveUp = true;
    sonic.destroy();
  };
  let lastProgress = Date.now();
  let turnScheduled = false;
  let reportScheduled = false;
  const waiting = () => accepted - written;
  const stalled = () => waiting() > 0 && Date.now() - lastProgress > STALL_MS;

  const endTurn = () => {
    turnScheduled = false;
    if (waiting() > 0 && !gaveUp) sonic.flush();
  };
  const report = () => {
    reportScheduled = false;
    const n = unreported;
    unreported = 0;
    if (n > 0) o.onCaughtUp(n);
  };
  sonic.on('drop', () => {
    dropped++;
    unreported++;
  });
  sonic.on('write', (n: number) => {
    written += n;
    lastProgress = Date.now();
    if (unreported > 0 && !reportScheduled && waiting() < o.bufferBytes / 2) {
      reportScheduled = true;
      setImmediate(report);
    }
  });
  // A write ended below BATCH_BYTES with lines logged meanwhile: they go now, not at the next line.
  sonic.on('drain', endTurn);
  // pino's own listener stops writing on EPIPE (the reader went away); any other write error
  // (EBADF: stderr closed) would otherwise be thrown from an event. Either way, what follows is lost.
  sonic.on('error', () => {
    broken = true;
  });

  const onExit = () => {
    // pino's exit hook (which runs after this one) skips a destroyed destination.
    if (broken || stalled()) giveUp();
  };
  process.prependListener('exit', onExit);
  sonic.on('close', () => process.removeListener('exit', onExit));

  const stream = {
    write(line: string): void {
      if (broken || gaveUp) {
        dropped++;
        return;
      }
      const before = dropped;
      if (waiting() === 0) lastProgress = Date.now();
      sonic.write(line);
      if (dropped !== before) return;
      accepted += Buffer.byteLength(line);
      if (!turnScheduled) {
        turnScheduled = true;
        setImmediate(endTurn);
      }
    },
  };

  return {
    stream,
    dropped: () => dropped,
    flush: () =>
      new Promise<void>((resolve) => {
        endTurn();
        const check = () => {
          if (waiting() <= 0 || broken || gaveUp) return resolve();
          if (stalled()) {
            giveUp();
            return resolve();
          }
          setTimeout(check, 10);
        };
        check();
      }),
  };
}
