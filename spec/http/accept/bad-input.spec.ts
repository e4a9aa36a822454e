import net from 'node:net';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { expect } from 'chai';
import { call, ROOT } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';
import { parseAnswer, type RawAnswer } from '../../support/raw-http.js';

/**
 * Hostile and broken input over the real listener: each case asserts the status and the
 * error code, that the server keeps serving, and (at the end) that nothing it accepted
 * before or between the bad requests was lost.
 */
describe('http: bad input never hurts the gateway', function () {
  const LIMIT = 64 * 1024;
  const BODY_TIMEOUT_MS = 2000; // past what a loaded machine takes to read and decode a bomb's first 64 KB
  let gw: InProcess;
  let port: number;
  /** Event ids and run ids the gateway accepted while being fed bad input. */
  const acceptedEvents: string[] = [];
  const acceptedRuns: string[] = [];

  before(async () => {
    gw = await startInProcess({
      hooks: {
        maxBodyBytes: LIMIT,
        bodyTimeoutMs: BODY_TIMEOUT_MS,
        mappings: [
          { id: 'note', match: { path: 'note' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'note {{a.b}} {{list.[0].c}}' },
          { id: 'task', match: { path: 'task' }, action: 'agent', deliver: false, wakeMode: 'next-heartbeat', messageTemplate: 'task {{a.b}}' },
        ],
      },
    });
    port = Number(new URL(gw.base).port);
    const wake = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'accepted before the bad input', mode: 'next-heartbeat' } });
    const agent = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'accepted run', deliver: false, wakeMode: 'next-heartbeat' } });
    expect([wake.status, agent.status]).to.deep.equal([200, 202]);
    acceptedEvents.push(wake.data.eventId);
    acceptedRuns.push(agent.data.runId);
    unfinished = exchange([head('/wake', { 'content-length': 100 }), '{"text":"never finished"'], BODY_TIMEOUT_MS + 3000);
    trickled = trickle();
  });
  after(async () => { await gw.stop(); });

  let n = 0;
  /** A good request after a bad one is accepted (and remembered for the final check). */
  async function stillServing(): Promise<void> {
    const r = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: `alive ${++n}`, mode: 'next-heartbeat' } });
    expect(r.status, `a good request after the bad one: ${r.text}`).to.equal(200);
    acceptedEvents.push(r.data.eventId);
  }

  async function expectRefused(r: { status: number; data: any; text?: string }, status: number, code: string, inMessage?: string): Promise<void> {
    expect(r.status, r.text ?? JSON.stringify(r.data)).to.equal(status);
    expect(r.data.ok).to.equal(false);
    expect(r.data.error.code).to.equal(code);
    if (inMessage !== undefined) expect(r.data.error.message).to.include(inMessage);
    await stillServing();
  }

  interface Exchange {
    /** What the server sent, as latin1 text. */
    received: string;
    answer: RawAnswer | undefined;
    /** The server closed the connection (within `waitMs` of the last write). */
    closed: boolean;
    /** Bytes the client managed to write before the server closed. */
    written: number;
    afterMs: number;
  }

  /**
   * Writes `parts` on a new socket exactly as given (each awaiting drain), then waits up to
   * `waitMs` for the server to close (with `answerEnds`, only until a whole answer has come);
   * stops writing once the server has closed.
   */
  function exchange(parts: (string | Buffer)[], waitMs = 1500, answerEnds = false): Promise<Exchange> {
    return new Promise((resolve) => {
      const since = Date.now();
      let received = '';
      let closed = false;
      let written = 0;
      let timer: NodeJS.Timeout | undefined;
      const socket = net.connect(port, '127.0.0.1');
      socket.setEncoding('latin1');
      socket.on('data', (d: string) => {
        received += d;
        if (answerEnds && parseAnswer(received)) finish();
      });
      socket.on('error', () => {});
      const finish = () => {
        clearTimeout(timer);
        socket.destroy();
        resolve({ received, answer: parseAnswer(received), closed, written, afterMs: Date.now() - since });
      };
      socket.on('close', () => { closed = true; finish(); });
      socket.on('connect', async () => {
        for (const part of parts) {
          if (closed || socket.destroyed) return;
          written += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
          if (!socket.write(part)) await new Promise((r) => { socket.once('drain', r); socket.once('close', r); });
        }
        timer = setTimeout(finish, waitMs);
      });
    });
  }

  /** One byte every 100 ms: never idle, but the whole body would take 10 s. */
  const trickle = () => new Promise<Exchange>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    const since = Date.now();
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => { received += d; });
    socket.on('error', () => {});
    const timer = setInterval(() => socket.writable && socket.write(' '), 100);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ received, answer: parseAnswer(received), closed: true, written: 0, afterMs: Date.now() - since });
    });
    socket.write(`${head('/wake', { 'content-length': 100 })}{"text":`);
  });
  // The two waits on hooks.bodyTimeoutMs start in `before`, so that they overlap the other tests.
  let unfinished: Promise<Exchange>;
  let trickled: Promise<Exchange>;

  const head = (path: string, headers: Record<string, string | number> = {}) =>
    `POST /hooks${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;

  function jsonOf(x: Exchange): any {
    expect(x.answer, `an answer: ${JSON.stringify(x.received.slice(0, 200))}`).to.not.equal(undefined);
    return JSON.parse(x.answer!.body);
  }

  describe('JSON that is not a JSON object', () => {
    const bodies: [string, string, string, string?][] = [
      ['malformed JSON', '{"text": "x",}', 'invalid_json'],
      ['truncated JSON', '{"text": "cut off', 'invalid_json'],
      ['a bare word', 'hello', 'invalid_json'],
      ['an array', '[{"text":"x"}]', 'invalid_payload', 'body'],
      ['a string', '"text"', 'invalid_payload', 'body'],
      ['a number', '42', 'invalid_payload', 'body'],
      ['null', 'null', 'invalid_payload', 'body'],
      ['true', 'true', 'invalid_payload', 'body'],
    ];
    for (const route of ['/wake', '/agent', '/note']) {
      for (const [what, raw, code, field] of bodies) {
        // A mapped hook takes a top-level array as its payload (CONTRACT.md §15).
        if (route === '/note' && what === 'an array') {
          it(`${route}: an array is a payload, acted on`, async () => {
            const r = await call(`${gw.hooks}${route}`, { token: TOKEN, raw });
            expect(r.status, r.text).to.equal(200);
            acceptedEvents.push(r.data.eventId);
          });
          continue;
        }
        it(`${route}: 400 ${code} for ${what}`, async () => {
          await expectRefused(await call(`${gw.hooks}${route}`, { token: TOKEN, raw }), 400, code, field);
        });
      }
    }

    for (const [what, raw] of [
      ['10 000 nested arrays', `${'['.repeat(10_000)}${']'.repeat(10_000)}`],
      ['10 000 nested objects', `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`],
    ]) {
      it(`${what}: refused on /wake, taken by a mapping that reads only the top (no stack overflow)`, async () => {
        const r = await call(`${gw.hooks}/wake`, { token: TOKEN, raw: raw! });
        await expectRefused(r, 400, 'invalid_payload');
        const mapped = await call(`${gw.hooks}/note`, { token: TOKEN, raw: raw! });
        expect(mapped.status, mapped.text).to.equal(200);
        acceptedEvents.push(mapped.data.eventId);
        await stillServing();
      });
    }
  });

  describe('bodies that lie about their length', () => {
    it(`a Content-Length longer than the body sent: 408 request_timeout after hooks.bodyTimeoutMs, connection closed`, async () => {
      const x = await unfinished;
      expect(x.answer?.status, x.received).to.equal(408);
      expect(jsonOf(x).error).to.deep.equal({ code: 'request_timeout', message: `the body did not arrive within hooks.bodyTimeoutMs (${BODY_TIMEOUT_MS} ms)` });
      expect(x.answer!.headers.connection).to.equal('close');
      expect(x.closed).to.equal(true);
      // Swept every 100 ms (server.requestTimeoutMs, 60 s here, is not what answers; the slack is
      // for a loaded machine).
      expect(x.afterMs).to.be.within(BODY_TIMEOUT_MS - 50, BODY_TIMEOUT_MS + 2000);
      await stillServing();
    });

    it('a body that trickles in for longer than hooks.bodyTimeoutMs: 408, even though bytes keep coming', async () => {
      const x = await trickled;
      expect(x.answer?.status).to.equal(408);
      expect(jsonOf(x).error.code).to.equal('request_timeout');
      expect(x.afterMs).to.be.below(BODY_TIMEOUT_MS + 2000);
      await stillServing();
    });

    it('a Content-Length shorter than the body: the body is read to its length and accepted; the rest is a bad next request (400, closed)', async () => {
      const body = JSON.stringify({ text: 'the first 45 bytes', mode: 'next-heartbeat' });
      const x = await exchange([head('/wake', { 'content-length': Buffer.byteLength(body) }) + body + 'GARBAGE AFTER THE BODY\r\n\r\n']);
      expect(x.answer?.status, x.received).to.equal(200);
      acceptedEvents.push(JSON.parse(x.answer!.body).eventId);
      const rest = x.received.slice(x.received.indexOf('\r\n\r\n') + 4 + x.answer!.body.length);
      expect(rest).to.match(/^HTTP\/1\.1 400 /);
      expect(x.closed).to.equal(true);
      await stillServing();
    });

    it('no Content-Length, chunked: a body in several chunks is read whole', async () => {
      const x = await exchange([head('/wake', { 'transfer-encoding': 'chunked' }), '9\r\n{"text":"\r\n', 'c\r\nchunked body\r\n', '1a\r\n","mode":"next-heartbeat"}\r\n', '0\r\n\r\n'], 1500, true);
      expect(x.answer?.status, x.received).to.equal(200);
      acceptedEvents.push(jsonOf(x).eventId);
      await stillServing();
    });

    it('a chunked body past maxBodyBytes: 413 and closed, without reading the rest', async () => {
      const chunk = `4000\r\n${'a'.repeat(0x4000)}\r\n`;
      const total = 4096; // × 16 KiB = 64 MiB offered
      const x = await exchange([head('/wake', { 'transfer-encoding': 'chunked' }), '1\r\n{\r\n', ...Array.from({ length: total }, () => chunk)]);
      expect(x.answer?.status, x.received.slice(0, 200)).to.equal(413);
      expect(jsonOf(x).error.code).to.equal('payload_too_large');
      expect(x.closed).to.equal(true);
      // What the client could push into socket buffers before the close, far from the 64 MiB.
      expect(x.written).to.be.below(16 * 1024 * 1024);
      await stillServing();
    });
  });

  describe('compressed bodies', () => {
    /** Counts the bytes every decoder the server makes produces (the decoders are made through these factories). */
    function countDecoded<K extends 'createGunzip' | 'createBrotliDecompress'>(factory: K): { bytes: number; restore(): void } {
      const original = zlib[factory] as (...a: any[]) => zlib.Gunzip;
      const counter = { bytes: 0, restore: () => { Object.defineProperty(zlib, factory, { value: original }); } };
      Object.defineProperty(zlib, factory, {
        value: (...args: any[]) => {
          const d = original(...args);
          d.on('data', (b: Buffer) => { counter.bytes += b.length; });
          return d;
        },
      });
      return counter;
    }

    const zeros = Buffer.alloc(1024 * 1024);
    /** `mib` MiB of zeros as concatenated gzip members of 1 MiB (about 1 KiB each on the wire). */
    const gzipBomb = (mib: number) => Buffer.concat(Array(mib).fill(zlib.gzipSync(zeros, { level: 9 })));
    /**
     * 1 GiB of zeros in 809 bytes of brotli (quality 5, 16 MiB window; made once, since
     * compressing 1 GiB takes a second or so).
     */
    const brotliBomb = () => readFile(path.join(ROOT, 'spec/fixtures/bomb-1gib-zeros.br'));

    for (const [name, factory, make, mib] of [
      ['gzip', 'createGunzip', async () => gzipBomb(60), 60],
      ['br', 'createBrotliDecompress', brotliBomb, 1024],
    ] as const) {
      it(`a ${name} bomb (${mib} MiB of zeros, under the limit on the wire): 413 at the decoded limit, closed, decoding stopped`, async () => {
        const bomb = await make();
        expect(bomb.length).to.be.below(LIMIT);
        const counter = countDecoded(factory);
        try {
          const since = Date.now();
          const x = await exchange([head('/wake', { 'content-encoding': name, 'content-length': bomb.length }), bomb]);
          expect(x.answer?.status, x.received.slice(0, 200)).to.equal(413);
          expect(jsonOf(x).error.code).to.equal('payload_too_large');
          expect(x.closed).to.equal(true);
          expect(Date.now() - since).to.be.below(3000); // the decoded-bytes count below is the proof
          await new Promise((r) => setTimeout(r, 100)); // a decoder that kept going would count on
          // Stopped within one zlib output chunk or so of the limit, not at mib MiB.
          expect(counter.bytes, 'decoded bytes before the stop').to.be.within(LIMIT, LIMIT + 128 * 1024);
        } finally {
          counter.restore();
        }
        await stillServing();
      });
    }

    for (const [name, body] of [
      ['gzip', Buffer.concat([zlib.gzipSync(Buffer.from('{"text":"corrupt"}')).subarray(0, 12), Buffer.from('not deflate at all')])],
      ['deflate', Buffer.from('definitely not deflate')],
      ['br', Buffer.from([0xff, 0xff, 0xff, 0xff, 0x00, 0x01])],
      ['gzip', zlib.gzipSync(Buffer.from('{"text":"truncated stream"}')).subarray(0, 20)],
    ] as const) {
      it(`a corrupt ${name} stream (${body.length} bytes): 400 invalid_json "the ${name} body cannot be decoded"`, async () => {
        const x = await exchange([head('/wake', { 'content-encoding': name, 'content-length': body.length }), body]);
        expect(x.answer?.status, x.received).to.equal(400);
        expect(jsonOf(x).error).to.deep.equal({ code: 'invalid_json', message: `the ${name} body cannot be decoded` });
        await stillServing();
      });
    }

    for (const encoding of ['compress', 'zstd', 'gzip, gzip', 'gzip, br', 'identity, gzip', 'snappy', '*']) {
      it(`Content-Encoding: ${encoding}: 415 unsupported_encoding listing the accepted ones, before reading the body`, async () => {
        const body = '{"text":"x"}';
        const x = await exchange([head('/wake', { 'content-encoding': encoding, 'content-length': body.length }), body]);
        expect(x.answer?.status, x.received).to.equal(415);
        const { error } = jsonOf(x);
        expect(error.code).to.equal('unsupported_encoding');
        expect(error.message).to.include('identity (no encoding), gzip, deflate or br');
        await stillServing();
      });
    }
  });

  describe('prototype keys', () => {
    /** `__proto__`, `constructor` and `prototype` at every depth of `base`, as JSON text (JSON.stringify would drop a `__proto__` key). */
    function poisoned(base: Record<string, string>): string {
      const bad = '"__proto__":{"polluted":"yes","toString":"x"},"constructor":{"prototype":{"polluted":"yes"}},"prototype":{"polluted":"yes"}';
      const fields = Object.entries(base).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)},`).join('');
      return `{${fields}${bad},"a":{"b":"deep",${bad},"c":[{${bad}},[{${bad}}]]},"list":[{"c":"item",${bad}}]}`;
    }

    it('are stripped at every depth of /wake, /agent and a mapped hook: accepted, and nothing is polluted', async () => {
      const wake = await call(`${gw.hooks}/wake`, { token: TOKEN, raw: poisoned({ text: 'proto wake', mode: 'next-heartbeat' }) });
      expect(wake.status, wake.text).to.equal(200);
      acceptedEvents.push(wake.data.eventId);
      const agent = await call(`${gw.hooks}/agent`, { token: TOKEN, raw: poisoned({ message: 'proto agent', wakeMode: 'next-heartbeat' }) });
      expect(agent.status, agent.text).to.equal(202);
      acceptedRuns.push(agent.data.runId);
      const note = await call(`${gw.hooks}/note`, { token: TOKEN, raw: poisoned({}) });
      expect(note.status, note.text).to.equal(200);
      acceptedEvents.push(note.data.eventId);
      const task = await call(`${gw.hooks}/task`, { token: TOKEN, raw: poisoned({}) });
      expect(task.status, task.text).to.equal(202);
      acceptedRuns.push(task.data.runId);
      const form = await call(`${gw.hooks}/note`, { token: TOKEN, raw: '__proto__=x&constructor=y&prototype=z&a=w', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(form.status, form.text).to.equal(200);
      acceptedEvents.push(form.data.eventId);

      expect(({} as any).polluted).to.equal(undefined);
      expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).to.equal(false);
      expect(({} as any).toString).to.equal(Object.prototype.toString);
      const events = (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events;
      expect(events.find((e: any) => e.id === note.data.eventId).text).to.equal('note deep item');
      expect(events.find((e: any) => e.id === form.data.eventId).text).to.equal('note');
      await stillServing();
    });
  });

  describe('wrong types for every field', () => {
    const notString: [string, unknown][] = [['a number', 7], ['an object', { a: 1 }], ['an array', ['x']], ['a boolean', true]];
    const cases: [string, string, Record<string, unknown>][] = [];
    for (const [kind, v] of [...notString, ['null', null] as [string, unknown]]) cases.push(['/wake', `text as ${kind}`, { text: v }]);
    for (const [kind, v] of notString) cases.push(['/wake', `mode as ${kind}`, { text: 'x', mode: v }]);
    for (const [kind, v] of [...notString, ['null', null] as [string, unknown]]) cases.push(['/agent', `message as ${kind}`, { message: v }]);
    for (const field of ['name', 'sessionKey', 'wakeMode', 'provider', 'channel', 'to', 'model', 'thinking', 'agentId', 'sessionMode']) {
      for (const [kind, v] of notString) cases.push(['/agent', `${field} as ${kind}`, { message: 'm', [field]: v }]);
    }
    for (const [kind, v] of [['a string', 'true'], ['a number', 1], ['an object', {}], ['an array', [true]]] as [string, unknown][]) {
      cases.push(['/agent', `deliver as ${kind}`, { message: 'm', deliver: v }]);
    }
    // A fraction is taken (rounded down, as OpenClaw does); zero and negatives are not.
    for (const [kind, v] of [['a string', '60'], ['zero', 0], ['a negative', -1.5], ['an object', {}], ['an array', [60]], ['a boolean', true]] as [string, unknown][]) {
      cases.push(['/agent', `timeoutSeconds as ${kind}`, { message: 'm', timeoutSeconds: v }]);
    }
    for (const [route, what, body] of cases) {
      const field = what.split(' ')[0]!;
      it(`${route} with ${what}: 400 invalid_payload naming ${field}`, async () => {
        await expectRefused(await call(`${gw.hooks}${route}`, { token: TOKEN, json: body }), 400, 'invalid_payload', field);
      });
    }
  });

  describe('header injection', () => {
    const cases: [string, string][] = [
      ['a bare CR in a header value', `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nX-Evil: a\rInjected: 1\r\nContent-Length: 2\r\n\r\n{}`],
      ['a bare LF in a header value', `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nX-Evil: a\nInjected : 1\r\nContent-Length: 2\r\n\r\n{}`],
      ['a NUL in a header value', `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nX-Evil: a\0b\r\nContent-Length: 2\r\n\r\n{}`],
      ['a NUL in the token', `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\0\r\nContent-Length: 2\r\n\r\n{}`],
      ['a CR in the request line', `POST /hooks/wake\rX HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 2\r\n\r\n{}`],
      ['a NUL in the request line', `POST /hooks/wa\0ke HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 2\r\n\r\n{}`],
      ['a space in the request target', `POST /hooks/wake now HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 2\r\n\r\n{}`],
      ['a header name with a space', `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nBad Name: 1\r\nContent-Length: 2\r\n\r\n{}`],
      ['two Content-Lengths that disagree', `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}`],
    ];
    /** Wake events only: the summaries of the runs accepted earlier arrive whenever those runs end. */
    const wakes = async () => (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events.filter((e: any) => e.kind === 'wake').length;
    for (const [what, raw] of cases) {
      it(`${what}: 400, closed, nothing acted on`, async () => {
        const before = await wakes();
        const x = await exchange([raw]);
        expect(x.received, 'an answer').to.match(/^HTTP\/1\.1 400 /);
        expect(x.closed).to.equal(true);
        expect(await wakes()).to.equal(before);
        await stillServing();
      });
    }
  });

  // Mocha runs a suite's own tests before its nested suites: this one is nested to come last.
  describe('in the end', () => it('lost nothing it accepted along the way', async () => {
    const events = (await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN })).data.events.map((e: any) => e.id);
    expect(acceptedEvents.length).to.be.greaterThan(100);
    expect(events).to.include.members(acceptedEvents);
    for (const runId of acceptedRuns) {
      const run = await call(`${gw.hooks}/runs/${runId}`, { token: ADMIN_TOKEN });
      expect(run.status, runId).to.equal(200);
      expect(run.data.run.runId).to.equal(runId);
    }
  }));
});
