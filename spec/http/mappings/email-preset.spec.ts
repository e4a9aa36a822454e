import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { emailBatch } from '../../support/email-batch.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/** The seed's own e-mail example (CONTRACT.md §7), exactly as the seed writes it. */
const SEED_EXAMPLE = { source: 'gmail', messages: [{ from: 'Ada', subject: 'Hello', snippet: 'Hi' }] };

const post = (gw: InProcess, name: string, json: unknown) => call(`${gw.hooks}/${name}`, { token: TOKEN, json });
const run = async (gw: InProcess, runId: string) => (await call(`${gw.hooks}/runs/${runId}`, { token: ADMIN_TOKEN })).data.run;
const UUID_KEY = /^hook:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('the e-mail preset takes what senders send (CONTRACT.md §7, issue 32)', function () {
  this.timeout(30000);
  let gw: InProcess;

  before(async () => {
    gw = await startInProcess({ hooks: { presets: ['email'] } });
  });
  after(async () => {
    await gw?.stop();
  });

  it("the seed's own example to /hooks/gmail is exactly one run, in a session of its own", async () => {
    const res = await post(gw, 'gmail', SEED_EXAMPLE);
    expect(res.status, JSON.stringify(res.data)).to.equal(202);
    expect(res.data.actions).to.have.length(1);
    expect(res.data.sessionKey).to.match(UUID_KEY);
    const r = await run(gw, res.data.runId);
    expect(r).to.include({ name: 'Email', sessionKey: res.data.sessionKey });
  });

  it('a mail with neither id nor uid has no idempotency key: sent twice, it runs twice, each in its own session', async () => {
    const first = await post(gw, 'email', SEED_EXAMPLE);
    const second = await post(gw, 'email', SEED_EXAMPLE);
    expect(second.status).to.equal(202);
    expect(second.headers.get('idempotent-replayed')).to.equal(null);
    expect(second.data.runId).not.to.equal(first.data.runId);
    expect(second.data.sessionKey).not.to.equal(first.data.sessionKey);
  });

  it('two mails without ids in one batch get two sessions', async () => {
    const res = await post(gw, 'email', { messages: [{ from: 'a@x' }, { from: 'b@x' }] });
    expect(res.status).to.equal(202);
    const [a, b] = res.data.actions;
    expect(a.sessionKey).to.match(UUID_KEY);
    expect(b.sessionKey).to.match(UUID_KEY);
    expect(a.sessionKey).not.to.equal(b.sessionKey);
  });

  it("a mail's uid and another mail's Message-ID never share a key, even when their text is the same", async () => {
    const byId = await post(gw, 'email', { messages: [{ id: '9:123', from: 'a@x', body: 'one' }] });
    expect(byId.status, JSON.stringify(byId.data)).to.equal(202);
    const byUid = await post(gw, 'email', { messages: [{ uid: '9:123', from: 'b@x', body: 'two' }] });
    expect(byUid.status, JSON.stringify(byUid.data)).to.equal(202);
    expect(byUid.headers.get('idempotent-replayed')).to.equal(null);
    expect(byUid.data.runId).not.to.equal(byId.data.runId);
  });

  it('still refuses a mail without a sender, naming the field', async () => {
    const res = await post(gw, 'email', { messages: [{ subject: 'no from' }] });
    expect(res.status).to.equal(400);
    expect(res.data.error.code).to.equal('invalid_payload');
    expect(res.data.error.message).to.equal("payload/messages/0/from: must have required property 'from'");
  });

  // Each item's JSONata is judged by its own steps: the mails of one batch, and the batches
  // sent at once, are evaluated side by side and must not count each other's time (§7, §8).
  it('a 200-message batch is taken whole, every time: three in a row, then three at once', async () => {
    const whole = (res: Awaited<ReturnType<typeof post>>, tag: string) => {
      expect(res.status, `${tag}: ${res.text.slice(0, 300)}`).to.equal(202);
      expect(res.data.actions, tag).to.have.length(200);
      expect(res.data.actions[199].sessionKey, tag).to.equal(`hook:email:${tag}-thread-19@mail.example`);
    };
    for (const tag of ['row1', 'row2', 'row3']) whole(await post(gw, 'email', emailBatch(200, tag)), tag);
    const tags = ['at-once1', 'at-once2', 'at-once3'];
    const answers = await Promise.all(tags.map((tag) => post(gw, 'email', emailBatch(200, tag))));
    answers.forEach((res, i) => whole(res, tags[i]!));
  });
});
