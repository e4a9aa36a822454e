import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Scheme `slack` answers Slack's signed url_verification with its challenge and no action
 * (CONTRACT.md §8). https://api.slack.com/events/url_verification
 */
const SIGNING_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const agent = { action: 'agent', messageTemplate: 'Slack: {{event.type}} {{event.text}}' };
const mappings = [
  { id: 'slack-events', match: { path: 'slack' }, ...agent, auth: 'signature', verify: { scheme: 'slack', secret: SIGNING_SECRET } },
  // auth: token (the default): the hooks token too, as usual.
  { id: 'slack-token', match: { path: 'slack-token' }, ...agent, verify: { scheme: 'slack', secret: SIGNING_SECRET } },
];

/** What Slack sends when a Request URL is saved in the app's Event Subscriptions. */
const verification = JSON.stringify({ token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl', challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P', type: 'url_verification' });
const slackHeaders = (body: string, secret = SIGNING_SECRET, ts = Math.floor(Date.now() / 1000)) => ({
  'content-type': 'application/json',
  'x-slack-request-timestamp': String(ts),
  'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`,
});

describe('http: Slack url_verification (scheme slack)', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { mappings } }); });
  after(async () => { await gw.stop(); });
  const runCount = async () => (await call(`${gw.hooks}/runs?limit=200`, { token: ADMIN_TOKEN })).data.runs.length;

  it('answers a signed url_verification with {"challenge"} as JSON, and starts no run', async () => {
    const before = await runCount();
    const r = await call(`${gw.hooks}/slack`, { raw: verification, headers: slackHeaders(verification) });
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^application\/json/);
    expect(r.text).to.equal('{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}');
    expect(await runCount()).to.equal(before);
  });

  it('answers 401 invalid_signature to an unsigned or badly signed url_verification', async () => {
    for (const headers of [{ 'content-type': 'application/json' }, slackHeaders(verification, 'not-the-signing-secret')]) {
      const r = await call(`${gw.hooks}/slack`, { raw: verification, headers });
      expect([r.status, r.data.error.code]).to.deep.equal([401, 'invalid_signature']);
      expect(r.text).to.not.include('3eZbrw1a');
    }
  });

  it('still acts on Slack\'s events: a signed event_callback starts an agent run', async () => {
    const body = JSON.stringify({ token: 'x', team_id: 'T061EG9R6', api_app_id: 'A0PNCHHK2', type: 'event_callback', event_id: 'Ev0PV52K25', event_time: 1355517523, event: { type: 'app_mention', user: 'U061F7AUR', text: '<@U0LAN0Z89> is it everything a river should be?', ts: '1515449522.000016', channel: 'C0LAN2Q65' } });
    const r = await call(`${gw.hooks}/slack`, { raw: body, headers: slackHeaders(body) });
    expect(r.status, r.text).to.equal(202);
    expect(r.data).to.include({ ok: true, action: 'agent' });
  });

  it('with auth: token, needs the hooks token as well as the signature', async () => {
    const none = await call(`${gw.hooks}/slack-token`, { raw: verification, headers: slackHeaders(verification) });
    expect([none.status, none.data.error.code]).to.deep.equal([401, 'unauthorized']);
    const r = await call(`${gw.hooks}/slack-token`, { token: TOKEN, raw: verification, headers: slackHeaders(verification) });
    expect([r.status, r.data]).to.deep.equal([200, { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' }]);
  });
});
