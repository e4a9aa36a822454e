import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../support/in-process.js';
import { SECURITY_HEADERS } from '../../src/console/console.js';
import { CONSOLE_ROUTES } from '../../src/console/routes.js';
import { createSessions, SESSION_SECONDS } from '../../src/console/session.js';

const CSP = SECURITY_HEADERS['content-security-policy']!;

/** A path that exercises a route of the table (`*` filled in). */
const pathOf = (name: string) => `/console/${name.replace('*', 'some-run-id')}`;

describe('console: sign-in, sessions and the session check (plain HTTP)', function () {
  let gw: InProcess;
  before(async () => {
    gw = await startInProcess({ hooks: { mappings: [{ id: 'gh', match: { path: 'gh' }, action: 'wake', textTemplate: 'push {{x}}' }] } });
  });
  after(() => gw.stop());

  const send = (p: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(gw.base + p, { redirect: 'manual', ...init, headers: { origin: gw.base, ...init.headers } });
  const signIn = async (token = ADMIN_TOKEN, headers: Record<string, string> = {}) =>
    send('/console/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams({ token }).toString() });
  const cookieOf = (res: Response) => res.headers.get('set-cookie')!.split(';')[0]!;

  it('answers every console route without a session 401 or 303 to the sign-in page, except the sign-in page and its static files', async () => {
    const checked: string[] = [];
    for (const route of CONSOLE_ROUTES) {
      for (const method of route.methods) {
        const res = await send(pathOf(route.name), { method, body: method === 'POST' ? '{}' : undefined });
        checked.push(`${method} ${route.name}`);
        if (route.access === 'public') {
          expect(res.status, `${method} ${route.name}`).to.be.oneOf([200, 401]);
          continue;
        }
        if (method === 'GET' && route.access === 'page') {
          expect(res.status, `${method} ${route.name}`).to.equal(303);
          expect(res.headers.get('location')).to.equal('/console/login');
        } else {
          expect(res.status, `${method} ${route.name}`).to.equal(401);
          expect((await res.json()).error.code).to.equal('unauthorized');
        }
        expect(res.headers.get('content-security-policy'), `${method} ${route.name}`).to.equal(CSP);
      }
    }
    expect(checked).to.include.members(['GET events/stream', 'POST playground', 'GET runs/*']);
    // A path the table does not know is not a way in either.
    const unknown = await send('/console/admin');
    expect(unknown.status).to.equal(303);
    // Nor is another spelling of a console path: the gate's one parse decides.
    const spelled = await send('/x/../%63onsole//events');
    expect(spelled.status).to.equal(303);
  });

  it('signs in with the admin token: an HttpOnly, SameSite=Strict cookie for /console/ that opens every page', async () => {
    const res = await signIn();
    expect(res.status).to.equal(303);
    expect(res.headers.get('location')).to.equal('/console/');
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).to.match(/^hookrelay_console=[^;]+; Path=\/console\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    expect(setCookie).not.to.include('Secure');
    const cookie = cookieOf(res);
    for (const route of CONSOLE_ROUTES.filter((r) => r.methods.includes('GET') && r.name !== 'events/stream')) {
      const page = await send(pathOf(route.name), { headers: { cookie } });
      expect(page.status, route.name).to.equal(route.name.endsWith('/*') ? 404 : 200);
      expect(page.headers.get('content-security-policy'), route.name).to.equal(CSP);
      expect(page.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(page.headers.get('referrer-policy')).to.equal('same-origin');
      if (!route.name.startsWith('static/')) expect(page.headers.get('cache-control')).to.equal('no-store');
    }
  });

  it('refuses the hooks token: it sends, it does not sign in', async () => {
    const res = await signIn(TOKEN);
    expect(res.status).to.equal(401);
    expect(res.headers.get('set-cookie')).to.equal(null);
    const page = await res.text();
    expect(page).to.include('admin-token').and.include('server.adminToken');
    expect(page).to.not.include(TOKEN);
  });

  it('refuses a wrong token with 401 and the sign-in page again, and sets no cookie', async () => {
    const res = await signIn('not-the-token');
    expect(res.status).to.equal(401);
    expect(res.headers.get('set-cookie')).to.equal(null);
    expect(await res.text()).to.include('That is not the admin token');
  });

  it('refuses a tampered or expired cookie', async () => {
    const cookie = cookieOf(await signIn());
    const [id, expires, mac] = cookie.split('=')[1]!.split('.');
    const later = `hookrelay_console=${id}.${Number(expires) + 86400}.${mac}`;
    const flipped = `hookrelay_console=${id}.${expires}.${mac!.slice(0, -2)}${mac!.endsWith('AA') ? 'AB' : 'AA'}`;
    const otherId = `hookrelay_console=${id!.slice(0, -2)}xx.${expires}.${mac}`;
    for (const bad of [later, flipped, otherId, 'hookrelay_console=', 'hookrelay_console=a.b.c']) {
      const res = await send('/console/mappings', { headers: { cookie: bad } });
      expect(res.status, bad).to.equal(303);
    }
    // Expiry: a genuine cookie is refused once its 12 hours are over.
    const sessions = createSessions();
    const value = sessions.issue(0);
    expect(sessions.verify(value, SESSION_SECONDS * 1000 - 1000)).to.be.a('string');
    expect(sessions.verify(value, SESSION_SECONDS * 1000)).to.equal(undefined);
  });

  it('refuses a POST that did not come from the console itself (CSRF), before anything else', async () => {
    const cookie = cookieOf(await signIn());
    const cases: Record<string, string>[] = [
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { origin: gw.base, 'sec-fetch-site': 'cross-site' },
      { origin: gw.base, 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of cases) {
      const res = await send('/console/playground', { method: 'POST', headers: { cookie, ...headers }, body: JSON.stringify({ name: 'gh', payload: '{}' }) });
      expect(res.status, JSON.stringify(headers)).to.equal(403);
      expect((await res.json()).error.code).to.equal('cross_origin');
    }
    // Neither header: not from a browser's page at all.
    const bare = await fetch(`${gw.base}/console/login`, { method: 'POST', redirect: 'manual', body: `token=${ADMIN_TOKEN}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(bare.status).to.equal(403);
    expect(bare.headers.get('set-cookie')).to.equal(null);
    const ok = await send('/console/playground', { method: 'POST', headers: { cookie, 'sec-fetch-site': 'same-origin' }, body: JSON.stringify({ name: 'gh', payload: '{"x":1}' }) });
    expect(await ok.json()).to.deep.equal({ ok: true, output: { mapping: 'gh', status: 200, action: 'wake', text: 'push 1', mode: 'now' } });
  });

  it('logout clears the cookie and ends the session: the old cookie no longer opens anything', async () => {
    const cookie = cookieOf(await signIn());
    expect((await send('/console/events', { headers: { cookie } })).status).to.equal(200);
    const out = await send('/console/logout', { method: 'POST', headers: { cookie } });
    expect(out.status).to.equal(303);
    expect(out.headers.get('location')).to.equal('/console/login');
    expect(out.headers.get('set-cookie')).to.match(/^hookrelay_console=; Path=\/console\/; Max-Age=0/);
    expect((await send('/console/events', { headers: { cookie } })).status).to.equal(303);
    expect((await send('/console/events/stream', { headers: { cookie } })).status).to.equal(401);
  });

  it('streams the main session\'s events over SSE after `after`, and closes the stream on logout', async () => {
    const cookie = cookieOf(await signIn());
    const first = await (await fetch(`${gw.hooks}/wake`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ text: 'one', mode: 'next-heartbeat' }) })).json();
    const res = await send('/console/events/stream?after=0', { headers: { cookie } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');
    expect(res.headers.get('content-security-policy')).to.equal(CSP);
    const reader = res.body!.getReader();
    let text = '';
    const readUntil = async (needle: string) => {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${needle}`);
        text += Buffer.from(value).toString('utf8');
      }
    };
    await readUntil('"one"');
    expect(text).to.include(`event: event\ndata: {"seq":`);
    expect(text).to.include(`"id":"${first.eventId}","kind":"wake","text":"one","source":"wake"`);
    await fetch(`${gw.hooks}/wake`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ text: 'two\nlines', mode: 'next-heartbeat' }) });
    await readUntil('two\\nlines');
    await send('/console/logout', { method: 'POST', headers: { cookie } });
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
    }
  });

  it('answers 405 with Allow for a method a console route does not take', async () => {
    const res = await send('/console/mappings', { method: 'DELETE' });
    expect(res.status).to.equal(405);
    expect(res.headers.get('allow')).to.equal('GET, HEAD');
  });
});

describe('console: the sign-in failure budget, Secure cookies, token rotation, server.console', function () {

  const form = (base: string, token: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/console/login`, { method: 'POST', redirect: 'manual', headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: `token=${encodeURIComponent(token)}` });

  it('counts wrong sign-ins in the failure budget: past 20 from one address, 429 with Retry-After; the right token still signs in', async () => {
    const gw = await startInProcess();
    try {
      // Ten wrong hook requests and ten wrong sign-ins share one budget.
      for (let i = 0; i < 10; i++) expect((await fetch(`${gw.hooks}/wake`, { method: 'POST', headers: { authorization: 'Bearer nope' }, body: '{}' })).status).to.equal(401);
      for (let i = 0; i < 10; i++) expect((await form(gw.base, `wrong-${i}`)).status).to.equal(401);
      const limited = await form(gw.base, 'wrong-again');
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
      expect(await limited.text()).to.include('Too many wrong tokens');
      expect((await form(gw.base, TOKEN)).status).to.equal(429); // a hooks token is a wrong one here
      const right = await form(gw.base, ADMIN_TOKEN);
      expect(right.status).to.equal(303);
      expect(right.headers.get('set-cookie')).to.match(/^hookrelay_console=/);
    } finally {
      await gw.stop();
    }
  });

  it('marks the cookie Secure when a trusted proxy says the request came over https, and only then', async () => {
    const trusting = await startInProcess({ server: { trustedProxies: ['127.0.0.1'] } });
    const plain = await startInProcess();
    try {
      // The browser's page was https too: its Origin says so (the CSRF check compares the scheme).
      expect((await form(trusting.base, ADMIN_TOKEN, { 'x-forwarded-proto': 'https', origin: trusting.base.replace('http:', 'https:') })).headers.get('set-cookie')).to.match(/; Secure$/);
      expect((await form(trusting.base, ADMIN_TOKEN)).headers.get('set-cookie')).not.to.include('Secure');
      expect((await form(plain.base, ADMIN_TOKEN, { 'x-forwarded-proto': 'https' })).headers.get('set-cookie')).not.to.include('Secure');
    } finally {
      await Promise.all([trusting.stop(), plain.stop()]);
    }
  });

  it('ends every session when a reload changes the admin token (not when only the hooks token changes); the new one signs in', async () => {
    const gw = await startInProcess();
    try {
      const cookie = (await form(gw.base, ADMIN_TOKEN)).headers.get('set-cookie')!.split(';')[0]!;
      const open = (c: string) => fetch(`${gw.base}/console/mappings`, { redirect: 'manual', headers: { cookie: c } });
      expect((await open(cookie)).status).to.equal(200);
      const port = Number(new URL(gw.base).port);
      const reloadWith = async (server: object, hooks: object) => {
        writeFileSync(path.join(gw.dir, 'hookrelay.yaml'), JSON.stringify({
          server: { host: '127.0.0.1', port, ...server }, dataDir: path.join(gw.dir, 'data'), hooks,
          agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' }, heartbeat: { everySeconds: 3600 },
        }));
        expect(await gw.running.reload()).to.equal(true);
      };
      await reloadWith({ adminToken: ADMIN_TOKEN }, { token: 'rotated-hooks-token-0123456789' });
      expect((await open(cookie)).status).to.equal(200);
      await reloadWith({ adminToken: 'rotated-admin-token-0123456789' }, { token: 'rotated-hooks-token-0123456789' });
      expect((await open(cookie)).status).to.equal(303);
      expect((await form(gw.base, ADMIN_TOKEN)).status).to.equal(401);
      const fresh = (await form(gw.base, 'rotated-admin-token-0123456789')).headers.get('set-cookie')!.split(';')[0]!;
      expect((await open(fresh)).status).to.equal(200);
    } finally {
      await gw.stop();
    }
  });

  it('closes open event streams when the gateway stops, so that stopping does not wait on them', async () => {
    const gw = await startInProcess();
    const cookie = (await form(gw.base, ADMIN_TOKEN)).headers.get('set-cookie')!.split(';')[0]!;
    const res = await fetch(`${gw.base}/console/events/stream`, { headers: { cookie } });
    expect(res.status).to.equal(200);
    const reader = res.body!.getReader();
    await reader.read(); // the stream is open (its `retry:` line)
    const t0 = Date.now();
    await gw.stop();
    expect(Date.now() - t0).to.be.below(3000);
    for (;;) if ((await reader.read()).done) break;
  });

  it('server.console: false leaves /console/ unrouted (404), sign-in included', async () => {
    const gw = await startInProcess({ server: { console: false } });
    try {
      for (const p of ['/console/', '/console/login', '/console/static/console.js']) {
        const res = await fetch(gw.base + p, { redirect: 'manual' });
        expect(res.status, p).to.equal(404);
        expect((await res.json()).error.code).to.equal('not_found');
      }
      expect((await form(gw.base, ADMIN_TOKEN)).status).to.equal(404);
    } finally {
      await gw.stop();
    }
  });
});
