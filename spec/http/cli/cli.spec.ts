import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli, writeConfig } from '../../support/cli.js';
import { tmpDir } from '../../support/gateway.js';

/** The commands through the CLI's `main` in this process (spec/process/cli/cli.spec.ts: each family once through the bin). */
const run = (args: string[]) => runCli(args);

describe('cli', function () {
  this.timeout(60000);

  it('check: refuses a non-loopback host without a token', async () => {
    const file = writeConfig(tmpDir(), { server: { host: '0.0.0.0' } });
    const r = await run(['check', '--config', file]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/^hooks\.token: /m);
  });

  /** A config with one mapping (github) and a payload for it, in a new folder. */
  function githubMapping() {
    const dir = tmpDir();
    const file = writeConfig(dir, { dataDir: path.join(dir, 'data'), hooks: { token: 't', mappings: [
      { id: 'gh', match: { path: 'github' }, action: 'agent', messageTemplate: 'Push to {{repository.full_name}} by {{headers.x-github-event}}', sessionKey: 'hook:gh:{{repository.id}}' },
    ] } });
    const payload = writeConfig(dir, { repository: { full_name: 'acme/api', id: 7 } }, 'p.json');
    return { dir, file, payload };
  }

  it('test: prints the action and dispatches nothing', async () => {
    const { dir, file, payload } = githubMapping();
    const r = await run(['test', 'github', '--payload', payload, '--config', file, '--header', 'X-GitHub-Event=push']);
    expect(r.code, r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout);
    expect(out.mapping).to.equal('gh');
    expect(out).to.include({ action: 'agent', sessionKey: 'hook:gh:7' });
    expect(out.message).to.match(/^Push to acme\/api by/);
    expect(fs.existsSync(path.join(dir, 'data')), 'a dry run opens no store').to.equal(false);
  });

  it('test: as over HTTP, the token never reaches a template: not as a header, not as ?token', async () => {
    const { dir, payload } = githubMapping();
    const secret = writeConfig(dir, { dataDir: path.join(dir, 'data'), hooks: { token: 't', mappings: [
      { id: 's', match: { path: 's' }, action: 'wake', textTemplate: 'auth=[{{headers.authorization}}] cookie=[{{headers.cookie}}] q=[{{query.token}}] x=[{{query.x}}] ev=[{{headers.x-github-event}}]' },
    ] } }, 'secret.json');
    const s = await run(['test', 's', '--payload', payload, '--config', secret, '-H', 'Authorization=Bearer t', '-H', 'Cookie=c=1', '-H', 'X-GitHub-Event=push', '-q', 'token=t', '-q', 'x=1']);
    expect(s.code, s.stderr).to.equal(0);
    expect(JSON.parse(s.stdout).text).to.equal('auth=[] cookie=[] q=[] x=[1] ev=[push]');
  });

  it('test: exit 1 when nothing matches', async () => {
    const { file, payload } = githubMapping();
    const none = await run(['test', 'gitlab', '--payload', payload, '--config', file]);
    expect(none.code).to.equal(1);
    expect(none.stderr).to.include('no mapping matches');
  });

  it('test: NAME is routed like a request path: a spelling of github reaches it, built-ins and names outside the hooks path are said to be what they are', async () => {
    const { file, payload } = githubMapping();
    expect((await run(['test', '/x/../github//', '--payload', payload, '--config', file])).code).to.equal(0);
    const builtIn = await run(['test', 'wake', '--payload', payload, '--config', file]);
    expect(builtIn.code).to.equal(1);
    expect(builtIn.stderr).to.include('wake is a built-in endpoint (/hooks/wake)');
    const outside = await run(['test', '../healthz', '--payload', payload, '--config', file]);
    expect(outside.code).to.equal(1);
    expect(outside.stderr).to.include('"../healthz" is not a hook name');
  });
});
