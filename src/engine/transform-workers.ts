import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TransformInput } from '../transform-types.js';
import type { LoadedTransform } from './transform-module.js';
import type { WorkerSetup } from './transform-result.js';

// The worker processes of a transform pool and the calls they run (transform-pool.ts has the
// rules: one call at a time per worker, batches, time limits, replacement).

// From this folder's parent: the build bundles this file into dist/chunks/ and puts the entry
// in dist/engine/ (scripts/build.mjs); from src/ it is the same place.
const ENTRY = fileURLToPath(new URL('../engine/transform-worker.mjs', import.meta.url));

/** A spec's load problem as a worker reports it at `ready`, or null: it loaded. */
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

/** The state the functions below share: one pool's workers, its waiting calls, its start-up. */
interface Workers {
  setup: WorkerSetup;
  /** The worker's argv: the setup, serialised once. */
  argv: string[];
  timeoutMs: number;
  loadTimeoutMs: number;
  maxMemoryMb: number;
  slots: Slot[];
  /** Calls no worker has taken yet, in arrival order. */
  queue: Call[];
  /** Every worker process not yet exited, stopped ones included (`close` waits for them). */
  living: Set<ChildProcess>;
  closed: boolean;
  /** A `flush` is scheduled (setImmediate). */
  flushing: boolean;
  /** Workers not yet ready at start-up; `started` resolves when none is left. */
  waiting: number;
  /** The load problems the first ready worker reported (every worker loads the same modules). */
  firstProblems: Problem[] | undefined;
  /** Resolves `started`; unset once a worker died loading at start-up. */
  first: { resolve(problems: Problem[]): void } | undefined;
}

/** Starts `size` workers for `setup`; `started` resolves with the load problems once all are ready. */
export function createWorkers(setup: WorkerSetup, size: number, timeoutMs: number, loadTimeoutMs: number, maxMemoryMb: number) {
  const w: Workers = {
    setup, argv: [JSON.stringify(setup)], timeoutMs, loadTimeoutMs, maxMemoryMb,
    slots: [], queue: [], living: new Set(), closed: false, flushing: false,
    waiting: size, firstProblems: undefined, first: undefined,
  };
  const started = new Promise<Problem[]>((resolve) => (w.first = { resolve }));
  for (let i = 0; i < size; i++) {
    const slot: Slot = { worker: undefined, ready: false, calls: [], seq: 0, since: 0, timer: undefined };
    w.slots.push(slot);
    spawn(w, slot);
  }
  return {
    started,
    call: (spec: number, input: TransformInput) => call(w, spec, input),
    close: () => close(w),
  };
}

/** Starts a worker in `slot`: it loads the modules, says `ready` (with their problems), then answers calls. */
function spawn(w: Workers, slot: Slot): void {
  const worker = fork(ENTRY, w.argv, {
    // execArgv: only the heap limit; the worker installs its own TypeScript hook, whatever
    // flags started us. detached: its own process group, so that `kill` also ends what a
    // transform spawned (the `sleep` of an execSync).
    execArgv: [`--max-old-space-size=${w.maxMemoryMb}`],
    // JSON, not 'advanced' (V8's structured clone): inputs are JSON already and results are
    // scalar fields (transform-result.ts), and it costs the listener's process less CPU a
    // call (measured: see docs/performance.md).
    serialization: 'json',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  w.living.add(worker);
  slot.worker = worker;
  slot.ready = false;
  slot.seq = 0;
  let loading = -1;
  let crash: string | undefined;
  const loadTimer = setTimeout(() => {
    if (slot.worker !== worker || slot.ready) return;
    slot.worker = undefined; // its exit is ours
    kill(worker);
    onDiedLoading(w, loading, `was stopped after ${w.loadTimeoutMs} ms (a loop at the module's top level?)`);
  }, w.loadTimeoutMs);
  worker.on('message', (msg: unknown) => {
    if (slot.worker !== worker) return;
    if (slot.ready) return onAnswer(w, slot, msg);
    if (Array.isArray(msg) && msg[0] === 'loading') {
      loading = msg[1] as number;
    } else if (Array.isArray(msg) && msg[0] === 'ready') {
      slot.ready = true;
      clearTimeout(loadTimer);
      idle(worker); // idle workers never keep the process alive
      onStarted(w, msg[1] as Problem[]);
      pump(w);
    }
  });
  // An IPC write to a worker that just died (EPIPE): its exit says what happened.
  worker.on('error', () => {});
  worker.on('exit', (code, signal) => {
    w.living.delete(worker);
    clearTimeout(loadTimer);
    if (slot.worker !== worker) return; // stopped on purpose
    const why = crash !== undefined ? `crashed: ${crash}`
      // V8 aborts a process past its heap limit ("FATAL ERROR: … heap out of memory" on stderr).
      : signal === 'SIGABRT' ? `was aborted, most likely out of memory (its heap limit is hooks.transformMaxMemoryMb, ${w.maxMemoryMb} MB)`
        : signal ? `was killed by ${signal}` : `exited with code ${code}`;
    if (!slot.ready) {
      slot.worker = undefined;
      return onDiedLoading(w, loading, why);
    }
    replace(w, slot, new Error(`the transform worker ${why}; it was replaced`));
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

function onStarted(w: Workers, problems: Problem[]): void {
  if (w.firstProblems === undefined) w.firstProblems = problems;
  if (--w.waiting === 0) w.first?.resolve(w.firstProblems);
}

function onDiedLoading(w: Workers, loading: number, why: string): void {
  if (w.first && w.waiting > 0) {
    // At start-up: a config problem of the module that was loading.
    const problems: Problem[] = w.setup.specs.map((_, i) => (i === loading ? { problem: `its worker ${why} while loading it`, key: 'module' } : null));
    void close(w);
    w.first.resolve(problems);
    w.first = undefined;
    return;
  }
  // A replacement: nothing runs in this slot until the next call. Waiting calls fail
  // only when no other worker is left to take them.
  if (w.slots.every((s) => s.worker === undefined)) {
    for (const call of w.queue.splice(0)) call.reject(new Error(`the transform worker ${why} while loading the transforms`));
  }
}

/**
 * One message of a ready worker: the answer `[seq, ok, value?]` to its first call (no value:
 * `undefined`, which JSON cannot carry), or — the
 * crash report aside — something a transform sent on its own (`process.send`), which is
 * never taken for an answer: the worker is stopped and its running call fails.
 */
function onAnswer(w: Workers, slot: Slot, msg: unknown): void {
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
    pump(w);
    return;
  }
  if (Array.isArray(msg) && msg[0] === 'crash') return; // its exit follows
  replace(w, slot, new Error('the transform worker sent a message that is not an answer; it was stopped and replaced'));
}

/**
 * The one timer of a slot, armed when calls go out and not cleared when they are answered:
 * when it fires it re-arms itself for the first call's remaining time if calls are still
 * out, else it lapses. So a busy worker costs a timer per `timeoutMs`, not one per call.
 */
function check(w: Workers, slot: Slot): void {
  slot.timer = undefined;
  if (slot.worker === undefined || slot.calls.length === 0) return;
  const left = slot.since + w.timeoutMs - performance.now();
  if (left > 0) return arm(w, slot, left);
  replace(w, slot, new Error(`transform timed out after ${w.timeoutMs} ms; its worker was stopped and replaced`));
}

function arm(w: Workers, slot: Slot, ms: number): void {
  // Unref'd: a worker with calls out keeps the process alive (see `send`).
  slot.timer = setTimeout(check, ms, w, slot).unref();
}

/** Kills the slot's worker: its first call fails with `err`, the calls behind it wait for another worker. */
function replace(w: Workers, slot: Slot, err: Error): void {
  const worker = slot.worker!;
  slot.worker = undefined; // its exit is ours: not a crash
  kill(worker);
  const [running, ...notStarted] = slot.calls;
  slot.calls = [];
  w.queue.unshift(...notStarted);
  running?.reject(err);
  if (!w.closed) spawn(w, slot);
  pump(w);
}

function send(w: Workers, slot: Slot, batch: Call[]): void {
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
  if (slot.timer === undefined) arm(w, slot, w.timeoutMs);
}

/** Gives the waiting calls to the idle workers, shared evenly, in batches. */
function pump(w: Workers): void {
  let idleCount = 0;
  for (const s of w.slots) if (s.ready && s.worker !== undefined && s.calls.length === 0) idleCount++;
  for (const s of w.slots) {
    if (w.queue.length === 0 || idleCount === 0) return;
    if (!s.ready || s.worker === undefined || s.calls.length > 0) continue;
    send(w, s, w.queue.splice(0, Math.min(MAX_BATCH, Math.ceil(w.queue.length / idleCount--))));
  }
}

function flush(w: Workers): void {
  w.flushing = false;
  pump(w);
}

function call(w: Workers, spec: number, input: TransformInput): Promise<unknown> {
  if (w.closed) return Promise.reject(new Error('the transforms are closed'));
  return new Promise((resolve, reject) => {
    w.queue.push({ spec, input, resolve, reject });
    for (const slot of w.slots) if (slot.worker === undefined) spawn(w, slot); // a replacement that died loading
    // Requests read in the same turn of the event loop call in before it checks for
    // more (setImmediate): they share one batch. A busy worker's next batch goes out
    // when it has answered (onAnswer).
    if (!w.flushing) {
      w.flushing = true;
      setImmediate(flush, w);
    }
  });
}

/** Kills every worker (stopped ones included) and waits for their exits, which SIGKILL makes prompt. */
async function close(w: Workers): Promise<void> {
  w.closed = true;
  const err = new Error('the transforms were closed');
  for (const slot of w.slots) {
    slot.worker = undefined;
    clearTimeout(slot.timer);
    for (const c of slot.calls.splice(0)) c.reject(err);
  }
  for (const c of w.queue.splice(0)) c.reject(err);
  const exits = [...w.living].map((worker) => new Promise((resolve) => {
    if (worker.exitCode !== null || worker.signalCode !== null) return resolve(undefined);
    worker.once('exit', resolve);
    worker.ref(); // an idle worker is unref'd: waiting for its exit must keep the process alive
    kill(worker);
  }));
  await Promise.all(exits);
}
