import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
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
 * Resolves every transform spec inside `transformsDir`, starts `size` workers that each
 * import every module once, and waits until they have: a module that does not load, has no
 * function to call, or kills its worker while loading is a problem of that spec, reported by
 * `load` like a resolution problem. No transforms: no workers.
 *
 * Calls run one at a time per worker, in arrival order, so that ending one call never takes
 * another with it: a call that outlives `timeoutMs` (a loop, a promise that never settles)
 * or whose worker dies (`process.exit`, an uncaught error) fails alone, and the worker is
 * replaced; the calls waiting behind it go to the other workers or to the replacement.
 */
export async function createTransformPool(
  specs: readonly { module: string; export?: string }[],
  transformsDir: string,
  size: number,
  timeoutMs: number,
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

  const workers = createWorkers(toLoad, size, timeoutMs);
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

interface Slot {
  /** Undefined while no worker runs in this slot (closed, or a replacement died loading). */
  worker: Worker | undefined;
  ready: boolean;
  /** Sent to the worker, in order: the first is running, the others have not started. */
  calls: Call[];
  /** The running call's time limit, and when it started (performance.now()). */
  timer: NodeJS.Timeout | undefined;
  since: number;
}

/**
 * Calls sent ahead to a busy worker. Each message between threads costs a wake-up of the
 * other thread; calls that arrive together and travel together share it (about half the
 * CPU per call under load). A worker runs them one after the other, so those behind the
 * running one have not started: when it is stopped, they go back to the queue unharmed.
 * Only a worker whose running call started within AHEAD_MS gets more: one that has been
 * busy longer may be stuck, and a call sent to it would wait for its time-out.
 */
const PIPELINE = 8;
const AHEAD_MS = 5;

function createWorkers(specs: WorkerSpec[], size: number, timeoutMs: number) {
  const slots: Slot[] = [];
  const queue: Call[] = [];
  let closed = false;
  let first: { resolve(problems: Problem[]): void } | undefined;
  const started = new Promise<Problem[]>((resolve) => (first = { resolve }));
  let waiting = size;
  let firstProblems: Problem[] | undefined;

  function spawn(slot: Slot): void {
    // execArgv [] : the worker installs its own TypeScript hook, whatever flags started us.
    const worker = new Worker(ENTRY, { workerData: { specs }, execArgv: [] });
    slot.worker = worker;
    slot.ready = false;
    let loading = -1;
    let crash: Error | undefined;
    worker.on('message', (msg: [unknown, unknown]) => {
      if (slot.worker !== worker) return;
      if (slot.ready) return settle(slot, msg[0] === true, msg[1]);
      if (msg[0] === 'loading') {
        loading = msg[1] as number;
        return;
      }
      slot.ready = true;
      worker.unref(); // idle workers never keep the process alive; a call's timer does
      onStarted(msg[1] as Problem[]);
      pump();
    });
    worker.on('error', (err) => (crash = err));
    worker.on('exit', (code) => {
      if (slot.worker !== worker) return; // stopped on purpose
      const why = crash ? `crashed: ${crash.message}` : `exited with code ${code}`;
      if (!slot.ready) {
        slot.worker = undefined;
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

  /** Stops the slot's worker: its running call fails with `err`, the calls behind it wait for another worker. */
  function replace(slot: Slot, err: Error): void {
    const worker = slot.worker!;
    slot.worker = undefined; // its exit is ours: not a crash
    void worker.terminate();
    clearTimeout(slot.timer);
    const [running, ...notStarted] = slot.calls;
    slot.calls = [];
    queue.unshift(...notStarted);
    running?.reject(err);
    if (!closed) spawn(slot);
    pump();
  }

  function settle(slot: Slot, ok: boolean, value: unknown): void {
    const call = slot.calls.shift()!;
    clearTimeout(slot.timer);
    if (slot.calls.length > 0) start(slot); // the next one starts now
    if (ok) call.resolve(value);
    else call.reject(Object.assign(new Error((value as Error).message), value as Error));
    pump();
  }

  function onTimeout(slot: Slot): void {
    replace(slot, new Error(`transform timed out after ${timeoutMs} ms; its worker was stopped and replaced`));
  }

  function start(slot: Slot): void {
    slot.since = performance.now();
    slot.timer = setTimeout(onTimeout, timeoutMs, slot);
  }

  /** An idle worker, else the least busy one that may take one more. */
  function pick(): Slot | undefined {
    let best: Slot | undefined;
    for (const s of slots) {
      if (!s.ready || s.worker === undefined) continue;
      if (s.calls.length === 0) return s;
      if (s.calls.length < PIPELINE && (!best || s.calls.length < best.calls.length)) best = s;
    }
    return best && performance.now() - best.since < AHEAD_MS ? best : undefined;
  }

  function pump(): void {
    while (queue.length > 0) {
      const slot = pick();
      if (!slot) return;
      const call = queue.shift()!;
      try {
        slot.worker!.postMessage([call.spec, call.input]);
      } catch (err) {
        call.reject(err as Error);
        continue;
      }
      if (slot.calls.push(call) === 1) start(slot);
    }
  }

  function call(spec: number, input: TransformInput): Promise<unknown> {
    if (closed) return Promise.reject(new Error('the transforms are closed'));
    return new Promise((resolve, reject) => {
      queue.push({ spec, input, resolve, reject });
      for (const slot of slots) if (slot.worker === undefined) spawn(slot); // a replacement that died loading
      pump();
    });
  }

  async function close(): Promise<void> {
    closed = true;
    const running = slots.map((s) => s.worker).filter((w): w is Worker => w !== undefined);
    const err = new Error('the transforms were closed');
    for (const slot of slots) {
      slot.worker = undefined;
      clearTimeout(slot.timer);
      for (const c of slot.calls.splice(0)) c.reject(err);
    }
    for (const c of queue.splice(0)) c.reject(err);
    await Promise.all(running.map((w) => w.terminate()));
  }

  for (let i = 0; i < size; i++) {
    const slot: Slot = { worker: undefined, ready: false, calls: [], timer: undefined, since: 0 };
    slots.push(slot);
    spawn(slot);
  }
  return { started, call, close };
}
