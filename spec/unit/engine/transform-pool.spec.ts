import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTransformPool, type PoolSettings, type TransformPool } from '../../../src/engine/transform-pool.js';
import type { TransformInput } from '../../../src/transform-types.js';
import { tmpDir } from '../../support/gateway.js';
import { FIXTURE_TRANSFORMS } from './make-config.js';

type Fn = (input: TransformInput) => Promise<unknown>;

const input = (payload: Record<string, unknown> = {}): TransformInput => ({ payload, headers: {}, query: {}, path: 'p', url: '/hooks/p', now: '2024-01-01T00:00:00.000Z' });

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).to.be.instanceOf(Error);
  return err as Error;
}

/** The pool's `hooks` settings, with the config's default heap and text limits unless given. */
function settings(transformsDir: string, transformPoolSize: number, transformTimeoutMs: number, transformMaxMemoryMb = 256): PoolSettings {
  return { transformsDir, transformPoolSize, transformTimeoutMs, transformMaxMemoryMb, maxTextLength: 262_144 };
}

describe('engine/transform-pool', () => {
  let pool: TransformPool;
  const fns: Record<string, Fn> = {};
  const TIMEOUT = 300;

  before(async () => {
    const names = ['loop', 'never', 'exit', 'uncaught', 'echo', 'unclonable', 'maybeLoop'];
    const specs = names.map((name) => ({ module: 'stuck.mjs', export: name }));
    pool = await createTransformPool(specs, settings(FIXTURE_TRANSFORMS, 2, TIMEOUT));
    names.forEach((name, i) => (fns[name] = (pool.load(specs[i]) as { fn: Fn }).fn));
  });

  after(() => pool.close());

  it('runs a call in a worker and hands back its result by structured clone', async () => {
    expect(await fns.echo(input({ n: 1 }))).to.deep.equal({ text: 'echo p 1' });
  });

  for (const [name, what] of [['loop', 'a synchronous loop'], ['never', 'a promise that never settles']] as const) {
    it(`stops ${what} after the time limit and replaces its worker`, async () => {
      const started = Date.now();
      const err = await rejection(fns[name](input()));
      const took = Date.now() - started;
      expect(err.message).to.equal(`transform timed out after ${TIMEOUT} ms; its worker was stopped and replaced`);
      expect(took).to.be.within(TIMEOUT - 20, TIMEOUT + 700);
      // Both workers answer again (the replacement included): two calls at once.
      expect(await Promise.all([fns.echo(input({ n: 2 })), fns.echo(input({ n: 3 }))])).to.deep.equal([{ text: 'echo p 2' }, { text: 'echo p 3' }]);
    });
  }

  it('fails only the call whose worker exits or crashes, and replaces the worker', async () => {
    expect((await rejection(fns.exit(input()))).message).to.equal('the transform worker exited with code 7; it was replaced');
    expect((await rejection(fns.uncaught(input()))).message).to.equal('the transform worker crashed: thrown outside the call; it was replaced');
    expect(await fns.echo(input({ n: 4 }))).to.deep.equal({ text: 'echo p 4' });
  });

  it('lets calls queued behind stuck workers finish once a worker is free', async () => {
    // Both workers stuck; eight more calls wait and must all succeed (on the replacements).
    const stuck = [fns.loop(input()), fns.never(input())];
    const queued = Array.from({ length: 8 }, (_, n) => fns.maybeLoop(input({ n })));
    const results = await Promise.allSettled([...stuck, ...queued]);
    expect(results.slice(0, 2).map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    expect(results.slice(2)).to.deep.equal(Array.from({ length: 8 }, (_, n) => ({ status: 'fulfilled', value: { text: `done ${n}` } })));
  });

  it('turns a result that cannot be cloned into an error, and the worker lives on', async () => {
    expect((await rejection(fns.unclonable(input()))).message).to.equal('transform returned to: a function, which cannot be sent back from its worker');
    expect(await fns.echo(input({ n: 5 }))).to.deep.equal({ text: 'echo p 5' });
  });

  describe('calls that travel together (one batch to one worker)', () => {
    let one: TransformPool;
    const f: Record<string, Fn> = {};
    before(async () => {
      const names = ['echo', 'loop', 'sleep'];
      const specs = names.map((name) => ({ module: 'stuck.mjs', export: name }));
      one = await createTransformPool(specs, settings(FIXTURE_TRANSFORMS, 1, TIMEOUT));
      names.forEach((name, i) => (f[name] = (one.load(specs[i]) as { fn: Fn }).fn));
    });
    after(() => one.close());

    const timed = (p: Promise<unknown>, t0: number) =>
      p.then((value) => ({ value, ms: Date.now() - t0 }), (err: Error) => ({ error: err.message, ms: Date.now() - t0 }));

    it('each call has its own time limit, counted from its own start', async () => {
      // Together they take longer than the limit; none of them alone does.
      const t0 = Date.now();
      const ends = await Promise.all([f.sleep(input({ ms: 200 })), f.sleep(input({ ms: 200 })), f.echo(input({ n: 1 }))].map((p) => timed(p, t0)));
      expect(ends.map((e) => ('value' in e ? e.value : e.error))).to.deep.equal([{ text: 'slept 200' }, { text: 'slept 200' }, { text: 'echo p 1' }]);
      expect(ends[2].ms).to.be.at.least(2 * 200 - 20);
    });

    it('a call that gets stuck behind others fails a full time limit after it started, and only it', async () => {
      const t0 = Date.now();
      const [slept, looped, after] = await Promise.all([f.sleep(input({ ms: 200 })), f.loop(input()), f.echo(input({ n: 2 }))].map((p) => timed(p, t0)));
      expect(slept).to.deep.include({ value: { text: 'slept 200' } });
      expect(looped).to.deep.include({ error: `transform timed out after ${TIMEOUT} ms; its worker was stopped and replaced` });
      expect(looped.ms).to.be.within(200 + TIMEOUT - 20, 200 + TIMEOUT + 700);
      expect(after).to.deep.include({ value: { text: 'echo p 2' } }); // not started: run by the replacement
    });

    it('answers each call as it ends: one before a stuck call keeps its answer, at once', async () => {
      const t0 = Date.now();
      const [before, looped, after] = await Promise.all([f.echo(input({ n: 3 })), f.loop(input()), f.echo(input({ n: 4 }))].map((p) => timed(p, t0)));
      expect(before).to.deep.include({ value: { text: 'echo p 3' } });
      expect(before.ms).to.be.below(TIMEOUT / 2);
      expect(looped).to.have.property('error').that.includes('timed out');
      expect(after).to.deep.include({ value: { text: 'echo p 4' } });
    });
  });

  it('keeps the process alive while a call is out, and not once it is answered', async () => {
    // An idle pool must not hold a process (`hookrelay check`) open; a call in flight must
    // (`hookrelay test` awaits it with nothing else pending), and its time limit must not.
    const pool = fileURLToPath(new URL('../../../src/engine/transform-pool.ts', import.meta.url));
    const script = `
      import { createTransformPool } from ${JSON.stringify(pool)};
      const spec = { module: 'stuck.mjs', export: 'sleep' };
      const p = await createTransformPool([spec], ${JSON.stringify(settings(FIXTURE_TRANSFORMS, 1, 20000))});
      const t0 = Date.now();
      p.load(spec).fn({ payload: { ms: 300 }, headers: {}, query: {}, path: 'p', url: '/hooks/p', now: '' })
        .then((r) => { globalThis.t0 = t0; console.log(JSON.stringify(r)); });
      process.on('exit', () => console.log(Date.now() - globalThis.t0));`;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 15000 }, (err, stdout, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve(stdout))));
    const [answer, exitedAfter] = out.trim().split('\n');
    expect(JSON.parse(answer)).to.deep.equal({ text: 'slept 300' });
    expect(Number(exitedAfter)).to.be.below(2000); // not the 20 s time limit
  });

  it('reports a module that never finishes loading as its problem, instead of hanging the start', async () => {
    const specs = [{ module: 'echo.ts' }, { module: 'top-level-loop.mjs' }];
    const started = Date.now();
    const p = await createTransformPool(specs, settings(FIXTURE_TRANSFORMS, 1, 1000), 1500);
    expect(Date.now() - started).to.be.below(10_000);
    expect(p.load(specs[1])).to.deep.equal({ problem: "its worker was stopped after 1500 ms (a loop at the module's top level?) while loading it", key: 'module' });
    await p.close();
  });

  it('leaves no TypeScript compiler running beside a worker once its modules are loaded', async () => {
    // New source, so that tsx compiles it instead of taking it from its cache.
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'fresh.ts'), `export default (i: { path: string }): { text: string } => ({ text: '${randomUUID()} ' + i.path });\n`);
    const spec = { module: 'fresh.ts' };
    const p = await createTransformPool([spec], settings(dir, 1, 5000));
    try {
      expect(await (p.load(spec) as { fn: Fn }).fn(input())).to.have.property('text').that.match(/ p$/);
      const ps = await new Promise<string>((resolve) => execFile('ps', ['-eo', 'pid=,ppid=,args='], (_e, out) => resolve(out)));
      const rows = ps.trim().split('\n').map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l)!).map(([, pid, ppid, args]) => ({ pid, ppid, args }));
      const workers = rows.filter((r) => r.ppid === String(process.pid) && r.args.includes(dir)).map((r) => r.pid);
      expect(workers).to.have.length(1);
      expect(rows.filter((r) => workers.includes(r.ppid)).map((r) => r.args)).to.deep.equal([]);
    } finally {
      await p.close();
    }
  });

  describe('hostile inputs and transforms', () => {
    let hp: TransformPool;
    let memoryPool: TransformPool;
    const h: Record<string, Fn> = {};
    const m: Record<string, Fn> = {};
    const LIMIT = 4000;
    before(async () => {
      const specs = ['echo', 'native', 'fill', 'hog', 'extraMessage'].map((name) => ({ module: name === 'echo' ? 'stuck.mjs' : 'hostile.mjs', export: name }));
      hp = await createTransformPool(specs, settings(FIXTURE_TRANSFORMS, 2, LIMIT, 64));
      specs.forEach((spec) => (h[spec.export] = (hp.load(spec) as { fn: Fn }).fn));
      // hog and fill under a time limit no loaded machine reaches before 64 MB: a time-out fails their specs.
      memoryPool = await createTransformPool(specs, settings(FIXTURE_TRANSFORMS, 1, 60_000, 64));
      specs.forEach((spec) => (m[spec.export] = (memoryPool.load(spec) as { fn: Fn }).fn));
    });
    after(() => Promise.all([hp.close(), memoryPool.close()]));

    it('an input that cannot be handed to a worker fails only its own call, not the batch it travels in', async () => {
      // Sent in one turn of the event loop: one batch per worker, the poisoned call in one of them.
      // (A BigInt: JSON, how inputs travel, has no form for it, as structured clone had none for a function.)
      const calls = Array.from({ length: 21 }, (_, n) => h.echo(n === 10 ? input({ n, poison: 10n }) : input({ n })));
      const results = await Promise.allSettled(calls);
      expect(results.map((r) => r.status)).to.deep.equal(Array.from({ length: 21 }, (_, n) => (n === 10 ? 'rejected' : 'fulfilled')));
      expect((results[10] as PromiseRejectedResult).reason.message).to.match(/^the transform input could not be handed to a worker: /);
      expect((results[3] as PromiseFulfilledResult<unknown>).value).to.deep.equal({ text: 'echo p 3' });
    });

    it('a call stuck in native work is stopped at its time limit, its worker replaced', async () => {
      const t0 = Date.now();
      const err = await rejection(h.native(input({ seconds: 23.4567 })));
      expect(err.message).to.equal(`transform timed out after ${LIMIT} ms; its worker was stopped and replaced`);
      expect(Date.now() - t0).to.be.below(LIMIT + 700);
      expect(await Promise.all([h.echo(input({ n: 1 })), h.echo(input({ n: 2 }))])).to.deep.equal([{ text: 'echo p 1' }, { text: 'echo p 2' }]);
      // Stopped, not running on: the worker and what it spawned are gone.
      await new Promise((r) => setTimeout(r, 100));
      const ps = await new Promise<string>((resolve) => execFile('ps', ['-eo', 'args'], (_e, out) => resolve(out)));
      expect(ps).to.not.include('sleep 23.4567');
    });

    for (const name of ['hog', 'fill'] as const) {
      it(`a transform past the heap limit (${name}) fails its call; the pool and the process serve on`, async () => {
        const err = await rejection(m[name]!(input()));
        expect(err.message).to.equal('the transform worker was aborted, most likely out of memory (its heap limit is hooks.transformMaxMemoryMb, 64 MB); it was replaced');
        expect(await m.echo!(input({ n: 3 }))).to.deep.equal({ text: 'echo p 3' });
      });
    }

    it('a transform that sends a message of its own has its worker stopped, its call failed; the rest go on', async () => {
      const err = await rejection(h.extraMessage(input()));
      expect(err.message).to.equal('the transform worker sent a message that is not an answer; it was stopped and replaced');
      expect(await Promise.all([h.echo(input({ n: 4 })), h.echo(input({ n: 5 }))])).to.deep.equal([{ text: 'echo p 4' }, { text: 'echo p 5' }]);
    });
  });

  it('close fails the call in flight and later calls', async () => {
    const spec = { module: 'stuck.mjs', export: 'never' };
    const p = await createTransformPool([spec], settings(FIXTURE_TRANSFORMS, 1, 10_000));
    const fn = (p.load(spec) as { fn: Fn }).fn;
    const inFlight = rejection(fn(input()));
    await p.close();
    expect((await inFlight).message).to.equal('the transforms were closed');
    expect((await rejection(fn(input()))).message).to.equal('the transforms are closed');
  });
});
