import { availableParallelism } from 'node:os';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { TransformInput } from '../transform-types.js';
import { resolveTransformModule, type LoadedTransform } from './transform-module.js';

/** One transform a worker loads: the resolved file and the export to pick. */
export interface WorkerSpec {
  file: string;
  export?: string;
}

/** The transforms of one engine, loaded in worker threads. */
export interface TransformPool {
  /** The loaded transform (a function that calls into the pool) or its problem, per mapping spec. */
  load(spec: { module: string; export?: string }): LoadedTransform;
  /** Terminates the workers; calls still in flight fail. */
  close(): Promise<void>;
}

/**
 * The default pool size: a stuck transform holds one worker until its time-out while the
 * other keeps serving, and more threads than cores would not run CPU-bound code faster —
 * each worker costs memory (its own V8 heap and module copies).
 */
export const DEFAULT_POOL_SIZE = Math.min(2, availableParallelism());

const ENTRY = new URL('./transform-worker.mjs', import.meta.url);

/**
 * How long a worker may take to import the transforms (tsx compiles TypeScript on the way,
 * well under a second per module even on a cold, slow machine): past it, the module being
 * loaded is taken for one that never finishes (a loop at its top level), a config problem
 * of that module, instead of a start-up that hangs without a word.
 */
export const LOAD_TIMEOUT_MS = 30_000;

/**
 * Resolves every transform spec inside `transformsDir`, starts `size` workers that each
 * import every module once, and waits until they have: a module that does not load, has no
 * function to call, or kills its worker while loading is a problem of that spec, reported by
 * `load` like a resolution problem. No transforms: no workers.
 *
 * Calls run one at a time per worker, in arrival order, so that ending one call never takes
 * another with it: a call that outlives `timeoutMs` (a loop, a promise that never settles)
 * or whose worker dies (`process.exit`, an uncaught error) fails alone, and the worker is
 * replaced; the calls waiting behind it go to the other workers or to the replacement.
 *
 * Handing a call to a thread is what costs here (on one core it is most of a transform
 * request's CPU): each message wakes the other thread's event loop, and a timer per call
 * adds its own work. So calls travel in batches — all those waiting when a worker is idle
 * go to it as one message — answers are read in bulk, and each worker has one lazily
 * re-armed timer instead of one per call.
 */
export async function createTransformPool(
  specs: readonly { module: string; export?: string }[],
  transformsDir: string,
  size: number,
  timeoutMs: number,
  loadTimeoutMs = LOAD_TIMEOUT_MS,
): Promise<TransformPool> {
  const loaded = new Map<object, LoadedTransform>();
  const toLoad: WorkerSpec[] = [];
  const byKey = new Map<string, number>();
  const indexOf = new Map<object, number>();
  for (const spec of specs) {
    const resolved = await resolveTransformModule(spec.module, transformsDir);
    if ('problem' in resolved) {
      loaded.set(spec, { problem: resolved.problem, key: 'module' });
      continue;
    }
    const key = `${spec.export ?? ''}\0${resolved.file}`;
    let i = byKey.get(key);
    if (i === undefined) byKey.set(key, (i = toLoad.push({ file: resolved.file, export: spec.export }) - 1));
    indexOf.set(spec, i);
  }
  if (toLoad.length === 0) return { load: (spec) => loaded.get(spec)!, close: async () => {} };

  const workers = createWorkers(toLoad, size, timeoutMs, loadTimeoutMs);
  const problems = await workers.started;
  for (const [spec, i] of indexOf) {
    const problem = problems[i];
    loaded.set(spec, problem ?? { fn: (input: TransformInput) => workers.call(i, input) });
  }
  return { load: (spec) => loaded.get(spec)!, close: workers.close };
}

type Problem = Exclude<LoadedTransform, { fn: unknown }> | null;

interface Call {
  spec: number;
  input: TransformInput;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/** A call's answer from the worker: `[true, result]` or `[false, {name, message, stack}]`. */
type Answer = [boolean, unknown];

interface Slot {
  /** Undefined while no worker runs in this slot (closed, or a replacement died loading). */
  worker: Worker | undefined;
  /** Our end of the worker's call channel (calls out, answers back). */
  port: MessagePort | undefined;
  ready: boolean;
  /** Sent to the worker, in order, unanswered: the first is running (or about to), the others have not started. */
  calls: Call[];
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

function createWorkers(specs: WorkerSpec[], size: number, timeoutMs: number, loadTimeoutMs: number) {
  const slots: Slot[] = [];
  const queue: Call[] = [];
  let closed = false;
  let flushing = false;
  let first: { resolve(problems: Problem[]): void } | undefined;
  const started = new Promise<Problem[]>((resolve) => (first = { resolve }));
  let waiting = size;
  let firstProblems: Problem[] | undefined;

  function spawn(slot: Slot): void {
    const { port1, port2 } = new MessageChannel();
    // execArgv [] : the worker installs its own TypeScript hook, whatever flags started us.
    const worker = new Worker(ENTRY, { workerData: { specs, port: port2 }, transferList: [port2], execArgv: [] });
    slot.worker = worker;
    slot.port = port1;
    slot.ready = false;
    let loading = -1;
    let crash: Error | undefined;
    const loadTimer = setTimeout(() => {
      if (slot.worker !== worker || slot.ready) return;
      slot.worker = undefined; // its exit is ours
      slot.port!.close();
      slot.port = undefined;
      void worker.terminate();
      onDiedLoading(loading, `was stopped after ${loadTimeoutMs} ms (a loop at the module's top level?)`);
    }, loadTimeoutMs);
    port1.on('message', (answer: Answer) => {
      if (slot.port !== port1) return;
      settle(slot, answer);
      drain(slot);
      afterAnswers(slot);
    });
    // Only calls in flight keep the process alive: `send` refs the port, `afterAnswers` unrefs it.
    port1.unref();
    worker.on('message', (msg: [unknown, unknown]) => {
      if (slot.worker !== worker) return;
      if (msg[0] === 'loading') {
        loading = msg[1] as number;
        return;
      }
      slot.ready = true;
      clearTimeout(loadTimer);
      worker.unref(); // idle workers never keep the process alive
      onStarted(msg[1] as Problem[]);
      pump();
    });
    worker.on('error', (err) => (crash = err));
    worker.on('exit', (code) => {
      clearTimeout(loadTimer);
      if (slot.worker !== worker) return; // stopped on purpose
      const why = crash ? `crashed: ${crash.message}` : `exited with code ${code}`;
      if (!slot.ready) {
        slot.worker = undefined;
        slot.port!.close();
        slot.port = undefined;
        return onDiedLoading(loading, why);
      }
      replace(slot, new Error(`the transform worker ${why}; it was replaced`));
    });
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

  /** Settles every answer the worker has posted so far (one wake-up reads them all, without an event each). */
  function drain(slot: Slot): boolean {
    const port = slot.port!;
    let any = false;
    for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
      settle(slot, m.message as Answer);
      any = true;
    }
    return any;
  }

  /** After answers: the next call's clock starts, or the idle worker gets the waiting calls. */
  function afterAnswers(slot: Slot): void {
    if (slot.calls.length > 0) {
      slot.since = performance.now();
      return;
    }
    slot.port!.unref();
    pump();
  }

  function settle(slot: Slot, [ok, value]: Answer): void {
    const call = slot.calls.shift()!;
    if (ok) call.resolve(value);
    else call.reject(Object.assign(new Error((value as Error).message), value as Error));
  }

  /**
   * The one timer of a slot, armed when calls go out and not cleared when they are answered:
   * when it fires it re-arms itself for the first call's remaining time if calls are still
   * out, else it lapses. So a busy worker costs a timer per `timeoutMs`, not one per call.
   */
  function check(slot: Slot): void {
    slot.timer = undefined;
    if (slot.worker === undefined || slot.calls.length === 0) return;
    if (drain(slot)) afterAnswers(slot); // answers already posted: a call that finished is not late
    if (slot.calls.length === 0 || slot.timer !== undefined) return; // (or a new batch armed it)
    const left = slot.since + timeoutMs - performance.now();
    if (left > 0) return arm(slot, left);
    replace(slot, new Error(`transform timed out after ${timeoutMs} ms; its worker was stopped and replaced`));
  }

  function arm(slot: Slot, ms: number): void {
    // Unref'd: the port of a worker with calls out keeps the process alive (see `send`).
    slot.timer = setTimeout(check, ms, slot).unref();
  }

  /** Stops the slot's worker: its first call fails with `err`, the calls behind it wait for another worker. */
  function replace(slot: Slot, err: Error): void {
    const worker = slot.worker!;
    drain(slot); // calls it answered before it stopped keep their answers
    slot.worker = undefined; // its exit is ours: not a crash
    slot.port!.close();
    slot.port = undefined;
    void worker.terminate();
    const [running, ...notStarted] = slot.calls;
    slot.calls = [];
    queue.unshift(...notStarted);
    running?.reject(err);
    if (!closed) spawn(slot);
    pump();
  }

  function send(slot: Slot, batch: Call[]): void {
    // Flat [spec, input, spec, input, …]: one clone, no array per call.
    const msg: unknown[] = [];
    for (const c of batch) msg.push(c.spec, c.input);
    try {
      slot.port!.postMessage(msg);
    } catch (err) {
      for (const c of batch) c.reject(err as Error);
      return;
    }
    slot.calls = batch;
    slot.since = performance.now();
    slot.port!.ref();
    if (slot.timer === undefined) arm(slot, timeoutMs);
  }

  /** Gives the waiting calls to the idle workers, shared evenly, in batches. */
  function pump(): void {
    let idle = 0;
    for (const s of slots) if (s.ready && s.worker !== undefined && s.calls.length === 0) idle++;
    for (const s of slots) {
      if (queue.length === 0 || idle === 0) return;
      if (!s.ready || s.worker === undefined || s.calls.length > 0) continue;
      send(s, queue.splice(0, Math.min(MAX_BATCH, Math.ceil(queue.length / idle--))));
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
      // when it has answered (afterAnswers).
      if (!flushing) {
        flushing = true;
        setImmediate(flush);
      }
    });
  }

  async function close(): Promise<void> {
    closed = true;
    const running = slots.map((s) => s.worker).filter((w): w is Worker => w !== undefined);
    const err = new Error('the transforms were closed');
    for (const slot of slots) {
      slot.worker = undefined;
      slot.port?.close();
      slot.port = undefined;
      clearTimeout(slot.timer);
      for (const c of slot.calls.splice(0)) c.reject(err);
    }
    for (const c of queue.splice(0)) c.reject(err);
    await Promise.all(running.map((w) => w.terminate()));
  }

  for (let i = 0; i < size; i++) {
    const slot: Slot = { worker: undefined, port: undefined, ready: false, calls: [], since: 0, timer: undefined };
    slots.push(slot);
    spawn(slot);
  }
  return { started, call, close };
}
