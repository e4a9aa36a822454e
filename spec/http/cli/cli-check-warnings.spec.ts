import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli, type CliResult } from '../../support/cli.js';
import { tmpDir } from '../../support/gateway.js';

/** `hookrelay check` on `config`, through the CLI's `main` in this process. */
function check(config: unknown): Promise<CliResult> {
  const file = path.join(tmpDir(), 'hookrelay.json');
  fs.writeFileSync(file, JSON.stringify(config));
  return runCli(['check', '--config', file]);
}

const wake = (extra: Record<string, unknown>) => ({ action: 'wake', textTemplate: 't', ...extra });

describe('cli: check warns (and still exits 0)', function () {
  this.timeout(60000);

  it('about unfenced mappings and signing senders without verify, naming the scheme to use', async () => {
    const r = await check({ hooks: { token: 't', mappings: [
      wake({ id: 'github-push', match: { path: 'gh' } }),
      wake({ id: 'payments', match: { path: 'stripe' } }),
      wake({ id: 'shop', match: { path: 'shopify_orders' } }),
      wake({ id: 'clerk-users', match: { path: 'users' } }),
      wake({ id: 'slack', match: { path: 'slack' }, verify: { scheme: 'slack', secret: 's' } }),
      wake({ id: 'raw', match: { path: 'raw' }, allowUnsafeExternalContent: true }),
      wake({ id: 'githubby', match: { path: 'stripes' } }),
    ] } });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^ok: /);
    const lines = r.stderr.trim().split('\n');
    expect(lines).to.have.length(5);
    expect(lines[0]).to.match(/^warning: hooks\.mappings\[0\] \("github-push"\): .*no verify: add verify: \{ scheme: github, /);
    expect(lines[1]).to.match(/^warning: hooks\.mappings\[1\] \("payments"\): .*scheme: stripe/);
    expect(lines[2]).to.match(/^warning: hooks\.mappings\[2\] \("shop"\): .*add verify: \{ scheme: shopify, secret: \$\{…\} \}$/);
    expect(lines[3]).to.match(/^warning: hooks\.mappings\[3\] \("clerk-users"\): .*add verify: \{ scheme: clerk, secret: \$\{…\} \}$/);
    expect(lines[4]).to.match(/^warning: hooks\.mappings\[5\] \("raw"\): allowUnsafeExternalContent: true /);
  });

  it('a misspelt verify.scheme: the error names every scheme and the closest one, and exits 1', async () => {
    const r = await check({ hooks: { token: 't', mappings: [wake({ match: { path: 'pay' }, verify: { scheme: 'stirpe', secret: 's' } })] } });
    expect(r.code).to.equal(1);
    const line = r.stderr.split('\n').find((l) => l.includes('verify.scheme'));
    expect(line, r.stderr).to.match(/hooks\.mappings\[0\]\.verify\.scheme: must be one of github, stripe, slack, meta, shopify, .*, hmac \(got "stirpe"\): did you mean "stripe"\?$/);
    for (const scheme of ['postmark', 'mailgun', 'standard-webhooks', 'replicate']) expect(line).to.include(scheme);
    const far = await check({ hooks: { token: 't', mappings: [wake({ match: { path: 'pay' }, verify: { scheme: 'zzzzzzzz', secret: 's' } })] } });
    expect(far.stderr).to.match(/verify\.scheme: must be one of github, .* \(got "zzzzzzzz"\)$/m).and.not.include('did you mean');
  });

  it('a postmark or meta hook without verify: the suggestion names the keys the scheme needs', async () => {
    const r = await check({ hooks: { token: 't', mappings: [wake({ id: 'postmark-bounces', match: { path: 'pm' } }), wake({ id: 'wa', match: { path: 'whatsapp' } })] } });
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).to.match(/add verify: \{ scheme: postmark, username: …, password: \$\{…\} \}$/);
    expect(lines[1]).to.match(/add verify: \{ scheme: meta, verifyToken: \$\{…\}, secret: \$\{…\} \}$/);
  });

  it('prints nothing for a config with neither', async () => {
    const r = await check({ hooks: { token: 't', mappings: [wake({ id: 'a', match: { path: 'alerts' } })] } });
    expect(r.code).to.equal(0);
    expect(r.stderr).to.equal('');
  });

  it('says where serve will answer: hooks, the console and /metrics, or that they are off', async () => {
    const on = await check({ server: { host: '127.0.0.1', port: 9911 }, hooks: { token: 't' } });
    expect(on.code, on.stderr).to.equal(0);
    expect(on.stdout.trim().split('\n')[1]).to.equal('serves: hooks at http://127.0.0.1:9911/hooks (sending: the hooks token; reading events and runs: the admin token), console at http://127.0.0.1:9911/console/, metrics at http://127.0.0.1:9911/metrics (behind the admin token)');
    const off = await check({ server: { console: false, metrics: false }, hooks: { token: 't', path: '/in' } });
    expect(off.stdout.trim().split('\n')[1]).to.equal('serves: hooks at http://127.0.0.1:8788/in (sending: the hooks token; reading events and runs: the admin token), console off (server.console: false), metrics off (server.metrics: false) (behind the admin token)');
    const noHooks = await check({ hooks: { enabled: false } });
    expect(noHooks.stdout.trim().split('\n')[1]).to.equal('serves: hooks disabled (hooks.enabled: false), console at http://127.0.0.1:8788/console/, metrics at http://127.0.0.1:8788/metrics (behind the admin token)');
  });
});
