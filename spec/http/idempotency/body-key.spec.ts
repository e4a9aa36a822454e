import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Current OpenClaw clients (CONTRACT.md §5, §8; openclaw/openclaw docs/gateway/config-hooks.md
 * "Hook agent payload"): `/agent` bodies carry `idempotencyKey` and `agentId`.
 */
describe('http: /agent bodies as current OpenClaw clients send them (issue 32)', function () {
  let gw: InProcess;
  before(async () => {
    gw = await startInProcess({ agent: { id: 'main' } });
  });
  after(async () => {
    await gw?.stop();
  });
  const agent = (json: unknown, headers: Record<string, string> = {}) => call(`${gw.hooks}/agent`, { token: TOKEN, json, headers });
  const runCount = async () => (await call(`${gw.hooks}/runs?limit=200`, { token: ADMIN_TOKEN })).data.runs.length;

  it("the same body with its own idempotencyKey sent twice is one run; the second gets the first answer, replayed", async () => {
    const before = await runCount();
    const body = { message: 'ship order 9', idempotencyKey: 'order-9' };
    const first = await agent(body);
    const second = await agent(body);
    expect(first.status).to.equal(202);
    expect(second.status).to.equal(202);
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
    expect(second.data).to.deep.equal(first.data);
    expect(await runCount()).to.equal(before + 1);
  });

  it('a header key takes precedence over the body key', async () => {
    const body = { message: 'header first', idempotencyKey: 'body-k' };
    const first = await agent(body, { 'Idempotency-Key': 'hdr-1' });
    const second = await agent(body, { 'Idempotency-Key': 'hdr-2' });
    expect(second.headers.get('idempotent-replayed')).to.equal(null);
    expect(second.data.runId).not.to.equal(first.data.runId);
  });

  it('a body key longer than 255 characters is 400 invalid_payload; one that is not text too', async () => {
    for (const idempotencyKey of ['k'.repeat(256), 42]) {
      const res = await agent({ message: 'm', idempotencyKey });
      expect(res.status).to.equal(400);
      expect(res.data.error.code).to.equal('invalid_payload');
      expect(res.data.error.message).to.match(/^idempotencyKey/);
    }
  });

  it('agentId must name agent.id (default main): another is 400 invalid_payload naming it', async () => {
    expect((await agent({ message: 'm', agentId: 'main' })).status).to.equal(202);
    expect((await agent({ message: 'm', agentId: ' Main ' })).status, 'case-insensitive, as in OpenClaw').to.equal(202);
    const res = await agent({ message: 'm', agentId: 'ops' });
    expect(res.status).to.equal(400);
    expect(res.data.error).to.deep.equal({ code: 'invalid_payload', message: 'agentId names no agent here: the only agent is agent.id ("main")' });
  });

  it('waitForCompletion is not refused', async () => {
    expect((await agent({ message: 'm', waitForCompletion: false })).status).to.equal(202);
  });
});
