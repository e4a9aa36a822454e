import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/**
 * The failure budget by kind of credential (CONTRACT.md §4; §8 scheme `meta`, §12): one budget
 * of 20 failures a window per address, which a right credential escapes and of which it clears
 * only its own kind's share — a hooks token (or a valid signature, its stand-in) the hooks-token
 * guesses, the admin token the admin-token guesses (console sign-in included), Meta's verify
 * token the verify-token guesses — so that holding one credential buys no guesses at another.
 */
const APP_SECRET = 'meta-app-secret-0123456789';
const VERIFY_TOKEN = 'meta-verify-token';
const meta = { action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'meta {{object}}' };
const mappings = [
  // Meta sends no hooks token: the verify token is the credential of its GET.
  { id: 'whatsapp', match: { path: 'whatsapp' }, ...meta, auth: 'signature', verify: { scheme: 'meta', secret: APP_SECRET, verifyToken: VERIFY_TOKEN } },
  // Without auth: signature, Meta's URL carries the hooks token too.
  { id: 'messenger', match: { path: 'messenger' }, ...meta, verify: { scheme: 'meta', secret: APP_SECRET, verifyToken: VERIFY_TOKEN } },
];
const verification = (token: string) => new URLSearchParams({ 'hub.mode': 'subscribe', 'hub.verify_token': token, 'hub.challenge': '42' }).toString();
/** 20 refusals, then 429 for the rest of the window, as {@link runs} writes it. */
const budget = (n: number, refusal: number) => `${refusal}×20 429×${n - 20}`;
/** Statuses as runs, `401×20 429×80`: what a failure message can show. */
const runs = (statuses: number[]) => statuses.reduce<[number, number][]>((out, s) => {
  const last = out[out.length - 1];
  if (last && last[0] === s) last[1]++;
  else out.push([s, 1]);
  return out;
}, []).map(([s, n]) => `${s}×${n}`).join(' ');

describe('http: a right credential clears the failures of its own kind only', function () {
  let gw: InProcess;
  beforeEach(async () => { gw = await startInProcess({ hooks: { mappings } }); });
  afterEach(async () => { await gw.stop(); });

  // Right credentials of each kind, each expected to pass.
  const send = async () => expect((await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'a valid send', mode: 'next-heartbeat' } })).status, 'a valid send').to.equal(200);
  const read = async () => expect((await call(`${gw.hooks}/events`, { token: ADMIN_TOKEN })).status, 'a valid read').to.equal(200);
  const handshake = async () => {
    const r = await fetch(`${gw.hooks}/whatsapp?${verification(VERIFY_TOKEN)}`);
    expect([r.status, await r.text()], 'a valid verification').to.deep.equal([200, '42']);
  };
  const signIn = (token: string) => fetch(`${gw.base}/console/login`, {
    method: 'POST', redirect: 'manual', headers: { origin: gw.base, 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${encodeURIComponent(token)}`,
  });
  const signed = (body: string) => call(`${gw.hooks}/whatsapp`, { raw: body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}` } });

  /** `n` guesses; before every 20th after the first, `valid` (a right credential of another kind). */
  async function guesses(n: number, guess: (i: number) => Promise<number>, valid: () => Promise<unknown>): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) {
      if (i > 0 && i % 20 === 0) await valid();
      statuses.push(await guess(i));
    }
    return statuses;
  }

  it('100 admin-token guesses with a valid hooks send every 20: 429 from the 21st', async () => {
    const statuses = await guesses(100, async (i) => (await call(`${gw.hooks}/events`, { token: `admin-guess-${i}` })).status, send);
    expect(runs(statuses)).to.equal(budget(100, 401));
  });

  it('admin-token guesses at the console sign-in with a valid hooks send every 20: 429 from the 21st', async () => {
    const statuses = await guesses(60, async (i) => (await signIn(`admin-guess-${i}`)).status, send);
    expect(runs(statuses)).to.equal(budget(60, 401));
  });

  it('100 verify-token guesses on Meta\'s verification GET with a valid hooks send every 20: 429 from the 21st', async () => {
    const statuses = await guesses(100, async (i) => (await fetch(`${gw.hooks}/whatsapp?${verification(`verify-guess-${i}`)}`)).status, send);
    expect(runs(statuses)).to.equal(budget(100, 403));
  });

  it('verify-token guesses that each carry a valid hooks token: the token does not clear them, 429 from the 21st', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await fetch(`${gw.hooks}/messenger?token=${TOKEN}&${verification(`verify-guess-${i}`)}`)).status);
    expect(runs(statuses)).to.equal(budget(60, 403));
  });

  it('the other way round: hooks-token guesses with a valid admin read, sign-in or verification every 20: 429 from the 21st', async () => {
    const others = [read, handshake, async () => expect((await signIn(ADMIN_TOKEN)).status, 'a valid sign-in').to.equal(303), read];
    let k = 0;
    const statuses = await guesses(100, async (i) => (await call(`${gw.hooks}/wake`, { token: `hooks-guess-${i}`, json: { text: 'x' } })).status, () => others[k++ % others.length]!());
    expect(runs(statuses)).to.equal(budget(100, 401));
  });

  it('a right credential of any kind is never blocked, and clears its own kind: a valid signature counts as the sender\'s', async () => {
    for (let i = 0; i < 25; i++) await call(`${gw.hooks}/events`, { token: `admin-guess-${i}` });
    expect((await call(`${gw.hooks}/events`, { token: 'admin-guess' })).status).to.equal(429);
    // Every kind's right credential passes while the address is over its budget.
    await send();
    await handshake();
    const accepted = await signed('{"object":"whatsapp_business_account"}');
    expect(accepted.status, accepted.text).to.equal(200);
    expect((await signIn(ADMIN_TOKEN)).status).to.equal(303);
    // The admin token cleared the admin-token guesses: the next one is a plain 401 again.
    expect((await call(`${gw.hooks}/events`, { token: 'admin-guess' })).status).to.equal(401);
    await read();
    // Failed signatures are the sender's kind: a valid one clears them, an admin read does not.
    const unsigned = () => call(`${gw.hooks}/whatsapp`, { raw: '{"object":"x"}', headers: { 'content-type': 'application/json' } });
    for (let i = 0; i < 20; i++) expect((await unsigned()).status, `unsigned ${i}`).to.equal(401);
    await read();
    expect((await unsigned()).status).to.equal(429);
    expect((await signed('{"object":"page"}')).status).to.equal(200);
    expect((await unsigned()).status).to.equal(401);
  });
});
