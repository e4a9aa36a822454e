import net from 'node:net';
import { expect } from 'chai';
import { freePort, startGateway, tmpDir, until, type Gateway } from '../../support/gateway.js';

/**
 * SIGTERM (CONTRACT.md §2: drains and exits 0): a gateway with nothing in flight stops at once.
 * The runtime's grace for deliveries under way (3 s) is a ceiling, never a wait, and a
 * connection that carries no request — a proxy's or load balancer's pre-opened one, a
 * keep-alive one between requests — does not hold the stop open.
 */
describe('stop: with nothing in flight, SIGTERM exits at once', function () {
  this.timeout(60_000);
  /** Well under the 3 s grace: a bound on behaviour (no wait), not a speed target. */
  const PROMPT_MS = 1500;
  let gw: Gateway | undefined;
  afterEach(async () => {
    await gw?.kill();
    gw = undefined;
  });

  async function start(): Promise<Gateway> {
    const dir = tmpDir('hookrelay-stop-');
    gw = await startGateway({ server: { host: '127.0.0.1', port: await freePort() }, dataDir: `${dir}/data`, hooks: { token: 'stop-token-0123456789' }, heartbeat: { everySeconds: 3600 } }, { dir });
    return gw;
  }

  /** SIGTERM, then how long until the process exited (failing past 10 s, with its output). */
  async function timedStop(g: Gateway): Promise<{ code: number | null; ms: number }> {
    const t0 = Date.now();
    g.proc.kill('SIGTERM');
    await until(() => `the gateway to exit after SIGTERM:\n${g.output().slice(-2000)}`, () => g.proc.exitCode !== null, 10_000);
    return { code: g.proc.exitCode, ms: Date.now() - t0 };
  }

  /** A raw connection to the gateway, and what it has received once it closes. */
  async function connect(g: Gateway) {
    const socket = net.connect(Number(new URL(g.base).port), '127.0.0.1');
    let received = '';
    socket.on('data', (d) => { received += d; });
    socket.on('error', () => {});
    const closed = new Promise<string>((r) => socket.once('close', () => r(received)));
    await new Promise<void>((r) => socket.once('connect', () => r()));
    return { socket, closed, received: () => received };
  }

  it('idle: exits 0 well under the grace', async () => {
    const { code, ms } = await timedStop(await start());
    expect(code).to.equal(0);
    expect(ms).to.be.below(PROMPT_MS);
  });

  it('with a connection open that has sent nothing yet: exits 0 well under the grace, and that connection is closed', async () => {
    const g = await start();
    const c = await connect(g);
    try {
      const { code, ms } = await timedStop(g);
      expect(code, g.output().slice(-2000)).to.equal(0);
      expect(ms).to.be.below(PROMPT_MS);
      expect(await c.closed).to.equal('');
    } finally {
      c.socket.destroy();
    }
  });

  it('a request in flight at SIGTERM is answered, and its keep-alive connection then closed: exits 0 as soon as it is', async () => {
    const g = await start();
    const c = await connect(g);
    const body = '{"text":"in flight","mode":"next-heartbeat"}';
    // The gate answers 100 Continue to a request it lets through: then it is in flight.
    c.socket.write(`POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer stop-token-0123456789\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`);
    try {
      await until('100 Continue', () => c.received().startsWith('HTTP/1.1 100 Continue'));
      g.proc.kill('SIGTERM');
      await until('the gateway to begin stopping', () => g.output().includes('stopping: draining'));
      const t0 = Date.now();
      c.socket.write(body);
      const answer = await c.closed;
      expect(answer, answer).to.match(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
      await until(() => `the gateway to exit:\n${g.output().slice(-2000)}`, () => g.proc.exitCode !== null, 10_000);
      expect(g.proc.exitCode).to.equal(0);
      expect(Date.now() - t0).to.be.below(PROMPT_MS);
    } finally {
      c.socket.destroy();
    }
  });
});
