import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Hostile payloads against JSONata templates, through the real listener and store: a guard
 * trip is an ordinary 500 transform_failed, the process keeps answering, and nothing is
 * stored for a refused request. A catastrophic regex is no failure at all: it is answered at
 * once on the linear-time engine (the old code blocked the event loop for minutes here).
 */
describe('http: JSONata templates cannot crash or stall the gateway', () => {
  let gw: InProcess;
  const EVIL = `${'a'.repeat(32)}!`;
  before(async () => {
    gw = await startInProcess({
      hooks: {
        mappings: [
          { id: 'pad', match: { path: 'pad' }, action: 'wake', wakeMode: 'next-heartbeat', engine: 'jsonata', textTemplate: '$pad("x", n, "-") & secret' },
          { id: 'regex', match: { path: 'regex' }, action: 'wake', wakeMode: 'next-heartbeat', engine: 'jsonata', textTemplate: '$contains(s, /(a+)+$/) ? "a-run" : "no a-run"' },
          { id: 'note', match: { path: 'note' }, action: 'wake', wakeMode: 'next-heartbeat', engine: 'jsonata', textTemplate: '"note: " & text' },
        ],
      },
    });
  });
  after(async () => { await gw.stop(); });

  const post = (name: string, json: unknown) => call(`${gw.hooks}/${name}`, { token: TOKEN, json });
  const alive = async () => {
    const health = await call(`${gw.base}/healthz`);
    expect(health.status, 'healthz').to.equal(200);
  };

  it('500 transform_failed for a $pad width of 2e8, without payload text; the process keeps answering', async () => {
    const r = await post('pad', { n: 200_000_000, secret: 'hunter2' });
    expect(r.status, r.text).to.equal(500);
    expect(r.data.error.code).to.equal('transform_failed');
    expect(r.text).to.not.include('hunter2');
    await alive();
  });

  it('answers a catastrophic regex at once, while /healthz and a normal wake answer beside it', async () => {
    const [regex, health, note] = await Promise.all([
      post('regex', { s: EVIL }),
      call(`${gw.base}/healthz`),
      post('note', { text: 'first' }),
    ]);
    expect(regex.status, regex.text).to.equal(200);
    expect(health.status).to.equal(200);
    expect(note.status, note.text).to.equal(200);
  });

  it('stores nothing for the refused requests: the events are only the good ones', async () => {
    expect((await post('note', { text: 'second' })).status).to.equal(200);
    const r = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
    expect(r.status, r.text).to.equal(200);
    const texts = (r.data.events as { kind: string; text: string }[]).filter((e) => e.kind === 'wake').map((e) => e.text);
    expect(texts).to.have.members(['no a-run', 'note: first', 'note: second']);
    expect(r.text).to.not.include('hunter2');
  });
});
