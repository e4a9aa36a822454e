import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parseDocument } from 'yaml';
import { runCli, writeConfig } from '../../support/cli.js';
import { ROOT, tmpDir } from '../../support/gateway.js';

/**
 * The shipped presets' fixtures (presets/fixtures/<preset>/, the senders' own example payloads)
 * pass through the real `hookrelay test --fixtures` (CONTRACT.md §13): each is signed with the
 * preset's secret (`sign: true`) and asserts the action and the message it produces. Unsigned,
 * every request to a signing preset is refused like the live one.
 */
const FIXTURES = path.join(ROOT, 'presets/fixtures');
const SIGNING = ['github', 'stripe', 'sentry', 'linear', 'pagerduty'];
const BY_TOKEN = ['alertmanager', 'grafana'];

const dir = tmpDir();
const config = (presets: unknown[]) => writeConfig(fs.mkdtempSync(path.join(dir, 'cfg-')), { dataDir: path.join(dir, 'data'), hooks: { token: 'spec-token-0123456789', presets } });
const allPresets = config([...SIGNING.map((name) => ({ [name]: { secret: `${name}-secret` } })), ...BY_TOKEN]);

/** A copy of a preset's fixtures, each changed by `edit`. */
function copy(preset: string, edit: (doc: ReturnType<typeof parseDocument>) => void): string {
  const out = fs.mkdtempSync(path.join(dir, `${preset}-`));
  for (const file of fs.readdirSync(path.join(FIXTURES, preset)).filter((f) => f.endsWith('.yaml'))) {
    const doc = parseDocument(fs.readFileSync(path.join(FIXTURES, preset, file), 'utf8'));
    edit(doc);
    fs.writeFileSync(path.join(out, file), doc.toString());
  }
  return out;
}

const count = (preset: string) => fs.readdirSync(path.join(FIXTURES, preset)).filter((f) => f.endsWith('.yaml')).length;

describe('cli: the presets\' fixtures (hookrelay test --fixtures presets/fixtures/<preset>)', function () {
  this.timeout(60_000);

  for (const preset of [...SIGNING, ...BY_TOKEN]) {
    it(`${preset}: every fixture passes, each asserting its action and message`, async () => {
      const n = count(preset);
      expect(n, preset).to.be.greaterThan(2);
      // As shipped: a Linear fixture's webhookTimestamp is set when it is signed, as Linear sets it.
      const r = await runCli(['test', '--fixtures', path.join(FIXTURES, preset), '--config', allPresets]);
      expect(r.stdout, r.stderr).to.include(`\n${n} passed, 0 failed\n`);
      expect(r.code).to.equal(0);
    });
  }

  it('every fixture of a signing preset is signed, and unsigned each is refused 401 invalid_signature', async () => {
    for (const preset of SIGNING) {
      const unsigned = copy(preset, (doc) => {
        expect(doc.get('sign'), `${preset}: ${String(doc.get('name'))}`).to.equal(true);
        doc.delete('sign');
      });
      const r = await runCli(['test', '--fixtures', unsigned, '--config', allPresets]);
      const lines = r.stdout.trim().split('\n');
      expect(lines.at(-1), preset).to.equal(`0 passed, ${count(preset)} failed`);
      for (const line of lines.slice(0, -1)) expect(line, preset).to.match(/ got 401 \(invalid_signature: POST \/hooks\/\w+ needs a valid signature/);
    }
  });

  it('an expectation that differs from what the preset produces fails, naming the field', async () => {
    const wrong = copy('github', (doc) => {
      if (doc.hasIn(['expect', 'action', 'message'])) doc.setIn(['expect', 'action', 'message'], 'not what GitHub sent');
    });
    const r = await runCli(['test', '--fixtures', wrong, '--config', allPresets]);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.match(/✗ github issues opened → an agent run for the issue — expected action\.message "not what GitHub sent", got "GitHub issue Codertocat\/Hello-World#1 opened by Codertocat/);
  });

  it('hookrelay check refuses a signing preset enabled without its secret, naming the entry and how to write it', async () => {
    const r = await runCli(['check', '--config', config(['alertmanager', 'stripe'])]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include('hooks.presets[1]: the stripe preset checks the sender\'s stripe signature and needs its signing secret').and.include('write the entry as {stripe: {secret: "${STRIPE_WEBHOOK_SECRET}"}}');
  });

  it('grafana with a secret: Grafana\'s HMAC signature stands in for the token, and an unsigned notification is refused', async () => {
    const signedConfig = config([{ grafana: { secret: 'grafana-secret' } }]);
    const signed = await runCli(['test', '--fixtures', copy('grafana', (doc) => doc.set('sign', true)), '--config', signedConfig]);
    expect(signed.stdout, signed.stderr).to.include(`\n${count('grafana')} passed, 0 failed\n`);
    const unsigned = await runCli(['test', '--fixtures', path.join(FIXTURES, 'grafana'), '--config', signedConfig]);
    expect(unsigned.stdout).to.include(`0 passed, ${count('grafana')} failed`).and.include('invalid_signature');
  });
});
