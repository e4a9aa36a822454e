import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { runCli } from '../../support/cli.js';
import { BIN, ROOT, call, freePort, startGateway, tmpDir, until, type Gateway } from '../../support/gateway.js';

/** Runs the CLI's `main` in this process with the environment minus `unset`. */
const run = (args: string[], unset: string[] = []) => runCli(args, Object.fromEntries(unset.map((name) => [name, undefined])));

/** Runs the bin with the environment minus `unset`. */
function bin(args: string[], unset: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env };
  for (const name of unset) delete env[name];
  return new Promise((resolve) => {
    execFile(BIN, [...args], { cwd: ROOT, env, timeout: 60000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const TOKEN = 'user-input-token';
const GH_SECRET = 'user-input-github-secret';
const VARS = { SPEC_UI_TOKEN: TOKEN, SPEC_UI_MODEL_KEY: 'model-key', SPEC_UI_BOT: 'bot-token', SPEC_UI_GH: GH_SECRET };

/**
 * What the commands say to a user who typed something wrong, or whose environment lacks a
 * variable the command never reads (CONTRACT.md §2, §3, §13, §14): the real bin, a real store.
 */
describe('cli: what each command needs, and what it says about bad input', function () {
  this.timeout(60_000);
  const dir = tmpDir();
  let gw: Gateway;
  let seq: number;

  before(async () => {
    Object.assign(process.env, VARS); // the bin's environment (run() takes process.env)
    gw = await startGateway({
      server: { port: await freePort() },
      dataDir: path.join(dir, 'data'),
      hooks: {
        token: '${SPEC_UI_TOKEN}',
        keepBodies: 7,
        mappings: [
          { id: 'note', match: { path: 'note' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'note {{n}}' },
          { id: 'gh', match: { path: 'github' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'gh', verify: { scheme: 'github', secret: '${SPEC_UI_GH:-unused}' } },
        ],
      },
      agent: { baseUrl: 'http://127.0.0.1:9/v1', apiKey: '${SPEC_UI_MODEL_KEY}' },
      providers: { telegram: { botToken: '${SPEC_UI_BOT}' } },
    }, { dir });
    const note = await call(`${gw.hooks}/note`, { token: TOKEN, json: { n: 7 } });
    expect(note.status).to.equal(200);
    const rows = await until(() => 'the note in `hookrelay requests --json`', async () => {
      const r = await run(['requests', '--json', '--config', gw.configFile]);
      const listed = r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
      return listed.length === 1 ? listed : undefined;
    }, 30_000);
    seq = rows[0].seq;
  });
  after(async () => {
    for (const name of Object.keys(VARS)) delete process.env[name];
    await gw?.stop();
  });

  it('requests, fixture, pause and resume need no ${VAR} they do not read (the hooks token, the model key, a provider token)', async () => {
    const unset = ['SPEC_UI_TOKEN', 'SPEC_UI_MODEL_KEY', 'SPEC_UI_BOT'];
    const requests = await bin(['requests', '--config', gw.configFile], unset);
    expect(requests.code, requests.stderr).to.equal(0);
    expect(requests.stdout).to.match(new RegExp(`^#${seq} .* POST +mapping:note +200`, 'm'));
    const fixture = await run(['fixture', String(seq), '--config', gw.configFile], unset);
    expect(fixture.code, fixture.stderr).to.equal(0);
    expect(JSON.parse(fixture.stdout).expect).to.deep.include({ status: 200 });
    const pause = await run(['pause', 'note', '--config', gw.configFile], unset);
    expect(pause.code, pause.stderr).to.equal(0);
    const resume = await run(['resume', 'note', '--config', gw.configFile], unset);
    expect(resume.code, resume.stderr).to.equal(0);
    expect(resume.stdout).to.equal('mapping note resumed: what it held is carried out, in order\n');
  });

  it('a ${VAR} the command reads is still required, named with its YAML path: fixture runs the mappings', async () => {
    const file = path.join(dir, 'needs-secret.json');
    const config = JSON.parse(fs.readFileSync(gw.configFile, 'utf8'));
    config.hooks.mappings[1].verify.secret = '${SPEC_UI_GH}';
    fs.writeFileSync(file, JSON.stringify(config));
    const r = await run(['fixture', String(seq), '--config', file], ['SPEC_UI_GH', 'SPEC_UI_TOKEN']);
    expect(r.code).to.equal(1);
    expect(r.stderr.trim().split('\n')).to.deep.equal(['hooks.mappings[1].verify.secret: ${SPEC_UI_GH} is not set: set SPEC_UI_GH, or write ${SPEC_UI_GH:-} (empty) or ${SPEC_UI_GH:-default}']);
  });

  it('resume of a mapping that is not paused says it was not paused (exit 0); pause twice says it already is', async () => {
    const resume = await run(['resume', 'note', '--config', gw.configFile]);
    expect(resume.code).to.equal(0);
    expect(resume.stdout).to.equal('mapping note was not paused: nothing to resume\n');
    expect((await run(['pause', 'note', '--config', gw.configFile])).code).to.equal(0);
    const again = await run(['pause', 'note', '--config', gw.configFile]);
    expect(again.stdout).to.equal('mapping note was already paused\n');
    expect((await run(['resume', 'note', '--config', gw.configFile])).code).to.equal(0);
  });

  it('a bad option or argument value names the option and what it expects', async () => {
    const cases: [string[], string][] = [
      [['events', '--after', 'abc'], "error: option '--after <seq>' argument 'abc' is invalid. expected a whole number, 0 or more"],
      [['events', '--limit', '0'], "error: option '--limit <n>' argument '0' is invalid. expected a whole number from 1 to"],
      [['runs', '--limit', 'ten'], "error: option '--limit <n>' argument 'ten' is invalid. expected a whole number from 1 to"],
      [['requests', '--limit', '-1'], "error: option '--limit <n>' argument '-1' is invalid. expected a whole number from 1 to"],
      [['fixture', 'x1'], "error: command-argument value 'x1' is invalid for argument 'seq'. expected a whole number, 0 or more"],
    ];
    const results = await Promise.all(cases.map(([args]) => run([...args, '--config', gw.configFile])));
    results.forEach((r, i) => {
      expect(r.code, cases[i]![0].join(' ')).to.equal(1);
      expect(r.stderr, cases[i]![0].join(' ')).to.include(cases[i]![1]);
    });
  });

  it('fixture --out x.yaml writes YAML (x.json: JSON), and test --fixtures reads either back', async () => {
    const folder = path.join(dir, 'fixtures');
    fs.mkdirSync(folder);
    const yamlFile = path.join(folder, 'note.yaml');
    const jsonFile = path.join(folder, 'note-json.json');
    expect((await run(['fixture', String(seq), '--out', yamlFile, '--config', gw.configFile])).code).to.equal(0);
    expect((await run(['fixture', String(seq), '--out', jsonFile, '--config', gw.configFile])).code).to.equal(0);
    const yamlText = fs.readFileSync(yamlFile, 'utf8');
    expect(yamlText).to.match(/^name: /).and.include('\nexpect:\n');
    expect(parseYaml(yamlText)).to.deep.equal(JSON.parse(fs.readFileSync(jsonFile, 'utf8')));
    const t = await run(['test', '--fixtures', folder, '--config', gw.configFile]);
    expect(t.stdout).to.equal(`✓ request #${seq} to /hooks/note\n✓ request #${seq} to /hooks/note\n2 passed, 0 failed\n`);
    expect(t.code).to.equal(0);
  });
});

describe('cli: a URL setting without http:// or https://', function () {
  this.timeout(60000);

  it('check and serve refuse it with its YAML path and what to write instead', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'hookrelay.json');
    fs.writeFileSync(file, JSON.stringify({
      hooks: { token: 't' },
      agent: { baseUrl: 'localhost:11434' },
      providers: { signal: { number: '+15550100', apiBase: '127.0.0.1:8080' }, slack: { botToken: 'x', apiBase: 'ftp://slack.example' } },
    }));
    const [check, serve] = await Promise.all([run(['check', '--config', file]), bin(['serve', '--config', file, '--port', '0'])]);
    for (const r of [check, serve]) {
      expect(r.code).to.equal(1);
      expect(r.stderr.trim().split('\n')).to.deep.equal([
        'agent.baseUrl: must be an http:// or https:// URL: did you mean http://localhost:11434?',
        'providers.signal.apiBase: must be an http:// or https:// URL: did you mean http://127.0.0.1:8080?',
        'providers.slack.apiBase: must be an http:// or https:// URL',
      ]);
    }
    // A value from a ${VAR} is not echoed: the variable may hold a credential.
    const fromEnv = path.join(dir, 'from-env.json');
    fs.writeFileSync(fromEnv, JSON.stringify({ hooks: { token: 't' }, agent: { baseUrl: '${SPEC_UI_BASE_URL}' } }));
    process.env.SPEC_UI_BASE_URL = 'secret-host.example:9/v1?key=abc';
    const e = await run(['check', '--config', fromEnv]).finally(() => delete process.env.SPEC_UI_BASE_URL);
    expect(e.code).to.equal(1);
    expect(e.stderr.trim()).to.equal('agent.baseUrl: must be an http:// or https:// URL');
    const forward = path.join(dir, 'forward.json');
    fs.writeFileSync(forward, JSON.stringify({ hooks: { token: 't' }, runtime: { kind: 'forward', forward: { url: '127.0.0.1:18789/hooks', token: 'up' } } }));
    const f = await run(['check', '--config', forward]);
    expect(f.code).to.equal(1);
    expect(f.stderr.trim()).to.equal('runtime.forward.url: must be an http:// or https:// URL: did you mean http://127.0.0.1:18789/hooks?');
  });
});
