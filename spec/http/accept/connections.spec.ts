import net from 'node:net';
import { Writable } from 'node:stream';
import path from 'node:path';
import { expect } from 'chai';
import { configFromObject } from '../../../src/config/load.js';
import { createLogger } from '../../../src/log.js';
import { start, type Running } from '../../../src/serve.js';
import { call, freePort, sleep, tmpDir, until } from '../../support/gateway.js';
import { TOKEN } from '../../support/in-process.js';
import { parseAnswer, parseAnswers } from '../../support/raw-http.js';

/** A socket to the listener that sends nothing until told to. */
function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

/** Resolves with what the server sent and how long after `since` it closed the socket. */
function closed(socket: net.Socket, since: number): Promise<{ received: string; afterMs: number }> {
  return new Promise((resolve) => {
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => { received += d; });
    socket.on('error', () => {});
    socket.on('close', () => resolve({ received, afterMs: Date.now() - since }));
  });
}

describe('http: slow clients and connection caps', function () {
  this.timeout(30_000);
  let running: Running;
  let port: number;
  const lines: Record<string, any>[] = [];

  before(async () => {
    port = await freePort();
    const dir = tmpDir();
    const loaded = configFromObject({
      server: { host: '127.0.0.1', port, headersTimeoutMs: 1000, requestTimeoutMs: 2000, maxConnectionsPerAddress: 4, maxHeaderBytes: 4096 },
      dataDir: path.join(dir, 'data'),
      hooks: { token: TOKEN },
      agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
      heartbeat: { everySeconds: 3600 },
    }, path.join(dir, 'hookrelay.yaml'), {});
    const sink = new Writable({ write(chunk, _e, cb) { lines.push(JSON.parse(String(chunk))); cb(); } });
    running = await start(loaded, createLogger('info', sink));
  });
  after(async () => { await running.stop(); });

  /** Sends `head`, then `drip` every 200 ms until the server closes; what it answered and when. */
  async function trickle(head: string, drip: string) {
    const socket = await connect(port);
    const done = closed(socket, Date.now());
    socket.write(head);
    const timer = setInterval(() => socket.writable && socket.write(drip), 200);
    const result = await done;
    clearInterval(timer);
    return result;
  }

  // A probe's answer must not close the connection: requests pipelined behind it would be lost.
  it('keeps the connection of GET /healthz alive, and answers the requests pipelined behind it', async () => {
    const socket = await connect(port);
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => { received += d; });
    const health = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    const body = JSON.stringify({ text: 'pipelined', mode: 'next-heartbeat' });
    const wake = `POST /hooks/wake HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    socket.write(health + health + wake + health);
    const answers = await until('four answers', async () => { const a = parseAnswers(received); return a.length >= 4 ? a : undefined; }, 5000);
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200]);
    expect(answers.map((a) => a.headers.connection ?? 'keep-alive')).to.deep.equal(['keep-alive', 'keep-alive', 'keep-alive', 'keep-alive']);
    expect(JSON.parse(answers[0]!.body)).to.deep.equal({ ok: true });
    expect(JSON.parse(answers[2]!.body)).to.include({ ok: true, mode: 'next-heartbeat' });
    socket.write(health); // and the connection still serves
    await until('a fifth answer', async () => (parseAnswers(received).length === 5 ? true : undefined), 5000);
    socket.destroy();
  });

  // The two trickles start together, so that their waits on the limits overlap.
  let slowHeaders: ReturnType<typeof trickle>;
  let slowBody: ReturnType<typeof trickle>;
  before(() => {
    slowHeaders = trickle('POST /hooks/wake HTTP/1.1\r\nHost: x\r\n', 'X-Slow: a\r\n');
    slowBody = trickle(`POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 100\r\n\r\n{`, ' ');
  });

  it('closes a client that trickles its headers within about a second of server.headersTimeoutMs', async () => {
    const { received, afterMs } = await slowHeaders;
    expect(received).to.match(/^HTTP\/1\.1 408/);
    // Limit 1 s, checked every second (connectionsCheckingInterval; Node's default is 30 s).
    expect(afterMs).to.be.within(900, 3500);
  });

  it('closes a client that trickles its body within about a second of server.requestTimeoutMs', async () => {
    const { received, afterMs } = await slowBody;
    expect(received).to.match(/^HTTP\/1\.1 408/);
    expect(afterMs).to.be.within(1900, 4500);
  });

  it('answers 431 to a request head past server.maxHeaderBytes, closes that connection and keeps serving', async () => {
    const big = await connect(port);
    const done = closed(big, Date.now());
    big.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(5000)}\r\n\r\n`);
    const { received } = await done;
    expect(received).to.match(/^HTTP\/1\.1 431 /);
    // Under the cap (and over none of Node's defaults) is served: the cap is the configured one.
    const fits = await call(`http://127.0.0.1:${port}/healthz`, { headers: { 'x-big': 'a'.repeat(3000) } });
    expect(fits.status).to.equal(200);
    const bigger = await call(`http://127.0.0.1:${port}/healthz`, { headers: { 'x-big': 'a'.repeat(4500) } });
    expect(bigger.status).to.equal(431);
    expect((await call(`http://127.0.0.1:${port}/healthz`)).status).to.equal(200);
  });

  it('answers 503 with Retry-After to connections from one address past server.maxConnectionsPerAddress, and frees the place when one closes', async () => {
    const held = await Promise.all([1, 2, 3, 4].map(() => connect(port)));
    await sleep(100); // the server has counted them
    const extra = await connect(port);
    const { received } = await closed(extra, Date.now());
    const answer = parseAnswer(received)!;
    expect(answer.status).to.equal(503);
    expect(answer.headers['retry-after']).to.equal('1');
    expect(JSON.parse(answer.body).error.code).to.equal('unavailable');
    held[0]!.destroy();
    await sleep(100);
    const r = await call(`http://127.0.0.1:${port}/healthz`);
    expect(r.status).to.equal(200);
    for (const s of held) s.destroy();
  });

  it('logs a client that hangs up mid-body as what it is, not as a 500', async () => {
    const before = lines.length;
    const socket = await connect(port);
    socket.write(`POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 100\r\n\r\n{"text":`);
    await sleep(100);
    socket.destroy();
    await sleep(200);
    const logged = lines.slice(before);
    expect(logged.filter((l) => l.level >= 50), JSON.stringify(logged)).to.deep.equal([]);
    expect(logged.some((l) => /client closed the connection/.test(l.msg) && l.level === 30)).to.equal(true);
    expect((await call(`http://127.0.0.1:${port}/hooks/wake`, { token: TOKEN, json: { text: 'still here' } })).status).to.equal(200);
  });
});
