import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TransformInput } from '../transform-types.js';
import type { LoadedTransform } from './transform-module.js';
import type { WorkerSetup } from './transform-result.js';


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
  worker: ChildProcess | undefined;
  ready: boolean;
  calls: Call[];
  seq: number;
  since: number;
  timer: NodeJS.Timeout | undefined;
}

const MAX_BATCH = 32;

function kill(worker: ChildProcess): void {
  try {
    process.kill(-worker.pid!, 'SIGKILL');
  } catch {
    worker.kill('SIGKILL'); // already gone, or no group of its own
  }
}

interface Workers {
  setup: WorkerSetup;
  argv: string[];
  timeoutMs: number;
  loadTimeoutMs: number;
  maxMemoryMb: number;
  slots: Slot[];
  queue: Call[];
  living: Set<ChildProcess>;
  closed: boolean;
  flushing: boolean;
  waiting: number;
  firstProblems: Problem[] | undefined;
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

function spawn(w: Workers, slot: Slot): void {
  const worker = fork(ENTRY, w.argv, {
    // Its own process group (detached), so that a kill also ends what a transform spawned.
    execArgv: [`--max-old-space-size=${w.maxMemoryMb}`],
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
  worker.on('error', () => {});
  worker.on('exit', (code, signal) => {
    w.living.delete(worker);
    clearTimeout(loadTimer);
    if (slot.worker !== worker) return; // stopped on purpose
    const why = crash !== undefined ? `crashed: ${crash}`
      : signal === 'SIGABRT' ? `was aborted, most likely out of memory (its heap limit is hooks.transformMaxMemoryMb, ${w.maxMemoryMb} MB)`
        : signal ? `was killed by ${signal}` : `exited with code ${code}`;
    if (!slot.ready) {
      slot.worker = undefined;
      return onDiedLoading(w, loading, why);
    }
    replace(w, slot, new Error(`the transform worker ${why}; it was replaced`));
  });
  worker.on('message', (msg: unknown) => {
    if (Array.isArray(msg) && msg[0] === 'crash' && typeof msg[1] === 'string') crash = msg[1];
  });
}

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
    const problems: Problem[] = w.setup.specs.map((_, i) => (i === loading ? { problem: `its worker ${why} while loading it`, key: 'module' } : null));
    void close(w);
    w.first.resolve(problems);
    w.first = undefined;
    return;
  }
  if (w.slots.every((s) => s.worker === undefined)) {
    for (const call of w.queue.splice(0)) call.reject(new Error(`the transform worker ${why} while loading the transforms`));
  }
}

/**
 * One message of a ready worker: the answer `[seq, ok, value?]` to its first call, or something
 * a transform sent on its own (`process.send`): then the worker is stopped and its call fails.
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

function check(w: Workers, slot: Slot): void {
  slot.timer = undefined;
  if (slot.worker === undefined || slot.calls.length === 0) return;
  const left = slot.since + w.timeoutMs - performance.now();
  if (left > 0) return arm(w, slot, left);
  replace(w, slot, new Error(`transform timed out after ${w.timeoutMs} ms; its worker was stopped and replaced`));
}

function arm(w: Workers, slot: Slot, ms: number): void {
  slot.timer = setTimeout(check, ms, w, slot).unref();
}

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
  const msg: unknown[] = [];
  for (const c of batch) msg.push(c.spec, c.input);
  let sent = batch;
  try {
    worker.send(msg);
  } catch {
    // One input cannot be serialised (a BigInt, a cycle): send call by call, failing only those.
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
    if (!w.flushing) {
      w.flushing = true;
      setImmediate(flush, w);
    }
  });
}

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
