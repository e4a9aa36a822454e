import { pino, type DestinationStream } from 'pino';

/**
 * Bytes gathered before they are written at once. A write costs a hop to libuv's thread pool
 * and back (two thread switches, which on this machine cost more than the write): under load,
 * one write for every ~60 access lines instead of one per event-loop turn (measured:
 * docs/performance.md).
 */
const BATCH_BYTES = 16384;
/**
 * Writes are at least this far apart (unless {@link BATCH_BYTES} wait): a line logged after a
 * quiet spell goes out at the end of its event-loop turn, as before; under load, lines wait at
 * most this long for the next write.
 */
const FLUSH_MS = 20;

/** A line of pino's at warn level or above (`{"level":40` …): its level is the line's first field. */
const isWarning = (line: string) => line.charCodeAt(9) >= 52 /* '4' */ && line.startsWith('{"level":');
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
 * Lines are written in batches: they gather here until the end of the event-loop turn — or,
 * when the last write was less than {@link FLUSH_MS} ago, until then — or until
 * {@link BATCH_BYTES} wait or a warning comes, then go to sonic-boom as one chunk (its own batching measures
 * the byte length of its whole pending string on every line). On exit — `process.exit`, an
 * uncaught exception — what gathered is handed over and pino writes it synchronously (its own
 * exit hook), unless the reader has stalled: then waiting on it would keep the process from
 * ever ending, so the rest is given up.
 */
export function createLogOutput(fd: number, o: { bufferBytes: number; onCaughtUp: (dropped: number) => void }): LogOutput {
  const sonic = pino.destination({ dest: fd, sync: false });
  // Lines gathered for the next chunk, and their length. A line is counted by its length
  // (UTF-16 code units, never more than its UTF-8 bytes) and the chunk by its bytes once it is
  // handed over: Buffer.byteLength per line was ~140 ns in a micro-benchmark, ~0.9 µs of a 401
  // in a perf profile (docs/performance.md). What gathers is sent once it is BATCH_BYTES long,
  // and UTF-8 takes at most 3 bytes per code unit, so the bound is overshot by at most about
  // twice BATCH_BYTES in bytes.
  let gathered: string[] = [];
  let gatheredLength = 0;
  // A send is scheduled (at the end of the turn, or once FLUSH_MS have passed since the last).
  let scheduled = false;
  let lastSend = 0;
  // Bytes handed to sonic-boom and bytes it has written: what is in flight is the difference.
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
  let reportScheduled = false;
  const waiting = () => accepted - written + gatheredLength;
  const stalled = () => waiting() > 0 && Date.now() - lastProgress > STALL_MS;

  const scheduledSend = () => {
    scheduled = false;
    send();
  };
  /** Hands what gathered to sonic-boom: written at once, or after the write in flight. */
  const send = () => {
    if (gathered.length === 0 || gaveUp || broken) return;
    lastSend = performance.now();
    const chunk = gathered.length === 1 ? gathered[0]! : gathered.join('');
    accepted += Buffer.byteLength(chunk);
    gathered = [];
    gatheredLength = 0;
    sonic.write(chunk);
  };
  const report = () => {
    reportScheduled = false;
    const n = unreported;
    unreported = 0;
    if (n > 0) o.onCaughtUp(n);
  };
  sonic.on('write', (n: number) => {
    written += n;
    lastProgress = Date.now();
    if (unreported > 0 && !reportScheduled && waiting() < o.bufferBytes / 2) {
      reportScheduled = true;
      setImmediate(report);
    }
  });
  // pino's own listener stops writing on EPIPE (the reader went away); any other write error
  // (EBADF: stderr closed) would otherwise be thrown from an event. Either way, what follows is lost.
  sonic.on('error', () => {
    broken = true;
  });

  const onExit = () => {
    send();
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
      const before = waiting();
      if (before + line.length > o.bufferBytes) {
        dropped++;
        unreported++;
        return;
      }
      if (before === 0) lastProgress = Date.now();
      gathered.push(line);
      gatheredLength += line.length;
      // A warning or an error goes out at once (with what gathered before it): it is rare, and
      // whoever watches the log should not wait for it.
      if (gatheredLength >= BATCH_BYTES || isWarning(line)) send();
      else if (!scheduled) {
        scheduled = true;
        const wait = lastSend + FLUSH_MS - performance.now();
        if (wait <= 0) setImmediate(scheduledSend);
        else setTimeout(scheduledSend, wait).unref();
      }
    },
  };

  return {
    stream,
    dropped: () => dropped,
    flush: () =>
      new Promise<void>((resolve) => {
        send();
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
