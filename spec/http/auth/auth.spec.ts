import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

/** Asserts the process still serves: a right request right after a bad one is accepted. */
async function stillServing(gw: InProcess) {
  const r = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: 'still here', mode: 'next-heartbeat' } });
  expect(r.status, r.text).to.equal(200);
}

describe('http: authentication, 405 and the failure budget', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess(); });
  after(async () => { await gw.stop(); });

  for (const [what, headers, query] of [
    ['Authorization: Bearer', { authorization: `Bearer ${TOKEN}` }, ''],
    ['x-hookrelay-token', { 'x-hookrelay-token': TOKEN }, ''],
    ['x-openclaw-token', { 'x-openclaw-token': TOKEN }, ''],
    ['?token=', {}, `?token=${TOKEN}`],
  ] as const) {
    it(`accepts the token as ${what}`, async () => {
      const r = await call(`${gw.hooks}/wake${query}`, { headers, json: { text: 'hi', mode: 'next-heartbeat' } });
      expect(r.status, r.text).to.equal(200);
      expect(r.data.ok).to.equal(true);
    });
  }

  for (const [what, init] of [
    ['no token', {}],
    ['a wrong bearer token', { headers: { authorization: 'Bearer nope' } }],
    ['a token one character short', { headers: { 'x-hookrelay-token': TOKEN.slice(0, -1) } }],
    ['a wrong query token', { query: '?token=nope' }],
    ['an empty Bearer', { headers: { authorization: 'Bearer ' } }],
  ] as const) {
    it(`answers 401 unauthorized to ${what}, with the contract's error body`, async () => {
      const r = await call(`${gw.hooks}/wake${(init as any).query ?? ''}`, { headers: (init as any).headers, json: { text: 'x' } });
      expect(r.status).to.equal(401);
      expect(r.data).to.deep.include({ ok: false });
      expect(r.data.error.code).to.equal('unauthorized');
      expect(r.text).to.not.include(TOKEN);
      await stillServing(gw);
    });
  }

  it('checks the token before reading the body: a 401 to a bad token with an invalid body', async () => {
    const r = await call(`${gw.hooks}/wake`, { token: 'nope', raw: '{not json' });
    expect(r.status).to.equal(401);
  });

  for (const [method, sub, allow] of [
    ['GET', '/wake', 'POST'], ['PUT', '/agent', 'POST'], ['POST', '/events', 'GET, HEAD'],
    ['DELETE', '/runs/abc', 'GET, HEAD'], ['GET', '/github', 'POST'],
  ] as const) {
    it(`answers 405 with Allow: ${allow} to ${method} ${sub}, before the token check`, async () => {
      const r = await call(`${gw.hooks}${sub}`, { method, token: null });
      expect(r.status).to.equal(405);
      expect(r.headers.get('allow')).to.equal(allow);
      expect(r.data.error.code).to.equal('method_not_allowed');
    });
  }

  it('answers 404 no_mapping for unmapped hook names', async () => {
    const r = await call(`${gw.hooks}/nothing-maps-this`, { token: TOKEN, json: {} });
    expect(r.status).to.equal(404);
    expect(r.data.error.code).to.equal('no_mapping');
  });

  it('answers 404 not_found for unknown paths and unknown runs', async () => {
    expect((await call(`${gw.base}/nope`)).data.error.code).to.equal('not_found');
    const run = await call(`${gw.hooks}/runs/no-such-run`, { token: ADMIN_TOKEN });
    expect(run.status).to.equal(404);
    expect(run.data.error.code).to.equal('not_found');
  });

  it('healthz needs no token', async () => {
    const r = await call(`${gw.base}/healthz`);
    expect(r.status).to.equal(200);
    expect(r.data).to.deep.equal({ ok: true });
  });
});

describe('http: the failure budget (429)', () => {
  let gw: InProcess;
  beforeEach(async () => { gw = await startInProcess(); });
  afterEach(async () => { await gw.stop(); });

  it('answers 429 rate_limited with Retry-After from the 21st failure; a right token is never blocked and resets the count', async () => {
    for (let i = 1; i <= 20; i++) {
      expect((await call(`${gw.hooks}/wake`, { token: 'bad', json: {} })).status, `attempt ${i}`).to.equal(401);
    }
    const limited = await call(`${gw.hooks}/wake`, { token: 'bad', json: {} });
    expect(limited.status).to.equal(429);
    expect(limited.data.error.code).to.equal('rate_limited');
    const retry = Number(limited.headers.get('retry-after'));
    expect(retry).to.be.within(1, 60);
    // The right token goes through while the address is blocked, and resets its count.
    await stillServing(gw);
    expect((await call(`${gw.hooks}/wake`, { token: 'bad', json: {} })).status).to.equal(401);
  });

  it('does not count 405s against the budget', async () => {
    for (let i = 0; i < 30; i++) expect((await call(`${gw.hooks}/wake`, { method: 'GET', token: 'bad' })).status).to.equal(405);
    expect((await call(`${gw.hooks}/wake`, { token: 'bad', json: {} })).status).to.equal(401);
  });
});

describe('http: allowQueryToken false', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { allowQueryToken: false } }); });
  after(async () => { await gw.stop(); });

  it('refuses a query token with 401, and still takes the header', async () => {
    const r = await call(`${gw.hooks}/wake?token=${TOKEN}`, { json: { text: 'x' } });
    expect(r.status).to.equal(401);
    await stillServing(gw);
  });
});

describe('http: hooks.tokens (rotation)', () => {
  let gw: InProcess;
  before(async () => { gw = await startInProcess({ hooks: { token: undefined, tokens: ['old-token-0123456789', 'new-token-9876543210'] } }); });
  after(async () => { await gw.stop(); });

  it('accepts any one of the tokens, in any of its places, and nothing else', async () => {
    for (const token of ['old-token-0123456789', 'new-token-9876543210']) {
      expect((await call(`${gw.hooks}/wake`, { token, json: { text: 'x', mode: 'next-heartbeat' } })).status, token).to.equal(200);
      expect((await call(`${gw.hooks}/wake?token=${token}`, { json: { text: 'x', mode: 'next-heartbeat' } })).status, token).to.equal(200);
      expect((await call(`${gw.hooks}/wake`, { headers: { 'x-openclaw-token': token }, json: { text: 'x', mode: 'next-heartbeat' } })).status, token).to.equal(200);
    }
    for (const token of [TOKEN, 'old-token-012345678', 'new-token-9876543210x']) {
      expect((await call(`${gw.hooks}/wake`, { token, json: { text: 'x' } })).status, token).to.equal(401);
    }
  });
});

describe('http: the 401 names every place the token may go', () => {
  it('Authorization: Bearer, x-hookrelay-token, x-openclaw-token, and ?token= only when allowQueryToken', async () => {
    for (const allowQueryToken of [true, false]) {
      const gw = await startInProcess({ hooks: { allowQueryToken } });
      try {
        const { data } = await call(`${gw.hooks}/wake`, { json: { text: 'x' } });
        expect(data.error.code).to.equal('unauthorized');
        for (const place of ['Authorization: Bearer <token>', 'x-hookrelay-token: <token>', 'x-openclaw-token: <token>']) expect(data.error.message).to.include(place);
        if (allowQueryToken) expect(data.error.message).to.include('?token=<token>');
        else expect(data.error.message).to.not.include('?token=');
      } finally {
        await gw.stop();
      }
    }
  });
});
