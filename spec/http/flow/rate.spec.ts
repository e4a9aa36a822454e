import { expect } from 'chai';
import { SqliteStore } from '../../../src/store/sqlite.js';
import { ADMIN_TOKEN, call, tmpDir } from '../../support/gateway.js';
import { startInProcess, TOKEN as IN_PROCESS_TOKEN, type InProcess } from '../../support/in-process.js';
import { freshDatabase } from '../../support/postgres.js';

const TOKEN = 'flow-rate-token';
const MAPPINGS = [
  { id: 'limited', match: { path: 'limited' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'limited {{n}}', ratePerMinute: 2 },
  { id: 'free', match: { path: 'free' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'free {{n}}' },
  { id: 'batch', match: { path: 'batch' }, action: 'wake', wakeMode: 'next-heartbeat', forEach: 'items', textTemplate: 'item {{id}}', idempotencyKey: '{{id}}', ratePerMinute: 2 },
];

/** `ratePerMinute` (CONTRACT.md §14), against the real app on each store. */
describe('flow control: per-mapping ratePerMinute', function () {
  this.timeout(60000);
  const gateways: InProcess[] = [];
  afterEach(async () => {
    for (const g of gateways.splice(0)) await g.stop();
  });

  async function gateway(store?: Record<string, unknown>): Promise<InProcess> {
    const g = await startInProcess({
      ...(store ? { store } : {}),
      hooks: { token: TOKEN, mappings: MAPPINGS },
    }, tmpDir('hookrelay-rate-'));
    gateways.push(g);
    return g;
  }
  const post = (g: InProcess, path: string, n: number, headers: Record<string, string> = {}) => call(`${g.hooks}/${path}`, { token: TOKEN, json: { n }, headers });

  for (const backend of ['sqlite', 'postgres'] as const) {
    it(`${backend}: past the rate, 429 rate_limited with Retry-After; replays and refusals do not count; another mapping is unaffected`, async () => {
      const g = await gateway(backend === 'postgres' ? { kind: 'postgres', url: await freshDatabase('flowrate') } : undefined);
      const first = await post(g, 'limited', 1, { 'idempotency-key': 'k1' });
      expect(first.status, first.text).to.equal(200);
      // A bad request is refused before the window: it does not count.
      expect((await call(`${g.hooks}/limited`, { token: TOKEN, raw: '{' })).status).to.equal(400);
      // A replay is answered, and does not count.
      const again = await post(g, 'limited', 1, { 'idempotency-key': 'k1' });
      expect(again.status).to.equal(200);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect((await post(g, 'limited', 2)).status).to.equal(200);
      const refused = await post(g, 'limited', 3);
      expect(refused.status).to.equal(429);
      expect(refused.data.error.code).to.equal('rate_limited');
      expect(refused.data.error.message).to.include('ratePerMinute');
      const retry = Number(refused.headers.get('retry-after'));
      expect(retry).to.be.within(55, 60);
      expect((await post(g, 'limited', 4)).status, 'a refusal did not free anything').to.equal(429);
      // A replay of a request accepted earlier is still answered while the mapping is limited.
      expect((await post(g, 'limited', 1, { 'idempotency-key': 'k1' })).status).to.equal(200);
      for (let n = 1; n <= 5; n++) expect((await post(g, 'free', n)).status, 'the other mapping').to.equal(200);
      const events = (await call(`${g.hooks}/events?after=0&limit=100`, { token: ADMIN_TOKEN })).data.events.map((e: { text: string }) => e.text);
      expect(events.filter((t: string) => t.startsWith('limited'))).to.deep.equal(['limited 1', 'limited 2']);
      const metrics = (await call(`${g.base}/metrics`, { token: ADMIN_TOKEN })).text;
      expect(metrics).to.match(/^hookrelay_rate_limited_total\{mapping="limited"\} 2$/m);
    });
  }

  it('a forEach batch counts once; a batch that is all replays does not count', async () => {
    const g = await gateway();
    const batch = (...ids: string[]) => call(`${g.hooks}/batch`, { token: TOKEN, json: { items: ids.map((id) => ({ id })) } });
    expect((await batch('a', 'b')).status).to.equal(200);
    const again = await batch('a', 'b');
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect((await batch('c')).status, 'the replay took no place').to.equal(200);
    expect((await batch('d')).status).to.equal(429);
    expect((await batch('a')).status, 'a replay is still answered').to.equal(200);
  });

  it('postgres: two instances share one window', async () => {
    const url = await freshDatabase('flowrate2');
    const a = await gateway({ kind: 'postgres', url });
    const b = await gateway({ kind: 'postgres', url });
    expect((await post(a, 'limited', 1)).status).to.equal(200);
    expect((await post(b, 'limited', 2)).status).to.equal(200);
    expect((await post(a, 'limited', 3)).status).to.equal(429);
    expect((await post(b, 'limited', 4)).status).to.equal(429);
  });

  it('a request answered as the replay of a concurrent one with its key gives its place back (one mapping, and a forEach batch)', async () => {
    // Both requests look their key up before either commits, take a place each, and meet at the
    // commit: the store holds the second one's key, and it is answered as the first one's replay.
    const proto = SqliteStore.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const accept = proto.accept!;
    // While `pairing`, each commit waits for a second one, and both go on together.
    let pairing = false;
    let waiting: (() => void) | undefined;
    proto.accept = function (this: unknown, ...args: unknown[]) {
      const go = () => accept.apply(this, args);
      if (!pairing) return go();
      return new Promise<void>((resolve) => {
        if (!waiting) {
          waiting = resolve;
          return;
        }
        waiting();
        waiting = undefined;
        resolve();
      }).then(go);
    };
    const gw = await startInProcess({ hooks: { mappings: MAPPINGS } });
    const send = (path: string, json: object, key?: string) =>
      call(`${gw.hooks}/${path}`, { token: IN_PROCESS_TOKEN, json, headers: key ? { 'idempotency-key': key } : {} });
    const concurrently = async <T>(...requests: (() => Promise<T>)[]) => {
      pairing = true;
      try {
        return await Promise.all(requests.map((r) => r()));
      } finally {
        pairing = false;
      }
    };
    try {
      const pair = await concurrently(() => send('limited', { n: 1 }, 'same'), () => send('limited', { n: 1 }, 'same'));
      expect(pair.map((r) => r.status)).to.deep.equal([200, 200]);
      expect(pair.filter((r) => r.headers.get('idempotent-replayed') === 'true')).to.have.length(1);
      expect(pair[0]!.data.eventId).to.equal(pair[1]!.data.eventId);
      // ratePerMinute is 2: the replay's place was given back, so one more is accepted, then 429.
      expect((await send('limited', { n: 2 })).status, 'the replay still held a place').to.equal(200);
      expect((await send('limited', { n: 3 })).status).to.equal(429);

      const batch = () => send('batch', { items: [{ id: 'x' }, { id: 'y' }] });
      const both = await concurrently(batch, batch);
      expect(both.map((r) => r.status)).to.deep.equal([200, 200]);
      expect(both.filter((r) => r.headers.get('idempotent-replayed') === 'true')).to.have.length(1);
      expect((await send('batch', { items: [{ id: 'z' }] })).status, 'the all-replay batch still held a place').to.equal(200);
      expect((await send('batch', { items: [{ id: 'w' }] })).status).to.equal(429);
      const events = (await call(`${gw.hooks}/events?after=0&limit=100`, { token: ADMIN_TOKEN })).data.events.map((e: { text: string }) => e.text);
      expect(events).to.deep.equal(['limited 1', 'limited 2', 'item x', 'item y', 'item z']);
    } finally {
      await gw.stop();
      proto.accept = accept;
    }
  });

  it('the accept path of a mapping without flow settings does no store work beyond its commit', async () => {
    const calls: string[] = [];
    const proto = SqliteStore.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
    const originals = new Map<string, (...args: unknown[]) => unknown>();
    for (const name of ['accept', 'findKeys', 'takeRate', 'claimRuns', 'getState', 'listEvents', 'getRun', 'listRuns', 'logRequests']) {
      const original = proto[name]!;
      originals.set(name, original);
      proto[name] = function (this: unknown, ...args: unknown[]) {
        calls.push(name);
        return original.apply(this, args);
      };
    }
    const gw = await startInProcess({ hooks: { mappings: [...MAPPINGS, { id: 'slow', match: { path: 'slow' }, messageTemplate: 'x', concurrency: 1 }] } });
    try {
      calls.length = 0;
      const r = await call(`${gw.hooks}/free`, { token: IN_PROCESS_TOKEN, json: { n: 1 } });
      expect(r.status).to.equal(200);
      expect(calls).to.deep.equal(['accept']);
      calls.length = 0;
      expect((await call(`${gw.hooks}/limited`, { token: IN_PROCESS_TOKEN, json: { n: 1 } })).status).to.equal(200);
      expect(calls).to.deep.equal(['takeRate', 'accept']);
    } finally {
      await gw.stop();
      for (const [name, original] of originals) proto[name] = original;
    }
  });
});
