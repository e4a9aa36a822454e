import { expect } from 'chai';
import { EVENTS_MAX_BYTES } from '../../../src/http/limits.js';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/** `GET /events` answers are bounded in bytes as well as in count; the client pages on with `after`. */
describe('http: /events answers are bounded in bytes', () => {
  let gw: InProcess;
  const ids: string[] = [];
  before(async () => {
    // The one large event is past the default hooks.maxTextLength, which is not what this spec is about.
    gw = await startInProcess({ hooks: { maxBodyBytes: 4 * 1024 * 1024, maxTextLength: 2 * EVENTS_MAX_BYTES } });
    for (let i = 0; i < 30; i++) {
      const r = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: `${i} ${'x'.repeat(100 * 1024)}`, mode: 'next-heartbeat' } });
      expect(r.status).to.equal(200);
      ids.push(r.data.eventId);
    }
    // One event larger than a whole answer's budget: it still comes, alone.
    const big = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'y'.repeat(EVENTS_MAX_BYTES + 100), mode: 'next-heartbeat' } });
    ids.push(big.data.eventId);
  });
  after(async () => { await gw.stop(); });

  it('limit=1000 over 3 MB of events answers about a megabyte, and paging with after sees each event once', async () => {
    const seen: string[] = [];
    let after = 0;
    let pages = 0;
    for (;;) {
      const r = await call(`${gw.hooks}/events?after=${after}&limit=1000`, { token: ADMIN_TOKEN });
      expect(r.status).to.equal(200);
      const events = r.data.events as { seq: number; id: string }[];
      if (events.length === 0) break;
      pages++;
      // Today's answer for the 30 small events would be 3 MB; the budget holds it near 1 MiB.
      expect(Buffer.byteLength(r.text), `page ${pages}`).to.be.below(events.length === 1 ? 2 * EVENTS_MAX_BYTES : EVENTS_MAX_BYTES + 64 * 1024);
      seen.push(...events.map((e) => e.id));
      after = events[events.length - 1]!.seq;
    }
    expect(seen).to.deep.equal(ids);
    expect(pages).to.be.greaterThan(3);
  });
});
