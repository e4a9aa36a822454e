import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { FIXTURE_TRANSFORMS } from '../../unit/engine/make-config.js';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';
import { parseAnswer, type RawAnswer } from '../../support/raw-http.js';

/** `curl` exactly as a user runs it, or undefined when the machine has none. */
function curl(args: string[]): Promise<{ code: number; stdout: string } | undefined> {
  return new Promise((resolve) => {
    execFile('curl', args, { timeout: 20000 }, (err, stdout) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') return resolve(undefined);
      resolve({ code: err ? Number(err.code) || 1 : 0, stdout });
    });
  });
}

/** Writes `head`, a blank line and the body bytes as they are (no client re-encodes them). */
function rawBytes(port: number, head: string, body: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(Buffer.concat([Buffer.from(`${head}\r\nContent-Length: ${body.length}\r\n\r\n`, 'latin1'), body])));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const answer = parseAnswer(received);
      if (answer) { socket.destroy(); resolve(answer); }
    });
    socket.on('error', reject);
  });
}

describe('http: how body bytes become a payload (curl -d, form data, UTF-8)', () => {
  let gw: InProcess;
  const push = { repository: { full_name: 'acme/api' }, pusher: { name: 'ada' }, note: 'a+b=c & d%20e' };
  before(async () => {
    gw = await startInProcess({
      hooks: {
        transformsDir: FIXTURE_TRANSFORMS,
        mappings: [
          { id: 'github', match: { path: 'github' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'push to {{repository.full_name}} by {{pusher.name}} ({{note}})' },
          { id: 'form', match: { path: 'form' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'form {{a}} {{b}}' },
          { id: 'names', match: { path: 'names' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: '{{toString}}|{{valueOf}}|{{hasOwnProperty}}|{{a}}' },
          { id: 'keys', match: { path: 'keys' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'template', transform: { module: 'keys.mjs' } },
        ],
      },
    });
  });
  after(async () => { await gw.stop(); });

  async function lastEvent(): Promise<string> {
    const r = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
    return r.data.events.at(-1).text;
  }

  it('curl -d @push.json (form-typed, JSON text, newlines stripped by curl) is read as JSON on a mapped hook', async () => {
    const file = path.join(gw.dir, 'push.json');
    fs.writeFileSync(file, `${JSON.stringify(push, null, 2)}\n`);
    const url = `${gw.hooks}/github`;
    const r = await curl(['-sS', '-d', `@${file}`, '-H', `Authorization: Bearer ${TOKEN}`, '-o', '-', '-w', '\n%{http_code}', url]);
    let status: number;
    let body: string;
    if (r) {
      [body, status] = [r.stdout.slice(0, r.stdout.lastIndexOf('\n')), Number(r.stdout.slice(r.stdout.lastIndexOf('\n') + 1))];
    } else {
      // No curl here: its exact request (-d @file drops CR and LF and sends the form type).
      const text = JSON.stringify(push, null, 2).replace(/[\r\n]/g, '');
      const port = Number(new URL(gw.base).port);
      const a = await rawBytes(port, `POST /hooks/github HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/x-www-form-urlencoded`, Buffer.from(text));
      [body, status] = [a.body, a.status];
    }
    expect(status, body).to.equal(200);
    expect(JSON.parse(body)).to.include({ ok: true, action: 'wake' });
    expect(await lastEvent()).to.equal('push to acme/api by ada (a+b=c & d%20e)');
  });

  it('real form data on a mapped hook is still form data', async () => {
    const r = await call(`${gw.hooks}/form`, { token: TOKEN, raw: 'a=x%20y&b=%7Bz', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' } });
    expect(r.status, r.text).to.equal(200);
    expect(await lastEvent()).to.equal('form x y {z');
  });

  // Defect 4 of issue 30: form fields were collected on a plain object, so a name that an
  // object inherits (toString…) found the inherited function and became [<function>, value].
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  it('form fields named like Object.prototype members are plain fields, for templates and transforms', async () => {
    const r = await call(`${gw.hooks}/names`, { token: TOKEN, raw: 'toString=t&valueOf=v&hasOwnProperty=h&a=1&a=2', headers: form });
    expect(r.status, r.text).to.equal(200);
    expect(await lastEvent()).to.equal('t|v|h|["1","2"]');
    const t = await call(`${gw.hooks}/keys`, { token: TOKEN, raw: 'toString=t&valueOf=v&a=1&a=2&toString=u', headers: form });
    expect(t.status, t.text).to.equal(200);
    expect(await lastEvent()).to.equal('keys ["toString","valueOf","a"] values {"toString":["t","u"],"valueOf":"v","a":["1","2"]} inherited undefined');
  });

  it('form fields named __proto__, constructor or prototype (however encoded) never reach a transform', async () => {
    const t = await call(`${gw.hooks}/keys`, { token: TOKEN, raw: '__proto__=p&%5F_proto__=q&constructor=c&prototype=x&a=1', headers: form });
    expect(t.status, t.text).to.equal(200);
    expect(await lastEvent()).to.equal('keys ["a"] values {"a":"1"} inherited undefined');
  });

  // Defect 6 of issue 30: the strip ran only when the raw text spelled `__proto__`.
  for (const key of ['\\u005f_proto__', '__pr\\u006fto__', '\\u005F\\u005Fproto__', '\\u0063onstructor', 'prot\\u006ftype']) {
    it(`a JSON key spelled "${key}" is stripped before a transform sees it (no prototype reaches a merge)`, async () => {
      const raw = `{"a":1,"${key}":{"polluted":"yes"},"nested":{"${key}":{"polluted":"deep"},"b":2}}`;
      const t = await call(`${gw.hooks}/keys`, { token: TOKEN, raw, headers: { 'content-type': 'application/json' } });
      expect(t.status, t.text).to.equal(200);
      expect(await lastEvent()).to.equal('keys ["a","nested"] values {"a":1,"nested":{"b":2}} inherited undefined');
    });
  }

  it('a form-typed body that starts with { but is not JSON is 400 invalid_json, without the body in the answer', async () => {
    const r = await call(`${gw.hooks}/github`, { token: TOKEN, raw: '{"secret-text":', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(r.status).to.equal(400);
    expect(r.data.error).to.deep.equal({ code: 'invalid_json', message: 'the body is not valid JSON' });
  });

  for (const [what, sub] of [['a mapped hook', '/github'], ['/wake', '/wake']]) {
    it(`invalid UTF-8 on ${what} is 400 invalid_json, and the process serves on`, async () => {
      const port = Number(new URL(gw.base).port);
      const bad = Buffer.concat([Buffer.from('{"text":"caf'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
      const a = await rawBytes(port, `POST /hooks${sub} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nConnection: close`, bad);
      expect(a.status, a.body).to.equal(400);
      expect(JSON.parse(a.body).error).to.deep.equal({ code: 'invalid_json', message: 'the body is not valid UTF-8' });
      const ok = await rawBytes(port, `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nConnection: close`, Buffer.from('{"text":"caf\u00e9","mode":"next-heartbeat"}'));
      expect(ok.status, ok.body).to.equal(200);
      expect(await lastEvent()).to.equal('caf\u00e9');
    });
  }
});
