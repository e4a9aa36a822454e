import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TransformInput } from '../transform-types.js';
import type { LoadedTransform } from './transform-module.js';
import type { WorkerSetup } from './transform-result.js';

// The worker processes of a transform pool and the calls they run (transform-pool.ts has the
// rules: one call at a time per worker, batches, time limits, replacement).

const ENTRY = fileURLToPath(new URL('./transform-worker.mjs', import.meta.url));

export type Problem = Exclude<LoadedTransform, { fn: unknown }> | null;

interface Call {
  spec: number;
  input: TransformInput;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

interface Slot {
  /** Undefined while no worker runs in this slot (closed, or a replacement died loading). */
  worker: ChildProcess | undefined;
  ready: boolean;
  /** Sent to the worker, in order, unanswered: the first is running (or about to), the others have not started. */
  calls: Call[];
  /** The `seq` the worker gives its next answer (it counts its calls from 0). */
  seq: number;
  /** When the first of `calls` became the first (performance.now()): its time limit counts from there. */
  since: number;
  /** Checks the first call's time limit; re-armed only while calls are out (see `check`). */
  timer: NodeJS.Timeout | undefined;
}

/**
 * At most this many calls in one batch: a batch is run one call after the other, so the
 * calls at its end wait for those before it, even when another worker becomes free. About
 * one bench load (32 connections) shares a wake-up; more would not save much more.
 */
const MAX_BATCH = 32;

/** Ends a worker and everything it started (its own process group, see `spawn`), at once. */
function kill(worker: ChildProcess): void {
  try {
    process.kill(-worker.pid!, 'SIGKILL');
  } catch {
    worker.kill('SIGKILL'); // already gone, or no group of its own
  }
}

/** Starts `size` workers for `setup`; `started` resolves with the load problems once all are ready. */
export function createWorkers(setup: WorkerSetup, size: number, timeoutMs: number, loadTimeoutMs: number, maxMemoryMb: number) {
  const { specs } = setup;
  const slots: Slot[] = [];
  const queue: Call[] = [];
  const living = new Set<ChildProcess>();
  let closed = false;
  let flushing = false;
  let first: { resolve(problems: Problem[]): void } | undefined;
  const started = new Promise<Problem[]>((resolve) => (first = { resolve }));
  let waiting = size;
  let firstProblems: Problem[] | undefined;
  const argv = [JSON.stringify(setup)];

  function spawn(slot: Slot): void {
    const worker = fork(ENTRY, argv, {
      // execArgv: only the heap limit; the worker installs its own TypeScript hook, whatever
      // flags started us. detached: its own process group, so that `kill` also ends what a
      // transform spawned (the `sleep` of an execSync).
      execArgv: [`--max-old-space-size=${maxMemoryMb}`],
      // JSON, not 'advanced' (V8's structured clone): inputs are JSON already and results are
      // scalar fields (transform-result.ts), and it costs the listener's process less CPU a
      // call (measured: see docs/performance.md).
      serialization: 'json',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      detached: true,
    });
    living.add(worker);
    slot.worker = worker;
    slot.ready = false;
    slot.seq = 0;
    let loading = -1;
    let crash: string | undefined;
    const loadTimer = setTimeout(() => {
      if (slot.worker !== worker || slot.ready) return;
      slot.worker = undefined; // its exit is ours
      kill(worker);
      onDiedLoading(loading, `was stopped after ${loadTimeoutMs} ms (a loop at the module's top level?)`);
    }, loadTimeoutMs);
    worker.on('message', (msg: unknown) => {
      if (slot.worker !== worker) return;
      if (slot.ready) return onAnswer(slot, msg);
      if (Array.isArray(msg) && msg[0] === 'loading') {
        loading = msg[1] as number;
      } else if (Array.isArray(msg) && msg[0] === 'ready') {
        slot.ready = true;
        clearTimeout(loadTimer);
        idle(worker); // idle workers never keep the process alive
        onStarted(msg[1] as Problem[]);
        pump();
      }
    });
    // An IPC write to a worker that just died (EPIPE): its exit says what happened.
    worker.on('error', () => {});
    worker.on('exit', (code, signal) => {
      living.delete(worker);
      clearTimeout(loadTimer);
      if (slot.worker !== worker) return; // stopped on purpose
      const why = crash !== undefined ? `crashed: ${crash}`
        // V8 aborts a process past its heap limit ("FATAL ERROR: … heap out of memory" on stderr).
        : signal === 'SIGABRT' ? `was aborted, most likely out of memory (its heap limit is hooks.transformMaxMemoryMb, ${maxMemoryMb} MB)`
          : signal ? `was killed by ${signal}` : `exited with code ${code}`;
      if (!slot.ready) {
        slot.worker = undefined;
        return onDiedLoading(loading, why);
      }
      replace(slot, new Error(`the transform worker ${why}; it was replaced`));
    });
    // Before `ready`, `crash` is the only other message a worker sends on its own.
    worker.on('message', (msg: unknown) => {
      if (Array.isArray(msg) && msg[0] === 'crash' && typeof msg[1] === 'string') crash = msg[1];
    });
  }

  /** Only calls in flight keep the process alive: `send` refs the worker, the last answer unrefs it. */
  function idle(worker: ChildProcess): void {
    worker.unref();
    worker.channel?.unref();
  }

  function busy(worker: ChildProcess): void {
    worker.ref();
    worker.channel?.ref();
  }

  function onStarted(problems: Problem[]): void {
    if (firstProblems === undefined) firstProblems = problems;
    if (--waiting === 0) first?.resolve(firstProblems);
  }

  function onDiedLoading(loading: number, why: string): void {
    if (first && waiting > 0) {
      // At start-up: a config problem of the module that was loading.
      const problems: Problem[] = specs.map((_, i) => (i === loading ? { problem: `its worker ${why} while loading it`, key: 'module' } : null));
      void close();
      first.resolve(problems);
      first = undefined;
      return;
    }
    // A replacement: nothing runs in this slot until the next call. Waiting calls fail
    // only when no other worker is left to take them.
    if (slots.every((s) => s.worker === undefined)) {
      for (const call of queue.splice(0)) call.reject(new Error(`the transform worker ${why} while loading the transforms`));
    }
  }

  /**
   * One message of a ready worker: the answer `[seq, ok, value?]` to its first call (no value:
   * `undefined`, which JSON cannot carry), or — the
   * crash report aside — something a transform sent on its own (`process.send`), which is
   * never taken for an answer: the worker is stopped and its running call fails.
   */
  function onAnswer(slot: Slot, msg: unknown): void {
    if (Array.isArray(msg) && (msg.length === 2 || msg.length === 3) && msg[0] === slot.seq && typeof msg[1] === 'boolean' && slot.calls.length > 0) {
      slot.seq++;
      const call = slot.calls.shift()!;
      if (msg[1]) call.resolve(msg[2]);
      else call.reject(Object.assign(new Error(String((msg[2] as Error)?.message)), msg[2] as Error));
      if (slot.calls.length > 0) {
        slot.since = performance.now(); // the next call's clock starts
        return;
      }
      idle(slot.worker!);
      pump();
      return;
    }
    if (Array.isArray(msg) && msg[0] === 'crash') return; // its exit follows
    replace(slot, new Error('the transform worker sent a message that is not an answer; it was stopped and replaced'));
  }

  /**
   * The one timer of a slot, armed when calls go out and not cleared when they are answered:
   * when it fires it re-arms itself for the first call's remaining time if calls are still
   * out, else it lapses. So a busy worker costs a timer per `timeoutMs`, not one per call.
   */
  function check(slot: Slot): void {
    slot.timer = undefined;
    if (slot.worker === undefined || slot.calls.length === 0) return;
    const left = slot.since + timeoutMs - performance.now();
    if (left > 0) return arm(slot, left);
    replace(slot, new Error(`transform timed out after ${timeoutMs} ms; its worker was stopped and replaced`));
  }

  function arm(slot: Slot, ms: number): void {
    // Unref'd: a worker with calls out keeps the process alive (see `send`).
    slot.timer = setTimeout(check, ms, slot).unref();
  }

  /** Kills the slot's worker: its first call fails with `err`, the calls behind it wait for another worker. */
  function replace(slot: Slot, err: Error): void {
    const worker = slot.worker!;
    slot.worker = undefined; // its exit is ours: not a crash
    kill(worker);
    const [running, ...notStarted] = slot.calls;
    slot.calls = [];
    queue.unshift(...notStarted);
    running?.reject(err);
    if (!closed) spawn(slot);
    pump();
  }

  function send(slot: Slot, batch: Call[]): void {
    const worker = slot.worker!;
    // Flat [spec, input, spec, input, …]: one clone, no array per call.
    const msg: unknown[] = [];
    for (const c of batch) msg.push(c.spec, c.input);
    let sent = batch;
    try {
      worker.send(msg);
    } catch {
      // One input cannot be serialised (a BigInt, a cycle: the whole message is refused
      // before anything is written): send call by call, and fail only the calls that cannot go.
      sent = [];
      for (const c of batch) {
        try {
          worker.send([c.spec, c.input]);
          sent.push(c);
        } catch (err) {
          c.reject(new Error(`the transform input could not be handed to a worker: ${(err as Error).message}`));
        }
      }
      if (sent.length === 0) return;
    }
    slot.calls = sent;
    slot.since = performance.now();
    busy(worker);
    if (slot.timer === undefined) arm(slot, timeoutMs);
  }

  /** Gives the waiting calls to the idle workers, shared evenly, in batches. */
  function pump(): void {
    let idleCount = 0;
    for (const s of slots) if (s.ready && s.worker !== undefined && s.calls.length === 0) idleCount++;
    for (const s of slots) {
      if (queue.length === 0 || idleCount === 0) return;
      if (!s.ready || s.worker === undefined || s.calls.length > 0) continue;
      send(s, queue.splice(0, Math.min(MAX_BATCH, Math.ceil(queue.length / idleCount--))));
    }
  }

  function flush(): void {
    flushing = false;
    pump();
  }

  function call(spec: number, input: TransformInput): Promise<unknown> {
    if (closed) return Promise.reject(new Error('the transforms are closed'));
    return new Promise((resolve, reject) => {
      queue.push({ spec, input, resolve, reject });
      for (const slot of slots) if (slot.worker === undefined) spawn(slot); // a replacement that died loading
      // Requests read in the same turn of the event loop call in before it checks for
      // more (setImmediate): they share one batch. A busy worker's next batch goes out
      // when it has answered (onAnswer).
      if (!flushing) {
        flushing = true;
        setImmediate(flush);
      }
    });
  }

  /** Kills every worker (stopped ones included) and waits for their exits, which SIGKILL makes prompt. */
  async function close(): Promise<void> {
    closed = true;
    const err = new Error('the transforms were closed');
    for (const slot of slots) {
      slot.worker = undefined;
      clearTimeout(slot.timer);
      for (const c of slot.calls.splice(0)) c.reject(err);
    }
    for (const c of queue.splice(0)) c.reject(err);
    const exits = [...living].map((w) => new Promise((resolve) => {
      if (w.exitCode !== null || w.signalCode !== null) return resolve(undefined);
      w.once('exit', resolve);
      w.ref(); // an idle worker is unref'd: waiting for its exit must keep the process alive
      kill(w);
    }));
    await Promise.all(exits);
  }

  for (let i = 0; i < size; i++) {
    const slot: Slot = { worker: undefined, ready: false, calls: [], seq: 0, since: 0, timer: undefined };
    slots.push(slot);
    spawn(slot);
  }
  return { started, call, close };
}
