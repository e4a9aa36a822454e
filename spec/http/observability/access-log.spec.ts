import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { configFromObject } from '../../../src/config/load.js';
import { createLogger } from '../../../src/log.js';
import { start, type Running } from '../../../src/serve.js';
import { ADMIN_TOKEN, freePort, tmpDir, sleep, until } from '../../support/gateway.js';
import { rawRequest } from '../../support/raw-http.js';

const TOKEN = 'access-log-token-0123456789';

/** One access line per request, whoever answered it, with nothing secret in it. */
describe('http: the access log', function () {
  let running: Running;
  let base: string;
  let port: number;
  const lines: string[] = [];
  const requests = () => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');

  before(async () => {
    const dir = tmpDir();
    port = await freePort();
    const loaded = configFromObject({
      server: { host: '127.0.0.1', port, adminToken: ADMIN_TOKEN },
      dataDir: path.join(dir, 'data'),
      hooks: {
        token: TOKEN,
        maxBodyBytes: 1000,
        mappings: [{ id: 'ci-note', match: { path: 'ci' }, action: 'wake', textTemplate: 'build {{id}}' }],
      },
      agent: { baseUrl: 'http://127.0.0.1:9/v1' },
      heartbeat: { everySeconds: 3600 },
    }, path.join(dir, 'hookrelay.yaml'), {});
    running = await start(loaded, createLogger('info', { write: (line: string) => void lines.push(line) }));
    base = running.listener.url;
  });
  after(() => running.stop());

  /** The access line of the request that got `reqId`, once the response has closed. */
  async function lineFor(reqId: string | null) {
    expect(reqId, 'X-Request-Id').to.be.a('string');
    return until(`the access line for ${reqId}`, () => requests().find((l) => l.reqId === reqId), 5000, 20);
  }

  it('a mapped hook: the mapping, status and duration; the query (and its token) is never logged', async () => {
    const r = await fetch(`${base}/hooks/ci?token=${TOKEN}&x=1`, { method: 'POST', body: '{"id":7}' });
    expect(r.status).to.equal(200);
    const line = await lineFor(r.headers.get('x-request-id'));
    expect(line).to.include({ level: 30, method: 'POST', path: '/hooks/ci', route: 'mapping:ci-note', status: 200 });
    expect(line.ms).to.be.a('number').and.at.least(0);
    expect(lines.join('\n')).to.not.include(TOKEN);
  });

  it('refusals by the gate are logged too: 401, 404, 405, 413, under the route they were sent to; anything no route or mapping takes is `unmatched`', async () => {
    const cases: [string, RequestInit, number, string][] = [
      ['/hooks/wake', { method: 'POST', body: '{"text":"x"}', headers: { authorization: 'Bearer wrong-token-value' } }, 401, 'wake'],
      ['/nowhere', { method: 'GET' }, 404, 'unmatched'],
      ['/healthz', { method: 'POST' }, 405, 'healthz'],
      ['/hooks/wake', { method: 'POST', body: 'x'.repeat(2000), headers: { authorization: `Bearer ${TOKEN}` } }, 413, 'wake'],
      ['/hooks/nothing-here', { method: 'POST', body: '{}', headers: { authorization: `Bearer ${TOKEN}` } }, 404, 'unmatched'],
      ['/hooks/wake', { method: 'POST', body: '{"text":"hi"}', headers: { authorization: `Bearer ${TOKEN}` } }, 200, 'wake'],
      ['/healthz', { method: 'GET' }, 200, 'healthz'],
      ['/hooks/runs/some-id', { method: 'GET', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }, 404, 'runs'],
    ];
    for (const [target, init, status, route] of cases) {
      const r = await fetch(`${base}${target}`, init);
      expect(r.status, target).to.equal(status);
      expect(await lineFor(r.headers.get('x-request-id')), target).to.include({ status, route });
    }
    expect(lines.join('\n')).to.not.include('wrong-token-value');
  });

  it("keeps a sender's plain X-Request-Id, replaces anything else", async () => {
    const kept = await fetch(`${base}/healthz`, { headers: { 'x-request-id': 'sender-id.42' } });
    expect(kept.headers.get('x-request-id')).to.equal('sender-id.42');
    const replaced = await fetch(`${base}/healthz`, { headers: { 'x-request-id': 'has spaces and "quotes"' } });
    expect(replaced.headers.get('x-request-id')).to.match(/^[0-9a-f]{8}-[0-9a-z]+$/);
  });

  it('escapes and caps the path', async () => {
    // Node refuses raw control characters and non-ASCII in a request target (400 before any
    // handler), so what reaches the log is ASCII; escapes stay escaped, and the path is capped.
    const answer = await rawRequest(port, `GET /x%E2%80%AE${'a'.repeat(1000)} HTTP/1.1\r\nHost: x\r\nConnection: close`);
    expect(answer.status).to.equal(404);
    const line = await lineFor(answer.headers['x-request-id'] ?? null);
    expect(line.path).to.match(/^\/x%E2%80%AEa+/).and.not.match(/[\x00-\x1f\x7f-\x9f\u202e]/);
    expect(line.path.length).to.be.at.most(220);
  });

  it('a client that hangs up mid-body is logged as such at once (not at hooks.bodyTimeoutMs, 30 s), and the gateway serves on', async () => {
    const before = lines.length;
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"text":"half`);
    await sleep(100);
    socket.destroy();
    const closed = await until('the hang-up logged', async () =>
      lines.slice(before).map((l) => JSON.parse(l)).find((l) => l.msg === 'client closed the connection before its body was complete'), 3000, 20);
    expect(closed).to.include({ level: 30, route: 'wake' });
    const r = await fetch(`${base}/hooks/wake`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: '{"text":"after","mode":"next-heartbeat"}' });
    expect(r.status).to.equal(200);
  });
});
