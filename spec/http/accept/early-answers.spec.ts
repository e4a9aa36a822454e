import net from 'node:net';
import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';
import { parseAnswer, type RawAnswer } from '../../support/raw-http.js';

/**
 * A sender can always read its refusal (CONTRACT.md §8): an answer given before the whole body
 * was read — a 413 past the body limit, announced or found while reading a chunked body — is
 * followed by reading and discarding up to 1 MiB or 5 s more of the body before the connection
 * closes, so that the client's writes do not meet a reset (EPIPE, ECONNRESET) that can destroy
 * the answer before it is read. Over raw sockets: no client library smooths anything over.
 */
const LIMIT = 16 * 1024;
const FORM_LIMIT = 32 * 1024;

interface Sent {
  received: string;
  answer: RawAnswer | undefined;
  /** The socket error the client met, if any (EPIPE, ECONNRESET). */
  error: string | undefined;
  /** Bytes the client wrote before the server closed (or all of them). */
  written: number;
  /** The server closed before the client had written everything. */
  cutOff: boolean;
}

/**
 * Writes `head` and `parts` on a new socket, `pace`: `fast` all at once (each part awaiting
 * drain only), `slow` each part once the one before has left (its write callback and a turn of
 * the event loop, so that the server answers mid-body); then waits for the server to close.
 * Like curl or node:http, it goes on sending its body when the server has answered — even
 * after the server's FIN — and closes its side once the body is sent.
 */
function send(port: number, head: string, parts: (string | Buffer)[], pace: 'fast' | 'slow'): Promise<Sent> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let received = '';
    let error: string | undefined;
    let written = 0;
    let all = false;
    let ended = false;
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => { received += d; });
    socket.on('error', (e: NodeJS.ErrnoException) => { error ??= e.code ?? e.message; });
    socket.on('end', () => {
      ended = true;
      if (all) socket.end();
    });
    socket.on('close', () => resolve({ received, answer: parseAnswer(received), error, written, cutOff: !all }));
    socket.on('connect', async () => {
      socket.write(head);
      for (const part of parts) {
        if (socket.destroyed) return;
        written += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
        if (pace === 'slow') {
          await new Promise((r) => socket.write(part, r));
          await new Promise((r) => setImmediate(r));
        } else if (!socket.write(part)) {
          await new Promise((r) => { socket.once('drain', r); socket.once('close', r); });
        }
      }
      if (socket.destroyed) return;
      all = true;
      if (ended) socket.end();
    });
  });
}

/** `n` chunks of `size` bytes of chunked encoding, then the last chunk. */
const chunks = (n: number, size: number, byte = 'a') => [...Array.from({ length: n }, () => `${size.toString(16)}\r\n${byte.repeat(size)}\r\n`), '0\r\n\r\n'];
const head = (path: string, headers: Record<string, string | number>) =>
  `POST /hooks${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;

/** A multipart form whose one file makes it `bytes` long or so, as a sender encodes it. */
async function form(bytes: number): Promise<{ body: Buffer; contentType: string }> {
  const f = new FormData();
  f.append('from', 'ada@example.com');
  f.append('attachment1', new Blob([Buffer.alloc(bytes, 0x41)], { type: 'application/pdf' }), 'report.pdf');
  const encoded = new Response(f);
  return { body: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}
/** `body` as chunked encoding in chunks of at most `size` bytes. */
const asChunks = (body: Buffer, size: number) => {
  const out: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) {
    const part = body.subarray(i, i + size);
    out.push(Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]));
  }
  return [...out, Buffer.from('0\r\n\r\n')];
};

describe('http: a sender can always read its refusal', function () {
  this.timeout(60_000);
  let gw: InProcess;
  let port: number;
  let accepted: string;
  let stalled: Promise<Sent>;

  before(async () => {
    gw = await startInProcess({
      hooks: {
        maxBodyBytes: LIMIT,
        mappings: [{ id: 'sendgrid', match: { path: 'sendgrid' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'mail from {{from}}', maxBodyBytes: FORM_LIMIT }],
      },
    });
    port = Number(new URL(gw.base).port);
    const r = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'accepted before the refusals', mode: 'next-heartbeat' } });
    expect(r.status, r.text).to.equal(200);
    accepted = r.data.eventId;
    // Closed only once the 5 s of lingering (answer.ts) are over: sent now, so that the wait overlaps the other tests.
    stalled = send(port, head('/wake', { 'transfer-encoding': 'chunked' }), chunks(2, 16 * 1024).slice(0, 2), 'slow');
  });
  after(async () => { await gw.stop(); });

  /** The whole 413 was read, with nothing cut off and no reset on the client's side. */
  function expectReadable(x: Sent, what: string, limit = 'hooks.maxBodyBytes'): void {
    expect(x.error, `${what}: the client met ${x.error} (it read ${JSON.stringify(x.received.slice(0, 80))})`).to.equal(undefined);
    expect(x.answer?.status, `${what}: ${JSON.stringify(x.received.slice(0, 200))}`).to.equal(413);
    expect(x.answer!.headers.connection, what).to.equal('close');
    expect(JSON.parse(x.answer!.body).error.code, what).to.equal('payload_too_large');
    expect(JSON.parse(x.answer!.body).error.message, what).to.include(limit);
    expect(x.cutOff, `${what}: the client could send its whole body`).to.equal(false);
  }

  // Offered against a 16 KiB limit (32 KiB for the form), in 16 KiB chunks: fast, more than
  // loopback's socket buffers take at once, and less than the 1 MiB drained after the answer.
  for (const [pace, kib] of [['slow', 256], ['fast', 960]] as const) {
    it(`a chunked body of ${kib} KiB past hooks.maxBodyBytes, sent ${pace}: the client reads the whole 413, 20 times out of 20`, async () => {
      for (let i = 0; i < 20; i++) {
        expectReadable(await send(port, head('/wake', { 'transfer-encoding': 'chunked' }), chunks(kib / 16, 16 * 1024), pace), `try ${i + 1}`);
      }
    });

    it(`a multipart form of ${kib} KiB past its mapping's maxBodyBytes, chunked or announced, sent ${pace}: the client reads the whole 413, 20 times out of 20`, async () => {
      const { body, contentType } = await form(kib * 1024);
      for (let i = 0; i < 20; i++) {
        const chunked = await send(port, head('/sendgrid', { 'transfer-encoding': 'chunked', 'content-type': contentType }), asChunks(body, 16 * 1024), pace);
        expectReadable(chunked, `chunked, try ${i + 1}`, 'maxBodyBytes of mapping "sendgrid"');
        const announced = await send(port, head('/sendgrid', { 'content-length': body.length, 'content-type': contentType }), [body], pace);
        expectReadable(announced, `announced, try ${i + 1}`, 'maxBodyBytes of mapping "sendgrid"');
      }
    });
  }

  it('a refused token with a chunked body: the client reads its 401 too', async () => {
    for (let i = 0; i < 5; i++) {
      const x = await send(port, head('/wake', { 'transfer-encoding': 'chunked' }).replace(TOKEN, 'wrong-token'), chunks(16, 16 * 1024), 'slow');
      expect(x.error, `try ${i + 1}: the client met ${x.error}`).to.equal(undefined);
      expect([x.answer?.status, x.cutOff], `try ${i + 1}`).to.deep.equal([401, false]);
    }
    // A right token clears the hooks-token failures these made.
    expect((await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'x', mode: 'next-heartbeat' } })).status).to.equal(200);
  });

  it('a body that goes on past 1 MiB more is cut off after the answer, which the client has read', async () => {
    // 4 MiB offered against a 16 KiB limit.
    const x = await send(port, head('/wake', { 'transfer-encoding': 'chunked' }), chunks(256, 16 * 1024), 'fast');
    expect(x.answer?.status, JSON.stringify(x.received.slice(0, 200))).to.equal(413);
    expect(JSON.parse(x.answer!.body).error.code).to.equal('payload_too_large');
    expect(x.cutOff, 'the connection closed before the whole body was sent').to.equal(true);
  });

  it('a body that stops coming after the answer: the connection closes all the same', async () => {
    const x = await stalled;
    expect(x.answer?.status, JSON.stringify(x.received.slice(0, 200))).to.equal(413);
  });

  // The console reads its own bodies (console/read-body.ts), and its answers follow the same rule.
  /** A console POST as its own pages send it (CSRF: the same Origin, hosts.ts), with the session `cookie` if given. */
  const consoleHead = (path: string, cookie?: string) =>
    `POST /console/${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://127.0.0.1:${port}\r\n${cookie ? `Cookie: ${cookie}\r\n` : ''}Transfer-Encoding: chunked\r\n\r\n`;

  /** The console's 413, read whole, with no reset on the client's side. */
  function expectConsoleReadable(x: Sent, what: string, limit: number): void {
    expect(x.error, `${what}: the client met ${x.error} (it read ${JSON.stringify(x.received.slice(0, 80))})`).to.equal(undefined);
    expect(x.answer?.status, `${what}: ${JSON.stringify(x.received.slice(0, 200))}`).to.equal(413);
    expect(x.answer!.headers.connection, what).to.equal('close');
    expect(JSON.parse(x.answer!.body).error, what).to.deep.equal({ code: 'payload_too_large', message: `the body is larger than ${limit} bytes` });
    expect(x.cutOff, `${what}: the client could send its whole body`).to.equal(false);
  }

  it('console: a chunked sign-in form of 256 KiB past its 4 KiB, sent slow: the client reads the whole 413, 20 times out of 20', async () => {
    for (let i = 0; i < 20; i++) {
      expectConsoleReadable(await send(port, consoleHead('login'), chunks(16, 16 * 1024, 't'), 'slow'), `try ${i + 1}`, 4096);
    }
  });

  it('console: a chunked playground request of 256 KiB past its limit, sent slow: the client reads the whole 413, 20 times out of 20', async () => {
    const signedIn = await fetch(`${gw.base}/console/login`, {
      method: 'POST', redirect: 'manual', body: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
      headers: { origin: gw.base, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(signedIn.status).to.equal(303);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    for (let i = 0; i < 20; i++) {
      // The playground takes a payload of hooks.maxBodyBytes, escaped, and 16 KiB more (playground.ts).
      expectConsoleReadable(await send(port, consoleHead('playground', cookie), chunks(16, 16 * 1024), 'slow'), `try ${i + 1}`, LIMIT * 2 + 16 * 1024);
    }
  });

  it('console: a chunked body to a POST that does not read it (no session): the client reads its 401', async () => {
    for (const path of ['logout', 'pause/sendgrid', 'replay/1', 'playground']) {
      const x = await send(port, consoleHead(path), chunks(16, 16 * 1024), 'slow');
      expect(x.error, `${path}: the client met ${x.error}`).to.equal(undefined);
      expect([x.answer?.status, x.cutOff], path).to.deep.equal([401, false]);
    }
  });

  it('the gateway lives on, and what it accepted before is still there', async () => {
    const r = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'accepted after the refusals', mode: 'next-heartbeat' } });
    expect(r.status, r.text).to.equal(200);
    const events = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
    const ids = (events.data.events as { id: string }[]).map((e) => e.id);
    expect(ids).to.include(accepted).and.include(r.data.eventId);
  });
});
