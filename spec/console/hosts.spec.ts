import { expect } from 'chai';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { CONSOLE_ROUTES } from '../../src/console/routes.js';
import { consoleCookie, rawRequest } from './console-client.js';

/** A path that exercises a route of the table (`*` filled in). */
const pathOf = (name: string) => `/console/${name.replace('*', 'some-id')}`;

describe('console: answers only for the hosts it serves (DNS rebinding, CONTRACT §11)', function () {
  let gw: InProcess;
  let port: string;
  let cookie: string;
  before(async () => {
    gw = await startInProcess({ server: { publicHosts: ['console.example.com', 'ops.example.com:8443'] } });
    port = new URL(gw.base).port;
    cookie = await consoleCookie(gw.base);
  });
  after(() => gw.stop());

  it('answers 421 misdirected_request on every console route, sign-in page and static files included, for a Host it does not serve', async () => {
    for (const host of [`evil.example:${port}`, 'evil.example', `localhost:${Number(port) + 1}`, 'ops.example.com', 'ops.example.com:9999', `127.0.0.1.evil.example:${port}`]) {
      for (const route of CONSOLE_ROUTES) {
        for (const method of route.methods) {
          const res = await rawRequest(gw.base, pathOf(route.name), { method, headers: { host, cookie, origin: `http://${host}`, 'content-type': 'application/x-www-form-urlencoded' }, body: method === 'POST' ? 'token=x' : undefined });
          expect(res.status, `${method} ${route.name} Host: ${host}`).to.equal(421);
          expect(JSON.parse(res.text).error.code).to.equal('misdirected_request');
          expect(res.text).not.to.include('<html');
        }
      }
    }
  });

  it('serves the configured address, loopback with its port, and server.publicHosts', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, 'console.example.com', `console.example.com:${port}`, 'ops.example.com:8443']) {
      const login = await rawRequest(gw.base, '/console/login', { headers: { host } });
      expect(login.status, host).to.equal(200);
      const page = await rawRequest(gw.base, '/console/requests', { headers: { host, cookie } });
      expect(page.status, host).to.equal(200);
    }
  });

  it('behind a trusted proxy, decides on X-Forwarded-Host; from anyone else, on Host alone', async () => {
    const proxied = await startInProcess({ server: { trustedProxies: ['127.0.0.1'], publicHosts: ['hooks.example.com'] } });
    try {
      const via = (forwarded: string, host = 'upstream.internal:8788') => rawRequest(proxied.base, '/console/login', { headers: { host, 'x-forwarded-host': forwarded } });
      expect((await via('hooks.example.com')).status).to.equal(200);
      expect((await via('evil.example')).status).to.equal(421);
      expect((await via('evil.example', `127.0.0.1:${new URL(proxied.base).port}`)).status).to.equal(421);
    } finally {
      await proxied.stop();
    }
    // Not a trusted peer: X-Forwarded-Host is not believed either way.
    expect((await rawRequest(gw.base, '/console/login', { headers: { host: 'evil.example', 'x-forwarded-host': 'console.example.com' } })).status).to.equal(421);
    expect((await rawRequest(gw.base, '/console/login', { headers: { host: 'console.example.com', 'x-forwarded-host': 'evil.example' } })).status).to.equal(200);
  });

  it('leaves the hooks, /healthz and /metrics alone (senders name whatever host they were given)', async () => {
    const health = await rawRequest(gw.base, '/healthz', { headers: { host: 'evil.example' } });
    expect(health.status).to.equal(200);
  });
});

describe('console: the CSRF check compares the scheme as well as the host', function () {
  const playground = (base: string, headers: Record<string, string>) =>
    rawRequest(base, '/console/playground', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ name: 'x', payload: '{}' }) });

  it('refuses an Origin of the same host with another scheme, on plain HTTP and behind an https proxy', async () => {
    const plain = await startInProcess();
    const proxied = await startInProcess({ server: { trustedProxies: ['127.0.0.1'], publicHosts: ['hooks.example.com'] } });
    try {
      const host = new URL(plain.base).host;
      const cookie = await consoleCookie(plain.base);
      const wrong = await playground(plain.base, { host, cookie, origin: `https://${host}` });
      expect(wrong.status).to.equal(403);
      expect(JSON.parse(wrong.text).error.code).to.equal('cross_origin');
      expect((await playground(plain.base, { host, cookie, origin: `http://${host}` })).status).to.equal(200);

      const pcookie = await consoleCookie(proxied.base);
      const behind = { host: 'upstream.internal:8788', 'x-forwarded-host': 'hooks.example.com', 'x-forwarded-proto': 'https', cookie: pcookie };
      const downgraded = await playground(proxied.base, { ...behind, origin: 'http://hooks.example.com' });
      expect(downgraded.status).to.equal(403);
      expect(JSON.parse(downgraded.text).error.code).to.equal('cross_origin');
      expect((await playground(proxied.base, { ...behind, origin: 'https://hooks.example.com' })).status).to.equal(200);
    } finally {
      await Promise.all([plain.stop(), proxied.stop()]);
    }
  });
});
