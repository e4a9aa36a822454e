import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { BIN, ROOT, call, freePort, startGateway, tmpDir } from '../../support/gateway.js';

/** Runs the CLI's `main` in this process with the environment minus `unset`. */
const run = (args: string[], unset: string[]) => runCli(args, Object.fromEntries(unset.map((name) => [name, undefined])));

/** Runs the bin with the environment minus `unset`. */
function bin(args: string[], unset: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env };
  for (const name of unset) delete env[name];
  return new Promise((resolve) => {
    execFile(BIN, [...args], { cwd: ROOT, env, timeout: 30000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('cli: unset ${VAR}s — the store readers need only dataDir and store; each problem once', function () {
  this.timeout(60000);
  const VARS = ['SPEC_GITHUB_SECRET', 'SPEC_MODEL_KEY'];

  it('events, runs and store copy work without the variables they do not read; check and serve name each once', async () => {
    const dir = tmpDir();
    const port = await freePort();
    const config = {
      server: { port },
      dataDir: './data',
      hooks: {
        token: 'unset-token',
        mappings: [{ id: 'gh', match: { path: 'github' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'push', verify: { scheme: 'github', secret: '${SPEC_GITHUB_SECRET}' } }],
      },
      agent: { baseUrl: 'http://127.0.0.1:9/v1', apiKey: '${SPEC_MODEL_KEY}' },
    };
    const gw = await startGateway(config, { dir, env: { SPEC_GITHUB_SECRET: 'gh-secret', SPEC_MODEL_KEY: 'model-key' } });
    try {
      const w = await call(`${gw.hooks}/wake`, { token: 'unset-token', json: { text: 'hello', mode: 'next-heartbeat' } });
      expect(w.status).to.equal(200);
    } finally {
      await gw.stop();
    }
    const target = path.join(dir, 'copy.json');
    writeFileSync(target, JSON.stringify({ dataDir: './copy', hooks: { token: '${SPEC_MODEL_KEY}' } }));

    const [events, runs, check, serve] = await Promise.all([
      bin(['events', '--config', gw.configFile], VARS),
      run(['runs', '--config', gw.configFile], VARS),
      run(['check', '--config', gw.configFile], VARS),
      bin(['serve', '--config', gw.configFile], VARS),
    ]);
    expect(events.code, events.stderr).to.equal(0);
    expect(events.stdout).to.include('hello');
    expect(runs.code, runs.stderr).to.equal(0);
    for (const r of [check, serve]) {
      expect(r.code).to.equal(1);
      expect(r.stderr.trim().split('\n')).to.deep.equal([
        'hooks.mappings[0].verify.secret: ${SPEC_GITHUB_SECRET} is not set: set SPEC_GITHUB_SECRET, or write ${SPEC_GITHUB_SECRET:-} (empty) or ${SPEC_GITHUB_SECRET:-default}',
        'agent.apiKey: ${SPEC_MODEL_KEY} is not set: set SPEC_MODEL_KEY, or write ${SPEC_MODEL_KEY:-} (empty) or ${SPEC_MODEL_KEY:-default}',
      ]);
    }
    // store copy reads only the two stores, too (the target's unread hooks.token is unset).
    const copy = await run(['store', 'copy', '--from', gw.configFile, '--to', target], VARS);
    expect(copy.code, copy.stderr).to.equal(0);
    expect(copy.stdout).to.match(/copied: .*1 events/);
  });
});
