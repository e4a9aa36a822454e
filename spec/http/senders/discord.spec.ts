import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { expect } from 'chai';
import { verifyKey } from 'discord-interactions';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, type InProcess } from '../../support/in-process.js';

/**
 * Scheme `discord` (CONTRACT.md §15): Ed25519 `X-Signature-Ed25519` over `X-Signature-Timestamp`
 * + body, checked with the application's public key (hex), and Discord's PING answered with
 * PONG. discord-interactions only verifies (`verifyKey`): each request is signed here with
 * node:crypto, and the library is asked to accept the very same bytes before they are posted.
 * https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers
 */
const rawPublicKey = (k: KeyObject) => k.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
const app = generateKeyPairSync('ed25519');
const stranger = generateKeyPairSync('ed25519');
const PUBLIC_KEY = rawPublicKey(app.publicKey);

const mappings = [{
  id: 'discord', match: { path: 'discord' }, action: 'agent', auth: 'signature',
  messageTemplate: 'Discord /{{data.name}} {{data.options.0.value}} from {{member.user.username}}',
  // DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE: the agent's reply follows through the interaction token.
  response: { status: 200, body: '{"type":5}' },
  verify: { scheme: 'discord', publicKey: PUBLIC_KEY },
}];

/** The PING Discord sends when the Interactions Endpoint URL is saved (and now and then after). */
const ping = JSON.stringify({ application_id: '1100000000000000000', id: '1200000000000000000', token: 'aW50ZXJhY3Rpb246MTIwMDAw', type: 1, user: { id: '53908232506183680', username: 'mason' }, version: 1 });
/** An APPLICATION_COMMAND interaction: https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-object */
const command = JSON.stringify({
  type: 2, token: 'A_UNIQUE_TOKEN', id: '786008729715212338', guild_id: '290926798626357999', channel_id: '645027906669510667', locale: 'en-US',
  member: { user: { id: '53908232506183680', username: 'Mason', discriminator: '1337' }, roles: ['539082325061836999'], permissions: '2147483647' },
  data: { options: [{ type: 3, name: 'cardname', value: 'The Gitrog Monster' }], type: 1, name: 'cardsearch', id: '771825006014889984' },
});

const now = () => String(Math.floor(Date.now() / 1000));
const signed = (body: string, o: { key?: KeyObject; ts?: string } = {}) => {
  const ts = o.ts ?? now();
  const signature = sign(null, Buffer.from(ts + body), o.key ?? app.privateKey).toString('hex');
  return { 'content-type': 'application/json', 'x-signature-ed25519': signature, 'x-signature-timestamp': ts };
};
/** The headers, once discord-interactions said whether it accepts them for `body`. */
async function checked(body: string, headers: Record<string, string>, accepts: boolean) {
  expect(await verifyKey(body, headers['x-signature-ed25519']!, headers['x-signature-timestamp']!, PUBLIC_KEY), 'discord-interactions verifyKey').to.equal(accepts);
  return headers;
}

describe('http: scheme discord (Interactions Endpoint URL)', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { mappings } }); });
  after(async () => { await gw.stop(); });
  const runCount = async () => (await call(`${gw.hooks}/runs?limit=200`, { token: ADMIN_TOKEN })).data.runs.length;

  it('answers a signed PING with {"type":1} and no action, without the hooks token', async () => {
    const before = await runCount();
    const r = await call(`${gw.hooks}/discord`, { raw: ping, headers: await checked(ping, signed(ping), true) });
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^application\/json/);
    expect(r.data).to.deep.equal({ type: 1 });
    expect(await runCount()).to.equal(before);
  });

  it('starts an agent run for a signed command, answered with the mapping\'s response', async () => {
    const before = await runCount();
    const r = await call(`${gw.hooks}/discord`, { raw: command, headers: await checked(command, signed(command), true) });
    expect([r.status, r.text]).to.deep.equal([200, '{"type":5}']);
    expect(await runCount()).to.equal(before + 1);
  });

  it('refuses a PING signed with another key, a tampered body and no signature with 401 invalid_signature, unanswered', async () => {
    const cases: [string, string, Record<string, string>][] = [
      ['wrong key', ping, await checked(ping, signed(ping, { key: stranger.privateKey }), false)],
      ['tampered', ping.replace('"type":1', '"type":1 '), await checked(ping.replace('"type":1', '"type":1 '), signed(ping), false)],
      ['unsigned', ping, { 'content-type': 'application/json' }],
    ];
    for (const [what, body, headers] of cases) {
      const r = await call(`${gw.hooks}/discord`, { raw: body, headers });
      expect([r.status, r.data?.error?.code], what).to.deep.equal([401, 'invalid_signature']);
      expect(r.data.type, what).to.equal(undefined);
      expect(r.data.error.message, what).to.include('X-Signature-Ed25519');
    }
  });

  it('refuses a signature over a timestamp more than 300 s old with 401 stale_signature', async () => {
    const old = String(Math.floor(Date.now() / 1000) - 301);
    const r = await call(`${gw.hooks}/discord`, { raw: ping, headers: await checked(ping, signed(ping, { ts: old }), true) });
    expect([r.status, r.data.error.code]).to.deep.equal([401, 'stale_signature']);
  });

  it('counts a forged PING as a failed attempt: the 21st within a minute is 429', async () => {
    // A valid signature clears the count of the failures above (CONTRACT.md §4).
    expect((await call(`${gw.hooks}/discord`, { raw: ping, headers: signed(ping) })).status).to.equal(200);
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await call(`${gw.hooks}/discord`, { raw: ping, headers: signed(ping, { key: stranger.privateKey }) })).status);
    expect(statuses.slice(0, 20).every((s) => s === 401)).to.equal(true);
    expect(statuses[20]).to.equal(429);
  });
});
