import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TransformInput } from '../transform-types.js';
import type { LoadedTransform } from './transform-module.js';

/** One transform a worker loads: the resolved file and the export to pick. */
export interface WorkerSpec {
  file: string;
  export?: string;
}

/** What a worker process is started with (transform-pool.ts → transform-worker.ts). */
export interface WorkerSetup {
  specs: WorkerSpec[];
  dir?: string;
  maxTextLength: number;
}

// From the sources too (under tsx: the specs, which build first) a worker runs the build, as the store's writer thread does.
const ENTRY = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../dist/engine/transform-worker.mjs' : '../engine/transform-worker.mjs', import.meta.url));

/** A spec's load problem as a worker reports it at `ready`, or null: it loaded. */
type Problem = Exclude<LoadedTransform, { fn: unknown }> | null;

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

// Idle workers never keep the process alive; a worker with a call out does.
function hold(worker: ChildProcess, busy: boolean): void {
  if (busy) worker.ref();
  else worker.unref();
  if (busy) worker.channel?.ref();
  else worker.channel?.unref();
}

/** Starts `size` workers for `setup`; `started` resolves with the load problems once all are ready. */
export function createWorkers(setup: WorkerSetup, size: number, timeoutMs: number, loadTimeoutMs: number, maxMemoryMb: number) {
  const argv = [JSON.stringify(setup)];
  const slots: Slot[] = [];
  const queue: Call[] = [];
  const living = new Set<ChildProcess>();
  let closed = false;
  let flushing = false;
  let waiting = size;
  let firstProblems: Problem[] | undefined;
  let first: ((problems: Problem[]) => void) | undefined;
  const started = new Promise<Problem[]>((resolve) => (first = resolve));

  function spawn(slot: Slot): void {
    const worker = fork(ENTRY, argv, {
      // Its own process group (detached), so that a kill also ends what a transform spawned.
      execArgv: [`--max-old-space-size=${maxMemoryMb}`],
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
      diedLoading(loading, `was stopped after ${loadTimeoutMs} ms (a loop at the module's top level?)`);
    }, loadTimeoutMs);
    worker.on('message', (msg: unknown) => {
      if (Array.isArray(msg) && msg[0] === 'crash' && typeof msg[1] === 'string') crash = msg[1];
      if (slot.worker !== worker) return;
      if (slot.ready) return answer(slot, msg);
      if (Array.isArray(msg) && msg[0] === 'loading') {
        loading = msg[1] as number;
      } else if (Array.isArray(msg) && msg[0] === 'ready') {
        slot.ready = true;
        clearTimeout(loadTimer);
        hold(worker, false);
        firstProblems ??= msg[1] as Problem[];
        if (--waiting === 0) first?.(firstProblems);
        pump();
      }
    });
    worker.on('error', () => {});
    worker.on('exit', (code, signal) => {
      living.delete(worker);
      clearTimeout(loadTimer);
      if (slot.worker !== worker) return; // stopped on purpose
      const why = crash !== undefined ? `crashed: ${crash}`
        : signal === 'SIGABRT' ? `was aborted, most likely out of memory (its heap limit is hooks.transformMaxMemoryMb, ${maxMemoryMb} MB)`
          : signal ? `was killed by ${signal}` : `exited with code ${code}`;
      if (!slot.ready) {
        slot.worker = undefined;
        return diedLoading(loading, why);
      }
      replace(slot, new Error(`the transform worker ${why}; it was replaced`));
    });
  }

  function diedLoading(loading: number, why: string): void {
    if (first && waiting > 0) {
      const problems: Problem[] = setup.specs.map((_, i) => (i === loading ? { problem: `its worker ${why} while loading it`, key: 'module' } : null));
      void close();
      first(problems);
      first = undefined;
      return;
    }
    if (slots.every((s) => s.worker === undefined)) {
      for (const call of queue.splice(0)) call.reject(new Error(`the transform worker ${why} while loading the transforms`));
    }
  }

  /** A ready worker's message: the answer `[seq, ok, value?]` to its first call, else a transform's own (`process.send`), which stops the worker. */
  function answer(slot: Slot, msg: unknown): void {
    if (Array.isArray(msg) && (msg.length === 2 || msg.length === 3) && msg[0] === slot.seq && typeof msg[1] === 'boolean' && slot.calls.length > 0) {
      slot.seq++;
      const call = slot.calls.shift()!;
      if (msg[1]) call.resolve(msg[2]);
      else call.reject(Object.assign(new Error(String((msg[2] as Error)?.message)), msg[2] as Error));
      if (slot.calls.length > 0) {
        slot.since = performance.now(); // the next call's clock starts
        return;
      }
      hold(slot.worker!, false);
      pump();
      return;
    }
    if (Array.isArray(msg) && msg[0] === 'crash') return; // its exit follows
    replace(slot, new Error('the transform worker sent a message that is not an answer; it was stopped and replaced'));
  }

  function check(slot: Slot): void {
    slot.timer = undefined;
    if (slot.worker === undefined || slot.calls.length === 0) return;
    const left = slot.since + timeoutMs - performance.now();
    if (left > 0) return arm(slot, left);
    replace(slot, new Error(`transform timed out after ${timeoutMs} ms; its worker was stopped and replaced`));
  }

  function arm(slot: Slot, ms: number): void {
    slot.timer = setTimeout(check, ms, slot).unref();
  }

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
    hold(worker, true);
    if (slot.timer === undefined) arm(slot, timeoutMs);
  }

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
      if (!flushing) {
        flushing = true;
        setImmediate(flush);
      }
    });
  }

  async function close(): Promise<void> {
    closed = true;
    const err = new Error('the transforms were closed');
    for (const slot of slots) {
      slot.worker = undefined;
      clearTimeout(slot.timer);
      for (const c of slot.calls.splice(0)) c.reject(err);
    }
    for (const c of queue.splice(0)) c.reject(err);
    const exits = [...living].map((worker) => new Promise((resolve) => {
      if (worker.exitCode !== null || worker.signalCode !== null) return resolve(undefined);
      worker.once('exit', resolve);
      worker.ref(); // an idle worker is unref'd: waiting for its exit must keep the process alive
      kill(worker);
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
