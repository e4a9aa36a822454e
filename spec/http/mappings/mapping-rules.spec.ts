import { expect } from 'chai';
import { call } from '../../support/gateway.js';
import { startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

describe('http: mapping rules over the real listener (match.headers, schema, forEach, the e-mail preset)', () => {
  let gw: InProcess;
  before(async () => {
    gw = await startInProcess({
      hooks: {
        presets: ['email'],
        mappings: [
          { id: 'push', match: { path: 'github', headers: { 'X-GitHub-Event': 'push' } }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'push {{ref}}' },
          { id: 'typed', match: { path: 'typed' }, schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'n={{n}}' },
          { id: 'each', match: { path: 'each' }, forEach: 'items', action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'i {{index}}' },
        ],
      },
    });
  });
  after(async () => { await gw.stop(); });

  it('match.headers: the request header, in any case, with the exact value', async () => {
    const ok = await call(`${gw.hooks}/github`, { token: TOKEN, json: { ref: 'main' }, headers: { 'x-github-event': 'push' } });
    expect(ok.status, ok.text).to.equal(200);
    const other = await call(`${gw.hooks}/github`, { token: TOKEN, json: { ref: 'main' }, headers: { 'X-GitHub-Event': 'issues' } });
    expect(other.status).to.equal(404);
    expect(other.data.error.code).to.equal('no_mapping');
  });

  it('schema: a failing payload is 400 invalid_payload naming the path, never the value', async () => {
    const r = await call(`${gw.hooks}/typed`, { token: TOKEN, json: { n: 'secret-token-like-value' } });
    expect(r.status).to.equal(400);
    expect(r.data.error).to.deep.equal({ code: 'invalid_payload', message: 'payload/n: must be integer' });
    expect(r.text).to.not.include('secret-token-like-value');
    expect((await call(`${gw.hooks}/typed`, { token: TOKEN, json: { n: 3 } })).status).to.equal(200);
  });

  it('forEach over a value that is not a list is 400 invalid_payload, not a silent 204', async () => {
    const r = await call(`${gw.hooks}/each`, { token: TOKEN, json: { items: 'x' } });
    expect(r.status).to.equal(400);
    expect(r.data.error.code).to.equal('invalid_payload');
    expect((await call(`${gw.hooks}/each`, { token: TOKEN, json: {} })).status).to.equal(204);
  });

  it('the e-mail preset refuses {"messages":[{}]} (no run with an empty sender) and {"messages":"x"}', async () => {
    const empty = await call(`${gw.hooks}/email`, { token: TOKEN, json: { messages: [{}] } });
    expect(empty.status).to.equal(400);
    expect(empty.data.error).to.deep.equal({ code: 'invalid_payload', message: "payload/messages/0/from: must have required property 'from'" });
    const notList = await call(`${gw.hooks}/email`, { token: TOKEN, json: { messages: 'x' } });
    expect(notList.status).to.equal(400);
  });
});

describe('http: a failing template says where its cause is', () => {
  it('500 transform_failed points to the gateway log and the console, with no payload text and no stack', async () => {
    const gw = await startInProcess({ hooks: { mappings: [{ id: 'boom', match: { path: 'boom' }, engine: 'jsonata', messageTemplate: '$error("secret-" & word)' }] } });
    try {
      const r = await call(`${gw.hooks}/boom`, { token: TOKEN, json: { word: 'payload-text' } });
      expect(r.status).to.equal(500);
      expect(r.data.error).to.deep.equal({ code: 'transform_failed', message: 'a mapping template or transform module failed; the gateway log (at warn) and the console\'s request page name the mapping, the cause and where in the template' });
      expect(r.text).to.not.match(/payload-text|secret-|\bat \S+ \(|\.[mc]?[jt]s:\d+/);
    } finally {
      await gw.stop();
    }
  });
});
