import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { FIXTURE_TRANSFORMS } from '../../unit/engine/make-config.js';
import { call, freePort, sleep, startGateway, tmpDir, type Gateway } from '../../support/gateway.js';

const TOKEN = 'spec-token-0123456789abcdef';
// Well past what the memory-hungry transforms take to reach their 64 MB heap limit (about 1 s; more on a loaded machine).
const TIMEOUT = 3000;

/** Resident memory (MB) of the gateway and its worker processes together. */
function treeRssMb(pid: number): number {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,rss=']).toString();
  let kb = 0;
  for (const line of out.trim().split('\n')) {
    const [p, pp, rss] = line.trim().split(/\s+/).map(Number);
    if (p === pid || pp === pid) kb += rss!;
  }
  return Math.round(kb / 1024);
}

/**
 * The limits of transforms and templates against the real gateway (the bin, its config, its
 * store): workers that cannot be handed a payload, block, run out of heap or post messages of
 * their own, the Handlebars stall, unbounded output and session keys.
 */
describe('http: hostile transforms, templates and session keys cannot take the gateway down', function () {
  this.timeout(60_000);
  let gw: Gateway;
  const hostile = (id: string, exported: string, action = 'wake') =>
    ({ id, match: { path: id }, action, wakeMode: 'next-heartbeat', textTemplate: 't', messageTemplate: 'm', transform: { module: 'hostile.mjs', export: exported } });

  before(async () => {
    const dir = tmpDir();
    const port = await freePort();
    gw = await startGateway({
      server: { host: '127.0.0.1', port },
      dataDir: path.join(dir, 'data'),
      agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
      heartbeat: { everySeconds: 3600 },
      hooks: {
        token: TOKEN,
        transformsDir: FIXTURE_TRANSFORMS,
        transformTimeoutMs: TIMEOUT,
        transformPoolSize: 2,
        transformMaxMemoryMb: 64,
        mappings: [
          hostile('ok', 'ok'), hostile('native', 'native'), hostile('fill', 'fill'), hostile('hog', 'hog'),
          hostile('extra', 'extraMessage'), hostile('huge', 'huge'), hostile('key-from', 'keyFrom', 'agent'),
          { id: 'nested', match: { path: 'nested' }, action: 'wake', textTemplate: '{{#each a}}{{#each ../a}}{{#each ../../a}}.{{/each}}{{/each}}{{/each}}' },
          { id: 'twice', match: { path: 'twice' }, action: 'wake', textTemplate: '{{big}}{{big}}' },
          { id: 'key-template', match: { path: 'key-template' }, action: 'agent', messageTemplate: 'm', sessionKey: '{{key}}' },
        ],
      },
    });
  });
  after(async () => { if (gw) await gw.kill(); });

  const post = (name: string, json: Record<string, unknown>) => call(`${gw.hooks}/${name}`, { token: TOKEN, json });
  const expectStatus = (r: { status: number; text: string; data: any }, status: number, code?: string) => {
    expect(r.status, r.text).to.equal(status);
    if (code) expect(r.data.error.code, r.text).to.equal(code);
  };

  it('20 good requests and 1 whose payload cannot be handed to a worker, at once: the 20 succeed (defect 5)', async () => {
    // A form field named toString became a function (defect 4, fixed elsewhere): a payload the
    // worker could not take. Whether or not it still can, it must not fail its neighbours.
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const all = await Promise.all(Array.from({ length: 21 }, (_, n) =>
      (n === 10 ? call(`${gw.hooks}/ok`, { token: TOKEN, raw: 'toString=x&valueOf=y&n=10', headers: form }) : post('ok', { n }))));
    expect(all.filter((_, n) => n !== 10).map((r) => r.status)).to.deep.equal(Array(20).fill(200));
    const poisoned = all[10]!;
    if (poisoned.status !== 200) expectStatus(poisoned, 500, 'transform_failed');
  });

  it('a transform blocked in native work: 500 at its time-out, its worker killed, memory bounded, the gateway serves on (defect 8)', async () => {
    const t0 = Date.now();
    const [a, b] = await Promise.all([post('native', { seconds: 30 }), post('native', { seconds: 30 })]);
    const ms = Date.now() - t0;
    expectStatus(a, 500, 'transform_failed');
    expectStatus(b, 500, 'transform_failed');
    expect(ms).to.be.below(TIMEOUT + 2000);
    expectStatus(await post('ok', { n: 1 }), 200);
    const ps = execFileSync('ps', ['-eo', 'args']).toString();
    expect(ps, 'the sleeps the transforms started are killed with their workers').to.not.match(/sleep 30$/m);
    console.log(`      (native: both answered in ${ms} ms; gateway + workers RSS ${treeRssMb(gw.proc.pid!)} MB)`);
  });

  for (const name of ['fill', 'hog']) {
    it(`a transform past the heap limit (${name}): 500, its worker replaced, RSS bounded, the gateway serves on (defect 8)`, async () => {
      expectStatus(await post(name, {}), 500, 'transform_failed');
      expect((await call(`${gw.base}/healthz`)).status).to.equal(200);
      expectStatus(await post('ok', { n: 2 }), 200);
      const rss = treeRssMb(gw.proc.pid!);
      console.log(`      (${name}: gateway + workers RSS ${rss} MB after)`);
      expect(rss).to.be.below(800);
    });
  }

  it('a transform that posts a message of its own: only its worker is stopped, the next requests are fine (defect 9)', async () => {
    expectStatus(await post('extra', {}), 500, 'transform_failed');
    expect(gw.proc.exitCode).to.equal(null);
    const next = await Promise.all([post('ok', { n: 3 }), post('ok', { n: 4 }), post('extra', {}), post('ok', { n: 5 })]);
    expect(next.map((r) => r.status)).to.deep.equal([200, 200, 500, 200]);
  });

  it('a nested #each over a 14 KB payload is refused, and /healthz answers meanwhile', async () => {
    const a = Array.from({ length: 3000 }, (_, i) => i);
    const hostileRender = post('nested', { a });
    const health: number[] = [];
    const polling = (async () => {
      for (let i = 0; i < 10; i++) {
        const t0 = Date.now();
        expect((await call(`${gw.base}/healthz`)).status).to.equal(200);
        health.push(Date.now() - t0);
      }
    })();
    const r = await hostileRender;
    await polling;
    expectStatus(r, 500, 'transform_failed');
    console.log(`      (nested #each: /healthz answered in at most ${Math.max(...health)} ms while it was handled)`);
    expect(Math.max(...health), 'generous: before the budget it blocked for seconds').to.be.below(1000);
  });

  it('output past hooks.maxTextLength (default 262144 characters) is 400 invalid_payload, from a transform or a template', async () => {
    const fromTransform = await post('huge', { chars: 300_000, junk: 50_000_000 });
    expectStatus(fromTransform, 400, 'invalid_payload');
    expect(fromTransform.data.error.message).to.equal('text is longer than 262144 characters (hooks.maxTextLength): send or render less, or raise hooks.maxTextLength');
    const fromTemplate = await post('twice', { big: 'x'.repeat(140_000) });
    expectStatus(fromTemplate, 400, 'invalid_payload');
    expect(fromTemplate.data.error.message).to.match(/^text is longer than 262144 characters/);
    expectStatus(await post('huge', { chars: 262_144 }), 200);
  });

  describe('session keys (CONTRACT.md §5)', () => {
    const agent = (json: Record<string, unknown>) => call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'm', deliver: false, ...json } });

    it('a Kelvin sign passes the hook: prefix only as the letter K it stands for (NFKC)', async () => {
      const r = await agent({ sessionKey: 'hoo\u212a:x' });
      expectStatus(r, 202);
      expect(r.data.sessionKey).to.equal('hooK:x');
    });

    for (const [ch, what] of [['\u202e', 'RLO'], ['\u2066', 'LRI'], ['\u200f', 'RLM'], ['\u2028', 'LINE SEPARATOR'], ['\u2029', 'PARAGRAPH SEPARATOR']]) {
      it(`a key holding ${what} is 400 invalid_payload from a request, a template and a transform alike`, async () => {
        const key = `hook:a${ch}b`;
        for (const r of [await agent({ sessionKey: key }), await post('key-template', { key }), await post('key-from', { key })]) {
          expectStatus(r, 400, 'invalid_payload');
          expect(r.data.error.message).to.match(/sessionKey must not contain bidirectional controls or line separators/);
        }
      });
    }
  });

  describe('shutdown (last: it stops the gateway)', () => {
  it('SIGTERM while a transform is blocked in native work (sleep 30): the gateway exits 0 without waiting for it (defect 8)', async () => {
    const stuck = post('native', { seconds: 30 }).catch(() => undefined);
    await sleep(300); // the call is in its worker
    const t0 = Date.now();
    const code = await gw.stop();
    const ms = Date.now() - t0;
    console.log(`      (SIGTERM with a worker in execSync: exited ${code} after ${ms} ms)`);
    expect(code).to.equal(0);
    // The listener drains the stuck request (its time-out), then the runtime's own stop grace
    // (dispatch/runtime.ts STOP_GRACE_MS, 3 s): no longer, however long the native work is.
    expect(ms).to.be.below(TIMEOUT + 3000 + 2000);
    await stuck;
  });
  });
});
