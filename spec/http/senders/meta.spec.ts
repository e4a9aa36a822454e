import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { ConfigError, type ConfigProblem } from '../../../src/config/errors.js';
import { configFromObject } from '../../../src/config/load.js';
import { configWarnings } from '../../../src/config/warnings.js';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * Scheme `meta` (WhatsApp Cloud API, Messenger, Instagram; CONTRACT.md §8): X-Hub-Signature-256
 * with the app secret, and Meta's verification GET answered with its challenge.
 * https://developers.facebook.com/docs/graph-api/webhooks/getting-started
 */
const APP_SECRET = 'meta-app-secret-0123456789';
const VERIFY_TOKEN = 'my-verify-token';
const mappings = [
  {
    id: 'whatsapp', match: { path: 'whatsapp' }, action: 'wake', wakeMode: 'next-heartbeat',
    textTemplate: 'WhatsApp from {{entry.0.changes.0.value.messages.0.from}}: {{entry.0.changes.0.value.messages.0.text.body}}',
    auth: 'signature', verify: { scheme: 'meta', secret: APP_SECRET, verifyToken: VERIFY_TOKEN },
  },
  // Without auth: signature, Meta's URL carries the hooks token (?token=).
  { id: 'messenger', match: { path: 'messenger' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'Messenger {{object}}', verify: { scheme: 'meta', secret: APP_SECRET, verifyToken: VERIFY_TOKEN } },
  { id: 'plain', match: { path: 'plain' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'plain' },
];

/**
 * A WhatsApp Cloud API text message notification, as Meta sends it: compact JSON with `/`
 * escaped and non-ASCII as \u escapes, signed as sent.
 * https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples
 */
const message = '{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},"contacts":[{"profile":{"name":"Sheena Nelson"},"wa_id":"16505551234"}],"messages":[{"from":"16505551234","id":"wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=","timestamp":"1749416383","type":"text","text":{"body":"Gr\\u00fc\\u00dfe \\/ does it come in another color?"}}]},"field":"messages"}]}]}';
const sign = (body: string, secret = APP_SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const verification = (o: { mode?: string; token?: string; challenge?: string } = {}) => {
  const q = new URLSearchParams();
  if (o.mode !== '') q.set('hub.mode', o.mode ?? 'subscribe');
  if (o.token !== '') q.set('hub.verify_token', o.token ?? VERIFY_TOKEN);
  if (o.challenge !== '') q.set('hub.challenge', o.challenge ?? '1158201444');
  return q.toString();
};

describe('http: scheme meta (WhatsApp Cloud API, Messenger, Instagram)', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { mappings } }); });
  after(async () => { await gw.stop(); });
  const eventCount = async () => (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events.length;

  it('answers the WhatsApp Cloud API verification GET with the challenge, exactly, and no action', async () => {
    const before = await eventCount();
    const r = await fetch(`${gw.hooks}/whatsapp?${verification()}`);
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^text\/plain/);
    expect(await r.text()).to.equal('1158201444');
    expect(await eventCount()).to.equal(before);
  });

  it('accepts a signed WhatsApp message without the hooks token', async () => {
    const r = await call(`${gw.hooks}/whatsapp`, { raw: message, headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(message) } });
    expect(r.status, r.text).to.equal(200);
    const events = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
    const event = events.data.events.find((e: { id: string }) => e.id === r.data.eventId);
    expect(event.text).to.equal('WhatsApp from 16505551234: Grüße / does it come in another color?');
  });

  it('answers 401 invalid_signature to a missing or wrong X-Hub-Signature-256', async () => {
    for (const headers of [{}, { 'x-hub-signature-256': sign(message, 'another-app-secret') }, { 'x-hub-signature-256': sign(`${message} `) }] as Record<string, string>[]) {
      const r = await call(`${gw.hooks}/whatsapp`, { raw: message, headers });
      expect([r.status, r.data.error.code]).to.deep.equal([401, 'invalid_signature']);
      expect(r.data.error.message).to.include('X-Hub-Signature-256').and.not.include(APP_SECRET);
    }
  });

  it('answers 403 forbidden to a wrong verify token, without the challenge', async () => {
    for (const token of ['wrong-token', '']) {
      const r = await call(`${gw.hooks}/whatsapp?${verification({ token })}`);
      expect([r.status, r.data.error.code], token).to.deep.equal([403, 'forbidden']);
      expect(r.text).to.not.include('1158201444').and.not.include(VERIFY_TOKEN);
    }
  });

  it('answers 400 invalid_payload without hub.challenge or with another hub.mode', async () => {
    for (const [what, query, names] of [['no challenge', verification({ challenge: '' }), 'hub.challenge'], ['mode', verification({ mode: 'unsubscribe' }), 'hub.mode']] as const) {
      const r = await call(`${gw.hooks}/whatsapp?${query}`);
      expect([r.status, r.data.error.code], what).to.deep.equal([400, 'invalid_payload']);
      expect(r.data.error.message, what).to.include(names);
    }
  });

  it('without auth: signature needs the hooks token on both, e.g. ?token= in the URL given to Meta', async () => {
    const none = await call(`${gw.hooks}/messenger?${verification()}`);
    expect([none.status, none.data.error.code]).to.deep.equal([401, 'unauthorized']);
    const withToken = await fetch(`${gw.hooks}/messenger?${verification()}&token=${TOKEN}`);
    expect([withToken.status, await withToken.text()]).to.deep.equal([200, '1158201444']);
    const post = await call(`${gw.hooks}/messenger`, { raw: message, headers: { 'x-hub-signature-256': sign(message) } });
    expect([post.status, post.data.error.code]).to.deep.equal([401, 'unauthorized']);
    const signed = await call(`${gw.hooks}/messenger?token=${TOKEN}`, { raw: message, headers: { 'x-hub-signature-256': sign(message) } });
    expect(signed.status, signed.text).to.equal(200);
  });

  it('takes GET only where a meta mapping is: elsewhere a GET of a mapped hook is still 405', async () => {
    const r = await call(`${gw.hooks}/plain?${verification()}`, { token: TOKEN });
    expect([r.status, r.data.error.code]).to.deep.equal([405, 'method_not_allowed']);
  });

  it('counts a wrong verify token as a failed attempt: the 21st within a minute is 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await call(`${gw.hooks}/whatsapp?${verification({ token: `guess-${i}` })}`)).status);
    expect(statuses.slice(0, 20).every((s) => s === 403)).to.equal(true);
    expect(statuses[20]).to.equal(429);
    // A right hooks token is never blocked, and clears the count.
    expect((await call(`${gw.hooks}/plain`, { token: TOKEN, json: {} })).status).to.equal(200);
    expect((await fetch(`${gw.hooks}/whatsapp?${verification()}`)).status).to.equal(200);
  });
});

describe('config: verify.verifyToken', () => {
  function problemsFor(verify: Record<string, unknown>): ConfigProblem[] {
    try {
      configFromObject({ hooks: { mappings: [{ match: { path: 'whatsapp' }, action: 'wake', textTemplate: 't', verify }] } }, '/etc/hookrelay/hookrelay.yaml', {});
    } catch (e) {
      if (e instanceof ConfigError) return e.problems;
      throw e;
    }
    return [];
  }

  it('is required with scheme meta, and belongs to it alone', () => {
    expect(problemsFor({ scheme: 'meta', secret: 's', verifyToken: 'v' })).to.deep.equal([]);
    const [missing] = problemsFor({ scheme: 'meta', secret: 's' });
    expect(missing!.path).to.equal('hooks.mappings[0].verify.verifyToken');
    expect(missing!.message).to.include('hub.verify_token');
    expect(problemsFor({ scheme: 'github', secret: 's', verifyToken: 'v' }).map((p) => p.path)).to.deep.equal(['hooks.mappings[0].verify.verifyToken']);
  });

  it('hookrelay check warns about a WhatsApp, Instagram or Messenger mapping without verify, naming scheme meta', () => {
    const loaded = configFromObject({ hooks: { mappings: [
      { id: 'whatsapp-inbound', match: { path: 'wa' }, action: 'wake', textTemplate: 't' },
      { id: 'ig', match: { path: 'instagram' }, action: 'wake', textTemplate: 't' },
      { id: 'wa-signed', match: { path: 'whatsapp' }, action: 'wake', textTemplate: 't', verify: { scheme: 'meta', secret: 's', verifyToken: 'v' } },
    ] } }, '/etc/hookrelay/hookrelay.yaml', {});
    const warnings = configWarnings(loaded.config);
    expect(warnings).to.have.length(2);
    for (const w of warnings) expect(w).to.include('add verify: { scheme: meta, verifyToken: ${…}, secret: ${…} }');
  });
});
