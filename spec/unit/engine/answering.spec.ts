import { expect } from 'chai';
import { ConfigError } from '../../../src/config/errors.js';
import { dryRun, DryRunProblem, type DryRunRequest } from '../../../src/dry-run.js';
import type { Engine } from '../../../src/engine/engine.js';
import { engineWith, map, NOW, request } from './engine-harness.js';
import type { MappingInput } from './make-config.js';

/** `match.method`, `match.when`, `action: respond` and `response` in the engine, the loader and the dry run (CONTRACT.md §12). */
describe('engine: answering senders', () => {
  /** Every problem (loader and compile) of a config with these mappings, as `path: message`. */
  async function problems(mappings: MappingInput[]): Promise<string[]> {
    const err = await Promise.resolve().then(() => engineWith(mappings)).then(() => undefined, (e: unknown) => e);
    expect(err, 'a config error').to.be.instanceOf(ConfigError);
    return (err as ConfigError).problems.map((p) => `${p.path}: ${p.message}`);
  }
  const first = async (m: MappingInput) => (await problems([m]))[0];

  describe('config errors name their path', () => {
    it('match.when that does not compile', async () => {
      expect(await first({ match: { path: 'a', when: 'payload.level = ' }, action: 'wake', textTemplate: 'x' })).to.match(/^hooks\.mappings\[0\]\.match\.when: JSONata syntax error/);
    });
    it('match.method other than GET or POST', async () => {
      expect(await first({ match: { path: 'a', method: 'PUT' as 'GET' }, action: 'wake', textTemplate: 'x' })).to.match(/^hooks\.mappings\[0\]\.match\.method: /);
    });
    it('action: respond without respond, and with action keys', async () => {
      const found = await problems([{ match: { path: 'a' }, action: 'respond', textTemplate: 'x', forEach: 'items' }]);
      expect(found).to.include.members([
        'hooks.mappings[0].respond: action: respond needs respond: what to answer, e.g. {status: 204} to acknowledge and ignore, or {status: 200, body: "…"}',
        'hooks.mappings[0].forEach: an action: respond mapping acts on nothing and takes no forEach; remove it, or use action: wake or agent',
        'hooks.mappings[0].textTemplate: an action: respond mapping acts on nothing and takes no textTemplate; remove it, or use action: wake or agent',
      ]);
    });
    it('respond on a wake mapping', async () => {
      expect(await first({ match: { path: 'a' }, action: 'wake', textTemplate: 'x', respond: { status: 200, contentType: 'text/plain' } })).to.match(/^hooks\.mappings\[0\]\.respond: is for action: respond/);
    });
    it('a status out of range, and a body with 204 or 304', async () => {
      expect(await first({ match: { path: 'a' }, action: 'respond', respond: { status: 101, contentType: 'text/plain' } })).to.match(/^hooks\.mappings\[0\]\.respond\.status: /);
      expect(await first({ match: { path: 'a' }, action: 'respond', respond: { status: 204, contentType: 'text/plain', body: 'x' } })).to.equal('hooks.mappings[0].respond.body: status 204 answers no body: remove body, or choose another status');
      expect(await first({ match: { path: 'a' }, action: 'respond', respond: { status: 304, contentType: 'text/plain', body: 'x' } })).to.match(/^hooks\.mappings\[0\]\.respond\.body: status 304/);
      expect(await first({ match: { path: 'a' }, action: 'wake', textTemplate: 'x', response: { status: 404 } })).to.match(/^hooks\.mappings\[0\]\.response\.status: /);
      expect(await first({ match: { path: 'a' }, action: 'wake', textTemplate: 'x', response: { status: 204, body: 'x' } })).to.match(/^hooks\.mappings\[0\]\.response\.body: status 204/);
    });
    it('headers: hop-by-hop, content-type, set-cookie, a bad name, a value with a line break', async () => {
      const respond = (headers: Record<string, string>) => ({ match: { path: 'a' }, action: 'respond' as const, respond: { status: 200, contentType: 'text/plain', headers } });
      expect(await first(respond({ Connection: 'close' }))).to.match(/^hooks\.mappings\[0\]\.respond\.headers\.Connection: connection is a hop-by-hop header/);
      expect(await first(respond({ 'transfer-encoding': 'chunked' }))).to.match(/hop-by-hop/);
      expect(await first(respond({ 'content-type': 'text/html' }))).to.match(/is set with contentType/);
      expect(await first(respond({ 'set-cookie': 'a=b' }))).to.match(/sets no cookies/);
      expect(await first(respond({ 'bad name': 'x' }))).to.match(/is not a header name/);
      expect(await first(respond({ 'x-a': 'one\r\nx-b: two' }))).to.match(/must be one line of text/);
    });
    it('a respond body that does not compile, in the mapping\'s engine', async () => {
      expect(await first({ match: { path: 'a' }, action: 'respond', respond: { status: 200, contentType: 'text/plain', body: '{{#if}}' } })).to.match(/^hooks\.mappings\[0\]\.respond\.body: /);
      expect(await first({ match: { path: 'a' }, action: 'wake', textTemplate: '"x"', engine: 'jsonata', response: { body: '{"a": }' } })).to.match(/^hooks\.mappings\[0\]\.response\.body: JSONata syntax error/);
    });
  });

  describe('JSON body templates in Handlebars', () => {
    it('{"pong": {{hook_id}} } renders JSON; braces run into a mustache are a config error that says how to write it', async () => {
      const engine = await engineWith([{ match: { path: 'a' }, action: 'respond', respond: { status: 200, contentType: 'application/json', body: '{"pong": {{hook_id}} }' } }]);
      try {
        const result = await map(engine, request('a', { hook_id: 42 }));
        expect(result.type === 'respond' && JSON.parse(result.answer.body!)).to.deep.equal({ pong: 42 });
      } finally {
        await engine.close();
      }
      expect(await first({ match: { path: 'a' }, action: 'respond', respond: { status: 200, contentType: 'application/json', body: '{"pong":{{hook_id}}}' } }))
        .to.match(/^hooks\.mappings\[0\]\.respond\.body: .*triple-stash: in a JSON template put a space between a mustache and a brace of the JSON, e\.g\. \{"pong": \{\{hook_id\}\} \}\)$/);
    });
  });

  describe('matching', () => {
    let engine: Engine;
    before(async () => {
      engine = await engineWith([
        { id: 'get', match: { path: 'p', method: 'GET' }, action: 'respond', respond: { status: 200, contentType: 'text/plain', body: '{{[hub.challenge]}}' } },
        { id: 'big', match: { path: 'p', when: 'payload.n > 10' }, action: 'wake', textTemplate: 'big {{n}}' },
        { id: 'slow', match: { path: 'p', when: '($f := function($x){ $x > 0 ? $f($x - 1) : 0 }; $f(100000))' }, action: 'wake', textTemplate: 'never' },
        { id: 'header', match: { path: 'p', when: 'headers."x-kind" = "a" and query.q = "1"' }, action: 'wake', textTemplate: 'kind a' },
        { id: 'rest', match: { path: 'p' }, action: 'respond', respond: { status: 204, contentType: 'application/json' } },
      ]);
    });
    after(() => engine.close());

    it('takes each mapping\'s method; the Allow of a NAME lists its mappings\' methods', async () => {
      const get = await map(engine, request('p', {}, { method: 'GET', query: { 'hub.challenge': 'c1' } }));
      expect(get).to.deep.equal({ type: 'respond', mappingId: 'get', answer: { status: 200, contentType: 'text/plain', body: 'c1' } });
      expect(engine.methods('p')).to.include({ allow: 'GET, POST', GET: true, POST: true });
      expect(engine.methods('other')).to.include({ allow: 'POST', GET: false, POST: true });
    });

    /** The decision on POST /hooks/p; `routes`: the mappings a scoped token reaches. */
    const decide = (payload: Record<string, unknown>, o: { headers?: Record<string, string>; query?: string; routes?: string[] } = {}) => engine.decide({
      route: 'mapped', name: 'p', method: 'POST', path: '/hooks/p', query: o.query ?? '', headers: o.headers ?? {},
      body: Buffer.from(JSON.stringify(payload)), payload: () => payload, who: o.routes ? { routes: new Set(o.routes) } : {}, now: NOW,
    });

    it('when: truthy matches; false and a throw go on to the next mapping, the throw reported', async () => {
      expect((await decide({ n: 11 })).mappingId).to.equal('big');
      const outcome = await decide({ n: 'ten' });
      expect(outcome.mappingId).to.equal('rest');
      expect(outcome.failures!.map((f) => f.mappingId)).to.deep.equal(['big', 'slow']);
      expect(outcome.failures![0]!.code).to.equal('T2009');
      expect((await decide({ n: 1 }, { headers: { 'x-kind': 'a' }, query: 'q=1' })).mappingId).to.equal('header');
    });

    it('a when that would run long is cut by the step budget, with its code', async () => {
      const outcome = await decide({ n: 'ten' });
      expect(outcome.failures![1]).to.include({ mappingId: 'slow', code: 'too_many_steps' });
    });

    it('admission first (CONTRACT.md §12): a when runs only for a mapping the request is admitted to', async () => {
      // Admitted only to `rest`: no when is evaluated (none fails on "ten"), and `rest` matches.
      expect(await decide({ n: 'ten' }, { routes: ['rest'] })).to.deep.equal({ type: 'respond', mappingId: 'rest', status: 204, own: { status: 204, contentType: 'application/json' } });
      // Admitted to none: the when-less `rest` it would match is reported, nothing evaluated.
      expect(await decide({ n: 11 }, { routes: [] })).to.include({ type: 'refused', mappingId: 'rest' }).and.not.have.property('failures');
      // Admitted to `big` only: its when is false, the others are skipped unevaluated, `rest` refused.
      expect(await decide({ n: 1 }, { routes: ['big'] })).to.include({ type: 'refused', mappingId: 'rest' }).and.not.have.property('failures');
      expect((await decide({ n: 11 }, { routes: ['big'] })).mappingId).to.equal('big');
    });
  });

  describe('the dry run shows the status and the mapping\'s own answer', () => {
    let engine: Engine;
    before(async () => {
      engine = await engineWith([
        { id: 'verify', match: { path: 'v', method: 'GET' }, action: 'respond', respond: { status: 200, contentType: 'text/plain', body: '{{challenge}}', headers: { 'cache-control': 'no-store' } } },
        { id: 'ignore', match: { path: 'v' }, action: 'respond', respond: { status: 204, contentType: 'application/json' } },
        { id: 'ask', match: { path: 'ask' }, action: 'agent', messageTemplate: 'm', sessionKey: 'hook:x', response: { status: 200, body: '{"run": "{{runId}}", "s": "{{sessionKey}}"}' } },
        { id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: 'n' },
      ]);
    });
    after(() => engine.close());
    const run = (req: Partial<DryRunRequest>) => dryRun(engine, '/hooks', { name: 'v', body: Buffer.from('{}'), headers: {}, query: '', now: NOW, ...req });

    it('a GET respond: its status, content type, body and headers', async () => {
      expect(await run({ method: 'GET', query: 'challenge=xyz&token=t' })).to.deep.equal({
        mapping: 'verify', status: 200, response: { status: 200, contentType: 'text/plain', body: 'xyz', headers: { 'cache-control': 'no-store' } },
      });
    });
    it('a 204 respond: no body', async () => {
      expect(await run({})).to.deep.equal({ mapping: 'ignore', status: 204, response: { status: 204 } });
    });
    it('a response: rendered with stand-in ids and the real session key', async () => {
      const out = await run({ name: 'ask' });
      expect(out).to.include({ mapping: 'ask', status: 200, action: 'agent', sessionKey: 'hook:x' });
      expect(out.response).to.deep.equal({ status: 200, contentType: 'application/json', body: '{"run": "<runId>", "s": "hook:x"}' });
    });
    it('the usual status of an action', async () => {
      expect(await run({ name: 'note' })).to.include({ mapping: 'note', status: 200, action: 'wake' });
    });
    it('a method no mapping of the NAME takes: 405 method_not_allowed', async () => {
      const err = await run({ name: 'note', method: 'GET' }).then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(DryRunProblem);
      expect(err).to.include({ status: 405, code: 'method_not_allowed', stage: 'method' });
    });
  });
});
