import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { call, sleep } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/** Every event and run the server lists (what was acted on). */
async function acted(gw: InProcess): Promise<{ events: string[]; runs: string[] }> {
  const events = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
  const runs = await call(`${gw.hooks}/runs?limit=200`, { token: ADMIN_TOKEN });
  return { events: events.data.events.map((e: { id: string }) => e.id), runs: runs.data.runs.map((r: { runId: string }) => r.runId) };
}

const post = (gw: InProcess, name: string, json: unknown, headers: Record<string, string> = {}) =>
  call(`${gw.hooks}/${name}`, { token: TOKEN, json, headers });

const mails = (...ids: string[]) => ({ source: 'email', messages: ids.map((id) => ({ id, from: 'a@b.c', subject: `s ${id}`, snippet: '', body: 'b' })) });

describe('idempotency (CONTRACT.md §8)', function () {
  this.timeout(30000);
  let gw: InProcess;

  afterEach(async () => {
    await gw?.stop();
  });

  describe('keys from headers', () => {
    beforeEach(async () => {
      gw = await startInProcess({
        hooks: {
          mappings: [
            { id: 'gh', match: { path: 'github' }, action: 'wake', textTemplate: 'push {{ref}}' },
            { id: 'gh2', match: { path: 'github2' }, action: 'wake', textTemplate: 'push {{ref}}' },
          ],
        },
      });
    });

    for (const header of ['Idempotency-Key', 'X-OpenClaw-Idempotency-Key', 'webhook-id', 'X-GitHub-Delivery']) {
      it(`${header}: a repeat gets the first status and body with Idempotent-Replayed, and acts once`, async () => {
        const first = await post(gw, 'wake', { text: 'hello' }, { [header]: 'k-1' });
        expect(first.status).to.equal(200);
        expect(first.headers.get('idempotent-replayed')).to.equal(null);
        const again = await post(gw, 'wake', { text: 'hello' }, { [header]: 'k-1' });
        expect(again.status).to.equal(200);
        expect(again.headers.get('idempotent-replayed')).to.equal('true');
        expect(again.text).to.equal(first.text);
        expect((await acted(gw)).events).to.deep.equal([first.data.eventId]);
      });
    }

    it('the first header present wins (Idempotency-Key before X-GitHub-Delivery)', async () => {
      const first = await post(gw, 'github', { ref: 'main' }, { 'Idempotency-Key': 'a', 'X-GitHub-Delivery': 'b' });
      const sameFirst = await post(gw, 'github', { ref: 'main' }, { 'Idempotency-Key': 'a', 'X-GitHub-Delivery': 'c' });
      expect(sameFirst.headers.get('idempotent-replayed')).to.equal('true');
      expect(sameFirst.data.eventId).to.equal(first.data.eventId);
      const onlyB = await post(gw, 'github', { ref: 'main' }, { 'X-GitHub-Delivery': 'b' });
      expect(onlyB.headers.get('idempotent-replayed')).to.equal(null);
      expect(onlyB.data.eventId).to.not.equal(first.data.eventId);
    });

    it('a key is scoped by route: the same key on wake, agent and two mappings is four keys', async () => {
      const h = { 'Idempotency-Key': 'shared' };
      const a = await post(gw, 'wake', { text: 'x' }, h);
      const b = await post(gw, 'agent', { message: 'x', deliver: false }, h);
      const c = await post(gw, 'github', { ref: 'x' }, h);
      const d = await post(gw, 'github2', { ref: 'x' }, h);
      for (const r of [a, b, c, d]) expect(r.headers.get('idempotent-replayed'), r.text).to.equal(null);
      // …and each is remembered on its own route.
      expect((await post(gw, 'github', { ref: 'x' }, h)).data.eventId).to.equal(c.data.eventId);
      expect((await post(gw, 'agent', { message: 'x', deliver: false }, h)).headers.get('idempotent-replayed')).to.equal('true');
      const { events, runs } = await acted(gw);
      expect(events).to.have.length(3);
      expect(runs).to.deep.equal([b.data.runId]);
    });

    it('the same key with a different body is 422 idempotency_key_reused and acts on nothing', async () => {
      await post(gw, 'agent', { message: 'one', deliver: false }, { 'Idempotency-Key': 'k' });
      const other = await post(gw, 'agent', { message: 'two', deliver: false }, { 'Idempotency-Key': 'k' });
      expect(other.status).to.equal(422);
      expect(other.data.error.code).to.equal('idempotency_key_reused');
      expect(other.text).to.not.include('"k"');
      expect((await acted(gw)).runs).to.have.length(1);
    });

    it('a key of 256 characters, or with a control character, is 400 invalid_payload; 255 is fine', async () => {
      const long = await post(gw, 'wake', { text: 'x' }, { 'Idempotency-Key': 'k'.repeat(256) });
      expect(long.status).to.equal(400);
      expect(long.data.error.code).to.equal('invalid_payload');
      expect(long.data.error.message).to.match(/idempotency-key: must have at most 255 characters/);
      const control = await post(gw, 'github', { ref: 'x' }, { 'webhook-id': 'a\tb' });
      expect(control.status).to.equal(400);
      expect(control.data.error.code).to.equal('invalid_payload');
      expect((await post(gw, 'wake', { text: 'x' }, { 'Idempotency-Key': 'k'.repeat(255) })).status).to.equal(200);
    });

    it('an empty key is no key', async () => {
      const e1 = await post(gw, 'wake', { text: 'x' }, { 'Idempotency-Key': '' });
      const e2 = await post(gw, 'wake', { text: 'x' }, { 'Idempotency-Key': '' });
      expect(e2.headers.get('idempotent-replayed')).to.equal(null);
      expect(e2.data.eventId).to.not.equal(e1.data.eventId);
    });

    it('50 concurrent requests with one key act once: 49 replays with identical bodies', async () => {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => post(gw, 'agent', { message: 'once', deliver: false }, { 'Idempotency-Key': 'burst' })),
      );
      const statuses = new Set(answers.map((a) => a.status));
      expect([...statuses]).to.deep.equal([202]);
      const replays = answers.filter((a) => a.headers.get('idempotent-replayed') === 'true');
      expect(replays).to.have.length(49);
      expect(new Set(answers.map((a) => a.text)).size).to.equal(1);
      expect((await acted(gw)).runs).to.deep.equal([answers[0]!.data.runId]);
    });
  });

  describe('mapping templates', () => {
    beforeEach(async () => {
      gw = await startInProcess({
        hooks: {
          presets: ['email'],
          mappings: [
            { id: 'order', match: { path: 'order' }, action: 'wake', textTemplate: 'order {{id}}', idempotencyKey: 'order:{{id}}' },
            { id: 'batch', match: { path: 'batch' }, forEach: 'items', action: 'wake', engine: 'jsonata', textTemplate: '"item " & n', idempotencyKey: 'k ? "item:" & k : ""' },
          ],
        },
      });
    });

    it('a retried forEach batch (e-mail preset) acts only on the new items; the answer lists all, the old with their first ids and replayed: true', async () => {
      const first = await post(gw, 'email', mails('m1', 'm2'));
      expect(first.status).to.equal(202);
      expect(first.headers.get('idempotent-replayed')).to.equal(null);
      const retry = await post(gw, 'email', mails('m1', 'm2', 'm3'));
      expect(retry.status).to.equal(202);
      expect(retry.headers.get('idempotent-replayed')).to.equal(null);
      const [a1, a2, a3] = retry.data.actions;
      expect(a1).to.deep.equal({ ...first.data.actions[0], replayed: true });
      expect(a2).to.deep.equal({ ...first.data.actions[1], replayed: true });
      expect(a3.replayed).to.equal(undefined);
      expect(retry.data.runId).to.equal(first.data.actions[0].runId);
      const runs = (await acted(gw)).runs;
      expect(runs).to.have.length(3);
      expect(runs).to.include(a3.runId);
      // The whole batch again: nothing new, so the answer as a whole is a replay.
      const again = await post(gw, 'email', mails('m3', 'm1'));
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.data.actions.map((a: { runId: string }) => a.runId)).to.deep.equal([a3.runId, a1.runId]);
      expect((await acted(gw)).runs).to.have.length(3);
    });

    it('a template key replaces the header key; a mail repeated inside one batch runs once', async () => {
      const r = await post(gw, 'email', mails('x1', 'x1'), { 'Idempotency-Key': 'batch-1' });
      expect(r.data.actions[1]).to.deep.equal({ ...r.data.actions[0], replayed: true });
      const other = await post(gw, 'email', mails('x2'), { 'Idempotency-Key': 'batch-1' });
      expect(other.status).to.equal(202);
      expect((await acted(gw)).runs).to.have.length(2);
    });

    it('a forEach item with the same key but other content is 422', async () => {
      await post(gw, 'email', mails('y1'));
      const changed = mails('y1');
      changed.messages[0]!.subject = 'edited';
      const r = await post(gw, 'email', changed);
      expect(r.status).to.equal(422);
      expect(r.data.error.code).to.equal('idempotency_key_reused');
      expect(r.data.error.message).to.match(/^actions\[0\]\.idempotencyKey: /);
    });

    it('items whose key renders empty have no key; keyed ones are kept (JSONata)', async () => {
      const body = { items: [{ n: 1, k: 'a' }, { n: 2 }] };
      const first = await post(gw, 'batch', body);
      const second = await post(gw, 'batch', body);
      expect(second.data.actions[0]).to.deep.equal({ ...first.data.actions[0], replayed: true });
      expect(second.data.actions[1].replayed).to.equal(undefined);
      expect((await acted(gw)).events).to.have.length(3);
    });

    it('a template key on a plain mapping keys the request: replay, and 422 on another body', async () => {
      const first = await post(gw, 'order', { id: 7 });
      const again = await post(gw, 'order', { id: 7 });
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.text).to.equal(first.text);
      const other = await post(gw, 'order', { id: 7, note: 'x' });
      expect(other.status).to.equal(422);
      const tooLong = await post(gw, 'order', { id: 'x'.repeat(300) });
      expect(tooLong.status).to.equal(400);
      expect(tooLong.data.error.message).to.match(/idempotencyKey: must have at most 255/);
      expect((await acted(gw)).events).to.deep.equal([first.data.eventId]);
    });
  });

  describe('a signed message id is the key (standard-webhooks, Svix)', () => {
    const SECRET = `whsec_${Buffer.from('idempotency spec signing key').toString('base64')}`;
    beforeEach(async () => {
      gw = await startInProcess({
        hooks: { mappings: [{ id: 'sw', match: { path: 'sw' }, action: 'wake', textTemplate: 'sw {{n}}', auth: 'signature', verify: { scheme: 'standard-webhooks', secret: SECRET } }] },
      });
    });

    /** A delivery as its sender signs it once, under Standard Webhooks' or Svix's header names; resending it resends these bytes. */
    const delivery = (id: string, body: string, names: 'webhook' | 'svix') => {
      const at = new Date();
      return {
        [`${names}-id`]: id,
        [`${names}-timestamp`]: String(Math.floor(at.getTime() / 1000)),
        [`${names}-signature`]: new Webhook(SECRET).sign(id, at, body),
        'content-type': 'application/json',
      };
    };
    const send = (headers: Record<string, string>, body: string) => call(`${gw.hooks}/sw`, { raw: body, headers });

    it('Svix: the same svix-signed delivery sent twice acts once; the retry is answered as a replay', async () => {
      const body = JSON.stringify({ n: 1 });
      const headers = delivery('msg_svix_1', body, 'svix');
      const first = await send(headers, body);
      expect(first.status, first.text).to.equal(200);
      const retry = await send(headers, body);
      expect(retry.status).to.equal(200);
      expect(retry.headers.get('idempotent-replayed')).to.equal('true');
      expect(retry.text).to.equal(first.text);
      // Another message id is another delivery.
      const next = await send(delivery('msg_svix_2', body, 'svix'), body);
      expect(next.headers.get('idempotent-replayed')).to.equal(null);
      expect((await acted(gw)).events).to.deep.equal([first.data.eventId, next.data.eventId]);
    });

    it('a captured signed request resent with a fresh unsigned key header is a replay, not a new act', async () => {
      const body = JSON.stringify({ n: 2 });
      const captured = delivery('msg_captured', body, 'webhook');
      const first = await send({ ...captured, 'Idempotency-Key': 'sender-key-1' }, body);
      expect(first.status, first.text).to.equal(200);
      for (const header of ['Idempotency-Key', 'X-OpenClaw-Idempotency-Key', 'X-GitHub-Delivery']) {
        const again = await send({ ...captured, [header]: `fresh-${header}` }, body);
        expect(again.status, header).to.equal(200);
        expect(again.headers.get('idempotent-replayed'), header).to.equal('true');
        expect(again.data.eventId, header).to.equal(first.data.eventId);
      }
      expect((await acted(gw)).events).to.deep.equal([first.data.eventId]);
    });
  });

  it('a key is answered within hooks.idempotencyWindowSeconds and acts again after it', async () => {
    gw = await startInProcess({ hooks: { idempotencyWindowSeconds: 1 } });
    const first = await post(gw, 'wake', { text: 'w' }, { 'Idempotency-Key': 'short' });
    expect((await post(gw, 'wake', { text: 'w' }, { 'Idempotency-Key': 'short' })).headers.get('idempotent-replayed')).to.equal('true');
    await sleep(1300);
    const later = await post(gw, 'wake', { text: 'w' }, { 'Idempotency-Key': 'short' });
    expect(later.headers.get('idempotent-replayed')).to.equal(null);
    expect(later.data.eventId).to.not.equal(first.data.eventId);
    // And the new use is remembered in its turn.
    expect((await post(gw, 'wake', { text: 'w' }, { 'Idempotency-Key': 'short' })).data.eventId).to.equal(later.data.eventId);
  });
});
