import http from 'node:http';
import zlib from 'node:zlib';
import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

describe('http: bodies, payload errors and the answers of every route', () => {
  let gw: InProcess;
  const auth = { authorization: `Bearer ${TOKEN}` };
  before(async () => {
    gw = await startInProcess({
      hooks: {
        maxBodyBytes: 1024,
        allowedSessionKeyPrefixes: ['hook:'],
        mappings: [
          { id: 'form', match: { path: 'form' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'form says {{greeting}} to {{who}}' },
          { id: 'ci', match: { path: 'ci', source: 'ci' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'build {{build.id}}' },
          { id: 'key', match: { path: 'key' }, action: 'agent', messageTemplate: 'x', sessionKey: '{{k}}' },
          { id: 'each', match: { path: 'each' }, action: 'agent', forEach: 'items', messageTemplate: 'item {{n}}', wakeMode: 'next-heartbeat' },
          { id: 'batch', match: { path: 'batch' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'first {{payload[0].event}} of {{payload.length}}' },
          { id: 'boom', match: { path: 'boom' }, action: 'agent', engine: 'jsonata', messageTemplate: '$error("secret-payload-" & word)' },
        ],
      },
      agent: { allowedModels: ['good'], aliases: { fast: 'good' } },
    });
  });
  after(async () => { await gw.stop(); });

  async function expectError(r: Awaited<ReturnType<typeof call>>, status: number, code: string, field?: string) {
    expect(r.status, r.text).to.equal(status);
    expect(r.data.ok).to.equal(false);
    expect(r.data.error.code).to.equal(code);
    if (field) expect(r.data.error.message).to.include(field);
    const ok = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'alive', mode: 'next-heartbeat' } });
    expect(ok.status, 'the process keeps serving').to.equal(200);
  }

  const cases: [string, string, Record<string, any>, number, string, string?][] = [
    ['/wake without text', '/wake', { json: { mode: 'now' } }, 400, 'invalid_payload', 'text'],
    ['/wake with blank text', '/wake', { json: { text: '   ' } }, 400, 'invalid_payload', 'text'],
    ['/wake with text of the wrong type', '/wake', { json: { text: 42 } }, 400, 'invalid_payload', 'text'],
    ['/wake with an unknown mode', '/wake', { json: { text: 'x', mode: 'later' } }, 400, 'invalid_payload', 'mode'],
    ['/wake with an empty body', '/wake', { raw: '' }, 400, 'invalid_payload', 'text'],
    ['malformed JSON', '/wake', { raw: '{"text": ' }, 400, 'invalid_json'],
    ['a JSON array body', '/wake', { raw: '[1,2]' }, 400, 'invalid_payload', 'body'],
    ['a JSON string body', '/agent', { raw: '"hello"' }, 400, 'invalid_payload', 'body'],
    ['a JSON array body on /agent (an array is a payload on mapped hooks only)', '/agent', { raw: '[{"message":"m"}]' }, 400, 'invalid_payload', 'body: must be a JSON object'],
    ['a JSON string body on a mapped hook', '/batch', { raw: '"hello"' }, 400, 'invalid_payload', 'body: must be a JSON object or array'],
    ['/agent without message', '/agent', { json: { name: 'x' } }, 400, 'invalid_payload', 'message'],
    ['/agent with blank message', '/agent', { json: { message: ' \n ' } }, 400, 'invalid_payload', 'message'],
    ['/agent with a blank model', '/agent', { json: { message: 'm', model: '  ' } }, 400, 'invalid_payload', 'model'],
    ['/agent with a model not allowed', '/agent', { json: { message: 'm', model: 'other' } }, 400, 'model_not_allowed'],
    ['/agent with a session key outside the prefixes', '/agent', { json: { message: 'm', sessionKey: 'main' } }, 400, 'session_key_not_allowed'],
    ['/agent with a blank session key', '/agent', { json: { message: 'm', sessionKey: ' ' } }, 400, 'invalid_payload', 'sessionKey'],
    ['/agent with an unknown provider', '/agent', { json: { message: 'm', provider: 'fax', to: '1' } }, 400, 'invalid_payload', 'provider'],
    ['/agent with a bad timeout', '/agent', { json: { message: 'm', timeoutSeconds: -1 } }, 400, 'invalid_payload', 'timeoutSeconds'],
    ['a mapping whose rendered session key is blank', '/key', { json: { k: ' ' } }, 400, 'invalid_payload', 'sessionKey'],
    ['a mapping whose rendered session key is outside the prefixes', '/key', { json: { k: 'main' } }, 400, 'session_key_not_allowed'],
    ['form data on /wake (JSON only there)', '/wake', { raw: 'text=hi', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 400, 'invalid_json'],
    ['a source that matches no mapping', '/ci', { json: { source: 'other' } }, 404, 'no_mapping'],
  ];
  for (const [what, sub, init, status, code, field] of cases) {
    it(`${status} ${code} for ${what}`, async () => {
      await expectError(await call(`${gw.hooks}${sub}`, { token: TOKEN, ...init }), status, code, field);
    });
  }

  it('500 transform_failed when a template throws, without payload text in the answer', async () => {
    const r = await call(`${gw.hooks}/boom`, { token: TOKEN, json: { word: 'PAYLOAD-TEXT' } });
    expect(r.text).to.not.include('PAYLOAD-TEXT');
    expect(r.text).to.not.include('secret-payload');
    await expectError(r, 500, 'transform_failed');
  });

  it('413 payload_too_large on Content-Length past maxBodyBytes', async () => {
    await expectError(await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'x'.repeat(2000) } }), 413, 'payload_too_large');
  });

  it('413 payload_too_large on a streamed (chunked) body past maxBodyBytes', async () => {
    const url = new URL(`${gw.hooks}/wake`);
    const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers: { ...auth, 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (d) => { body += d; });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.write(`{"text":"${'y'.repeat(800)}`);
      req.write('y'.repeat(800));
      req.end('"}');
    });
    expect(r.status).to.equal(413);
    expect(JSON.parse(r.body).error.code).to.equal('payload_too_large');
    await expectError({ status: 413, data: JSON.parse(r.body), text: r.body } as any, 413, 'payload_too_large');
  });

  /** POSTs `body` bytes as they are (no client-side encoding) with the given headers. */
  function postBytes(sub: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; data: any }> {
    return new Promise((resolve, reject) => {
      const req = http.request(new URL(`${gw.hooks}${sub}`), { method: 'POST', headers: { ...auth, 'content-length': String(body.length), ...headers } }, (res) => {
        let text = '';
        res.on('data', (d) => { text += d; });
        res.on('end', () => resolve({ status: res.statusCode!, data: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  const compressed: [string, (b: Buffer) => Buffer][] = [
    ['gzip', zlib.gzipSync],
    ['x-gzip', zlib.gzipSync],
    ['GZIP', zlib.gzipSync],
    ['deflate', zlib.deflateSync],
    ['deflate', zlib.deflateRawSync],
    ['br', zlib.brotliCompressSync],
    ['identity', (b) => b],
  ];
  for (const [encoding, encode] of compressed) {
    it(`takes a body sent with Content-Encoding: ${encoding}${encode === zlib.deflateRawSync ? ' (raw deflate, no zlib header)' : ''}, and stores its decoded text`, async () => {
      const small = `decoded ${encoding} ${encode.name} ✓ ${'z'.repeat(150)}`;
      const r = await postBytes('/wake', encode(Buffer.from(JSON.stringify({ text: small, mode: 'next-heartbeat' }))), { 'content-encoding': encoding });
      expect(r.status, JSON.stringify(r.data)).to.equal(200);
      const ev = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
      expect(ev.data.events.find((e: any) => e.id === r.data.eventId).text).to.equal(small);
    });
  }

  // Issue 30: bytes after the end of a br or deflate stream were ignored, after gzip refused.
  // One rule now: the body is the compressed stream and nothing else.
  const trailing: [string, (b: Buffer) => Buffer, string][] = [
    ['gzip', zlib.gzipSync, 'GARBAGE'],
    ['gzip', zlib.gzipSync, '\0\0\0\0'],
    ['deflate', zlib.deflateSync, 'GARBAGE'],
    ['deflate', zlib.deflateRawSync, 'GARBAGE'],
    ['br', zlib.brotliCompressSync, 'GARBAGE'],
    ['br', zlib.brotliCompressSync, '\0'],
  ];
  for (const [encoding, encode, tail] of trailing) {
    it(`400 invalid_json for bytes after the end of a ${encoding}${encode === zlib.deflateRawSync ? ' (raw)' : ''} stream (${JSON.stringify(tail)}), saying so; nothing is stored`, async () => {
      const text = `trailing ${encoding} ${encode.name} ${JSON.stringify(tail)}`;
      const body = Buffer.concat([encode(Buffer.from(JSON.stringify({ text, mode: 'next-heartbeat' }))), Buffer.from(tail, 'latin1')]);
      const r = await postBytes('/wake', body, { 'content-encoding': encoding });
      expect(r.status, JSON.stringify(r.data)).to.equal(400);
      expect(r.data.error).to.deep.equal({ code: 'invalid_json', message: `the ${encoding} body goes on after the end of its compressed stream: send the compressed stream alone` });
      const ev = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
      expect(ev.data.events.map((e: any) => e.text)).not.to.include(text);
    });
  }

  it('takes a gzip body of several members (RFC 1952 §2.2), decoded as their concatenation', async () => {
    const json = JSON.stringify({ text: 'two gzip members', mode: 'next-heartbeat' });
    const body = Buffer.concat([zlib.gzipSync(Buffer.from(json.slice(0, 10))), zlib.gzipSync(Buffer.from(json.slice(10)))]);
    const r = await postBytes('/wake', body, { 'content-encoding': 'gzip' });
    expect(r.status, JSON.stringify(r.data)).to.equal(200);
  });

  it('applies maxBodyBytes to the decoded bytes: a small gzip body that inflates past it is 413', async () => {
    const body = zlib.gzipSync(Buffer.from(JSON.stringify({ text: 'x'.repeat(5000) })));
    expect(body.length).to.be.below(1024);
    const r = await postBytes('/wake', body, { 'content-encoding': 'gzip' });
    expect(r.status).to.equal(413);
    expect(r.data.error.code).to.equal('payload_too_large');
    expect(r.data.error.message).to.include('decoded');
  });

  it('an empty body with a Content-Encoding is an empty body', async () => {
    const r = await postBytes('/wake', Buffer.alloc(0), { 'content-encoding': 'gzip' });
    await expectError({ status: r.status, data: r.data, text: JSON.stringify(r.data) } as any, 400, 'invalid_payload', 'text');
  });

  it('takes JSON whatever the Content-Type', async () => {
    const r = await call(`${gw.hooks}/wake`, { token: TOKEN, raw: '{"text":"plain text type","mode":"next-heartbeat"}', headers: { 'content-type': 'text/plain' } });
    expect(r.status).to.equal(200);
  });

  it('takes form-urlencoded bodies on mapped hooks', async () => {
    const r = await call(`${gw.hooks}/form`, { token: TOKEN, raw: 'greeting=hello&who=world', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(r.status, r.text).to.equal(200);
    expect(r.data.action).to.equal('wake');
    const ev = await call(`${gw.hooks}/events?limit=1000`, { token: ADMIN_TOKEN });
    expect(ev.data.events.map((e: any) => e.text)).to.include('form says hello to world');
  });

  it('drops own prototype keys from payloads before any template sees them', async () => {
    const r = await call(`${gw.hooks}/form`, { token: TOKEN, raw: '{"greeting":"hi","who":"you","__proto__":{"who":"polluted"},"constructor":{"x":1}}' });
    expect(r.status).to.equal(200);
    expect(({} as any).who).to.equal(undefined);
  });

  it('/wake answers 200 {ok, eventId, mode}, and the event is listed with its seq', async () => {
    const r = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'listed event', mode: 'next-heartbeat' } });
    expect(r.status).to.equal(200);
    expect(r.data).to.include({ ok: true, mode: 'next-heartbeat' });
    const ev = await call(`${gw.hooks}/events?after=0&limit=1000`, { token: ADMIN_TOKEN });
    const e = ev.data.events.find((x: any) => x.id === r.data.eventId);
    expect(e).to.include({ kind: 'wake', text: 'listed event', source: 'wake' });
    expect(e.seq).to.be.a('number');
    const later = await call(`${gw.hooks}/events?after=${e.seq}`, { token: ADMIN_TOKEN });
    expect(later.data.events.every((x: any) => x.seq > e.seq)).to.equal(true);
  });

  it('events: a bad after or limit is 400 invalid_payload', async () => {
    await expectError(await call(`${gw.hooks}/events?after=-1`, { token: ADMIN_TOKEN }), 400, 'invalid_payload', 'after');
    await expectError(await call(`${gw.hooks}/events?limit=abc`, { token: ADMIN_TOKEN }), 400, 'invalid_payload', 'limit');
  });

  it('/agent answers 202 {ok, runId, sessionKey}; the run is readable; channel is an alias of provider; aliases resolve', async () => {
    const r = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'm', channel: 'telegram', to: '5', model: 'fast', deliver: false } });
    expect(r.status, r.text).to.equal(202);
    expect(r.data.sessionKey).to.match(/^hook:[0-9a-f-]{36}$/);
    const run = await call(`${gw.hooks}/runs/${r.data.runId}`, { token: ADMIN_TOKEN });
    expect(run.status).to.equal(200);
    expect(run.data.run).to.include({ runId: r.data.runId, sessionKey: r.data.sessionKey, model: 'good' });
    expect(['queued', 'running', 'failed']).to.include(run.data.run.status);
  });

  it('forEach answers the actions with the first one repeated at the top level; empty array is 204', async () => {
    const r = await call(`${gw.hooks}/each`, { token: TOKEN, json: { items: [{ n: 1 }, { n: 2 }, { n: 3 }] } });
    expect(r.status).to.equal(202);
    expect(r.data.actions).to.have.length(3);
    expect(r.data.runId).to.equal(r.data.actions[0].runId);
    expect(r.data.action).to.equal('agent');
    expect((await call(`${gw.hooks}/each`, { token: TOKEN, json: { items: [] } })).status).to.equal(204);
    expect((await call(`${gw.hooks}/each`, { token: TOKEN, json: {} })).status).to.equal(204);
  });
});

describe('http: a top-level JSON array on a mapped hook (CONTRACT.md §15)', () => {
  let gw: InProcess;
  before(async () => {
    gw = await startInProcess({ hooks: { mappings: [
      { id: 'events', match: { path: 'events-in' }, action: 'wake', wakeMode: 'next-heartbeat', forEach: '*', textTemplate: '{{event}} #{{index}}' },
      { id: 'batch', match: { path: 'batch' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'first {{payload[0].event}} of {{payload.length}}' },
    ] } });
  });
  after(async () => { await gw.stop(); });
  const texts = async (after: number) => (await call(`${gw.hooks}/events?after=${after}`, { token: ADMIN_TOKEN })).data.events.map((e: { text: string }) => e.text);
  const lastSeq = async () => ((await call(`${gw.hooks}/events`, { token: ADMIN_TOKEN })).data.events.at(-1)?.seq ?? 0) as number;

  it('forEach: "*" takes one action per element, in order', async () => {
    const from = await lastSeq();
    const r = await call(`${gw.hooks}/events-in`, { token: TOKEN, raw: '[{"event":"processed"},{"event":"delivered"}]', headers: { 'content-type': 'application/json' } });
    expect(r.status, r.text).to.equal(200);
    expect(r.data.actions.map((a: { action: string }) => a.action)).to.deep.equal(['wake', 'wake']);
    expect(await texts(from)).to.deep.equal(['processed #0', 'delivered #1']);
  });

  it('an empty array is 204 under forEach: "*"; an object there is 400 naming the array it needs', async () => {
    expect((await call(`${gw.hooks}/events-in`, { token: TOKEN, raw: '[]' })).status).to.equal(204);
    const r = await call(`${gw.hooks}/events-in`, { token: TOKEN, json: { event: 'processed' } });
    expect([r.status, r.data.error.code]).to.deep.equal([400, 'invalid_payload']);
    expect(r.data.error.message).to.include('must be a JSON array');
  });

  it('without forEach, the array is one action and the templates read it as `payload`', async () => {
    const from = await lastSeq();
    const r = await call(`${gw.hooks}/batch`, { token: TOKEN, raw: '[{"event":"open"},{"event":"click"},{"event":"bounce"}]' });
    expect(r.status, r.text).to.equal(200);
    expect(await texts(from)).to.deep.equal(['first open of 3']);
  });

  it('/wake and /agent still take only a JSON object', async () => {
    for (const route of ['wake', 'agent']) {
      const r = await call(`${gw.hooks}/${route}`, { token: TOKEN, raw: '[{"text":"t","message":"m"}]' });
      expect([r.status, r.data.error.code, r.data.error.message]).to.deep.equal([400, 'invalid_payload', 'body: must be a JSON object']);
    }
  });
});

describe('http: acceptStatus 200 and a custom hooks path', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { acceptStatus: 200, path: '/in/hooks/' } }); });
  after(async () => { await gw.stop(); });

  it('answers accepted agent runs with 200 under the trimmed path', async () => {
    expect(gw.hooks.endsWith('/in/hooks')).to.equal(true);
    const r = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'm', deliver: false } });
    expect(r.status).to.equal(200);
    expect((await call(`${gw.base}/hooks/wake`, { token: TOKEN, json: { text: 'x' } })).status).to.equal(404);
  });
});

describe('http: hooks.enabled false', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { enabled: false } }); });
  after(async () => { await gw.stop(); });

  it('does not expose the listener at all, but /healthz answers', async () => {
    expect((await call(`${gw.base}/hooks/wake`, { token: TOKEN, json: { text: 'x' } })).status).to.equal(404);
    expect((await call(`${gw.base}/healthz`)).status).to.equal(200);
  });
});

describe('http: a failing transform logs no payload text above debug level', () => {
  it('keeps the payload out of the error log line', async () => {
    const { start } = await import('../../../src/serve.js');
    const { configFromObject } = await import('../../../src/config/load.js');
    const { pino } = await import('pino');
    const { freePort, tmpDir } = await import('../../support/gateway.js');
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (l: string) => lines.push(l) });
    const dir = tmpDir();
    const loaded = configFromObject({
      server: { port: await freePort() }, dataDir: `${dir}/data`,
      hooks: { token: TOKEN, mappings: [{ id: 'boom', match: { path: 'boom' }, engine: 'jsonata', messageTemplate: '$error("leak-" & word)' }] },
    }, `${dir}/c.yaml`, {});
    const running = await start(loaded, log);
    try {
      const r = await call(`${running.listener.url}/hooks/boom`, { token: TOKEN, json: { word: 'PAYLOAD-SECRET' } });
      expect(r.status).to.equal(500);
      const failed = lines.filter((l) => l.includes('request failed'));
      expect(failed.length, 'the failure is logged').to.be.greaterThan(0);
      expect(failed.join('\n')).to.not.include('PAYLOAD-SECRET');
    } finally {
      await running.stop();
    }
  });
});
