import { expect } from 'chai';
import { ConfigError, type ConfigProblem } from '../../../src/config/errors.js';
import { configFromObject } from '../../../src/config/load.js';
import { call } from '../../support/gateway.js';
import { startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/** Per-mapping `maxBodyBytes` (CONTRACT.md §12; issue 32: GitHub sends pushes of up to 25 MB). */
const mappings = [
  { id: 'github', match: { path: 'github' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'push {{ref}}', maxBodyBytes: 200_000 },
  { id: 'tiny', match: { path: 'tiny' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'tiny {{ref}}', maxBodyBytes: 64 },
  { id: 'plain', match: { path: 'plain' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'plain {{ref}}' },
];
const body = (bytes: number) => {
  const head = JSON.stringify({ ref: 'main', pad: '' });
  return JSON.stringify({ ref: 'main', pad: 'x'.repeat(Math.max(0, bytes - head.length)) });
};

/** A body sent chunked (no Content-Length): the limit is kept while reading. */
async function chunked(url: string, text: string) {
  const bytes = new TextEncoder().encode(text);
  const stream = new ReadableStream({ start(c) { for (let i = 0; i < bytes.length; i += 8192) c.enqueue(bytes.slice(i, i + 8192)); c.close(); } });
  const r = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
  return { status: r.status, data: await r.json() as any };
}

describe('http: per-mapping maxBodyBytes', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { maxBodyBytes: 1024, mappings } }); });
  after(async () => { await gw.stop(); });

  it('lets a mapping path take bodies larger than hooks.maxBodyBytes, announced or chunked', async () => {
    const r = await call(`${gw.hooks}/github`, { token: TOKEN, raw: body(150_000), headers: { 'content-type': 'application/json' } });
    expect(r.status, r.text).to.equal(200);
    expect((await chunked(`${gw.hooks}/github`, body(150_000))).status).to.equal(200);
  });

  it('answers 413 past the mapping\'s own limit, naming it, announced or chunked', async () => {
    for (const r of [
      await call(`${gw.hooks}/github`, { token: TOKEN, raw: body(200_001), headers: { 'content-type': 'application/json' } }),
      await chunked(`${gw.hooks}/github`, body(200_001)),
    ]) {
      expect(r.status).to.equal(413);
      expect(r.data.error.code).to.equal('payload_too_large');
      expect(r.data.error.message).to.include('maxBodyBytes of mapping "github"').and.include('200000 bytes');
    }
  });

  it('may be smaller than hooks.maxBodyBytes', async () => {
    expect((await call(`${gw.hooks}/tiny`, { token: TOKEN, json: { ref: 'main' } })).status).to.equal(200);
    const r = await call(`${gw.hooks}/tiny`, { token: TOKEN, raw: body(500), headers: { 'content-type': 'application/json' } });
    expect([r.status, r.data.error.code]).to.deep.equal([413, 'payload_too_large']);
    expect(r.data.error.message).to.include('maxBodyBytes of mapping "tiny" (64 bytes)');
  });

  it('keeps hooks.maxBodyBytes on every other path, /wake and /agent included', async () => {
    for (const path of ['/plain', '/wake', '/agent', '/nothing']) {
      const r = await call(`${gw.hooks}${path}`, { token: TOKEN, raw: body(2000), headers: { 'content-type': 'application/json' } });
      expect([r.status, r.data.error.code], path).to.deep.equal([413, 'payload_too_large']);
      expect(r.data.error.message, path).to.include('hooks.maxBodyBytes (1024 bytes)');
      const streamed = await chunked(`${gw.hooks}${path}`, body(2000));
      expect([streamed.status, streamed.data.error.code], path).to.deep.equal([413, 'payload_too_large']);
    }
  });
});

describe('config: a mapping\'s maxBodyBytes', () => {
  function problemsFor(mapping: Record<string, unknown>): ConfigProblem[] {
    try {
      configFromObject({ hooks: { mappings: [{ action: 'wake', textTemplate: 't', ...mapping }] } }, '/etc/hookrelay/hookrelay.yaml', {});
    } catch (e) {
      if (e instanceof ConfigError) return e.problems;
      throw e;
    }
    return [];
  }

  it('must be a positive integer, naming its path', () => {
    for (const bad of [0, -1, 1.5, 'big']) {
      const problems = problemsFor({ match: { path: 'github' }, maxBodyBytes: bad });
      expect(problems.map((p) => p.path), String(bad)).to.include('hooks.mappings[0].maxBodyBytes');
    }
    expect(problemsFor({ match: { path: 'github' }, maxBodyBytes: 26_214_400 })).to.deep.equal([]);
  });

  it('needs match.path: the limit is decided from the path, before the body is read', () => {
    const [p] = problemsFor({ match: { source: 'gh' }, maxBodyBytes: 1_000_000 });
    expect(p!.path).to.equal('hooks.mappings[0].match.path');
    expect(p!.message).to.include('maxBodyBytes');
  });
});
