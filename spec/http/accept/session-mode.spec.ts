import { expect } from 'chai';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { call, until } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * `sessionMode` on `/agent` (issue 32; openclaw/openclaw docs/gateway/config-hooks.md "Hook
 * agent payload"): `persistent` (hookrelay's default) continues the session key's
 * conversation; `isolated` runs from an empty history and leaves the conversation as it was.
 */
describe('http: /agent sessionMode', function () {
  let gw: InProcess;
  let model: FakeModel;
  before(async () => {
    model = await startFakeModel([{ reply: 'noted' }]);
    gw = await startInProcess({ agent: { baseUrl: model.baseUrl, model: 'm' } });
  });
  after(async () => {
    await gw?.stop();
    await model?.close();
  });

  async function runTurn(json: Record<string, unknown>): Promise<string[]> {
    const res = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { deliver: false, ...json } });
    expect(res.status, JSON.stringify(res.data)).to.equal(202);
    await until(`run ${res.data.runId} ended`, async () => (await call(`${gw.hooks}/runs/${res.data.runId}`, { token: ADMIN_TOKEN })).data.run.status === 'succeeded');
    // The run's own model request (heartbeats for the summaries come in between).
    const mine = model.requests.find((r) => r.body.messages.at(-1)!.content.includes(json.message as string))!;
    return mine.body.messages.map((m) => m.content);
  }

  it('persistent continues the conversation; isolated sends no earlier turn and adds none', async () => {
    const first = await runTurn({ message: 'first turn', sessionKey: 'hook:s:1' });
    expect(first.join('\n')).to.include('first turn');
    const isolated = await runTurn({ message: 'alone', sessionKey: 'hook:s:1', sessionMode: 'isolated' });
    expect(isolated.join('\n'), 'no earlier turn').not.to.include('first turn');
    expect(isolated.join('\n')).to.include('alone');
    const again = await runTurn({ message: 'third turn', sessionKey: 'hook:s:1', sessionMode: 'persistent' });
    expect(again.join('\n')).to.include('first turn');
    expect(again.join('\n'), 'the isolated turn is not part of the conversation').not.to.include('alone');
  });

  it('an unknown sessionMode is 400 invalid_payload naming the values', async () => {
    const res = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'm', sessionMode: 'shared' } });
    expect(res.status).to.equal(400);
    expect(res.data.error).to.deep.equal({ code: 'invalid_payload', message: 'sessionMode must be one of: persistent, isolated' });
  });
});
