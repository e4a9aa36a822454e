import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { call, tmpDir } from '../../support/gateway.js';
import { runCli } from '../../support/cli.js';
import { startInProcess, TOKEN } from '../../support/in-process.js';

const run = (args: string[]) => runCli(args);

describe('cli: hookrelay test (the mapping author\'s dry run)', function () {
  this.timeout(60000);
  const dir = tmpDir();
  const fixtures = fs.mkdtempSync(path.join(dir, 't-'));
  fs.writeFileSync(path.join(fixtures, 'throws.mjs'), 'export default function () { throw new RangeError("limit 3 passed in helper"); }\n');
  const config = {
    dataDir: path.join(dir, 'data'),
    hooks: {
      token: 't',
      transformsDir: fixtures,
      mappings: [
        { id: 'contact', match: { path: 'contact' }, action: 'agent', messageTemplate: 'from {{name}}: {{message}}', name: 'Contact', sessionKey: 'hook:c:{{name}}', deliver: true, provider: 'telegram', to: '42', thinking: 'low' },
        { id: 'note', match: { path: 'note' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'note {{n}}' },
        { id: 'each', match: { path: 'each' }, action: 'wake', forEach: 'items', textTemplate: 'item {{index}}' },
        { id: 'bad', match: { path: 'bad' }, action: 'agent', messageTemplate: 'x', transform: { module: 'throws.mjs' } },
        { id: 'verify', match: { path: 'feed', method: 'GET' }, action: 'respond', respond: { contentType: 'text/plain', body: '{{challenge}}' } },
        { id: 'number', match: { path: 'number' }, action: 'wake', engine: 'jsonata', textTemplate: '"n=" & $number(n)' },
        { id: 'vip', match: { path: 'vip' }, action: 'wake', textTemplate: 'hi {{#each items}}{{#each ../items}}.{{/each}}{{/each}}' },
      ],
      presets: ['email'],
    },
    providers: { telegram: { botToken: 'b' } },
  };
  const file = path.join(dir, 'hookrelay.json');
  fs.writeFileSync(file, JSON.stringify(config));
  const write = (name: string, text: string) => { const p = path.join(dir, name); fs.writeFileSync(p, text); return p; };

  it('prints a wake as the body of POST /wake and an agent action as the body of POST /agent', async () => {
    const wake = await run(['test', 'note', '--payload', write('n.json', '{"n":1}'), '--config', file]);
    expect(wake.code, wake.stderr).to.equal(0);
    expect(JSON.parse(wake.stdout)).to.deep.equal({ mapping: 'note', status: 200, action: 'wake', text: 'note 1', mode: 'next-heartbeat' });
    const agent = await run(['test', 'contact', '--payload', write('c.json', '{"name":"ada","message":"hi"}'), '--config', file]);
    expect(agent.code, agent.stderr).to.equal(0);
    expect(JSON.parse(agent.stdout)).to.deep.equal({
      mapping: 'contact', status: 202, action: 'agent', message: 'from ada: hi', name: 'Contact', sessionKey: 'hook:c:ada',
      wakeMode: 'now', deliver: true, provider: 'telegram', to: '42', thinking: 'low',
    });
    const each = await run(['test', 'each', '--payload', write('e.json', '{"items":[{},{}]}'), '--config', file]);
    expect(JSON.parse(each.stdout)).to.deep.equal({ mapping: 'each', status: 200, actions: [
      { action: 'wake', text: 'item 0', mode: 'now' }, { action: 'wake', text: 'item 1', mode: 'now' },
    ] });
  });

  it('--method GET: the payload is the query; a respond mapping prints its answer with its status', async () => {
    const r = await run(['test', 'feed', '--method', 'GET', '--query', 'challenge=c-7', '--config', file]);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal({ mapping: 'verify', status: 200, response: { status: 200, contentType: 'text/plain', body: 'c-7' } });
    const post = await run(['test', 'feed', '--payload', write('f.json', '{}'), '--config', file]);
    expect(post.code).to.equal(1);
    expect(post.stderr).to.include('POST is not allowed on /hooks/feed; its mappings take GET');
  });

  it('reads the payload file as the listener reads the same bytes: form data with --header content-type=…', async () => {
    const form = write('form.txt', 'name=ada%20l&message=a+b');
    const asForm = await run(['test', 'contact', '--payload', form, '--config', file, '--header', 'Content-Type=application/x-www-form-urlencoded']);
    expect(asForm.code, asForm.stderr).to.equal(0);
    expect(JSON.parse(asForm.stdout).message).to.equal('from ada l: a b');
    // curl -d @c.json sends that type too: a JSON object's text is still JSON.
    const json = write('cj.json', '{"name":"bo","message":"yo"}');
    const curlLike = await run(['test', 'contact', '--payload', json, '--config', file, '--header', 'content-type=application/x-www-form-urlencoded']);
    expect(JSON.parse(curlLike.stdout).message).to.equal('from bo: yo');
    // Without the header, the form file is not JSON: the listener's own answer.
    const notJson = await run(['test', 'contact', '--payload', form, '--config', file]);
    expect(notJson.code).to.equal(1);
    expect(notJson.stderr).to.include('invalid_json: the body is not valid JSON');
    const gw = await startInProcess({ hooks: { mappings: [config.hooks.mappings[0]] }, providers: config.providers });
    try {
      const r = await call(`${gw.hooks}/contact`, { token: TOKEN, raw: fs.readFileSync(form, 'utf8') });
      expect(r.data.error.code).to.equal('invalid_json');
    } finally {
      await gw.stop();
    }
  });

  it('a failing transform: the cause and its stack on stderr, exit 1', async () => {
    const r = await run(['test', 'bad', '--payload', write('b.json', '{}'), '--config', file]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include('RangeError: limit 3 passed in helper');
    expect(r.stderr).to.match(/at .*throws\.mjs/);
    expect(r.stderr).to.include('transform_failed: mapping "bad": transform failed');
  });

  it('a failing JSONata template: its cause as code and message, never [object Object]', async () => {
    const r = await run(['test', 'number', '--payload', write('n.json', '{"n": "not a number"}'), '--config', file]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.not.include('[object Object]');
    // The author's own payload: the value as JSONata quotes it, and where in the expression.
    expect(r.stderr).to.match(/^cause: D3030: Unable to cast value to a number: "not a number" \(position 15\)$/m);
    expect(r.stderr).to.match(/^hookrelay: transform_failed: mapping "number": textTemplate failed$/m);
  });

  it('a Handlebars error at run time (its render budget): its message with the line and column of the block', async () => {
    // 150 × 150 iterations of the inner block: the budget trips there, on its steps or on its clock.
    const r = await run(['test', 'vip', '--payload', write('v.json', JSON.stringify({ items: Array.from({ length: 150 }, (_, i) => i) })), '--config', file]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.not.include('[object Object]');
    expect(r.stderr).to.match(/^cause: render_budget: the template (would take more than 20000 steps|render took more than 100 ms)[^\n]* \(line 1, column 19\)$/m);
    expect(r.stderr).to.not.match(/^\s+at /m);
    expect(r.stderr).to.match(/^hookrelay: transform_failed: mapping "vip": textTemplate failed$/m);
  });
});
