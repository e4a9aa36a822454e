import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../support/cli.js';
import { tmpDir } from '../support/gateway.js';

/**
 * `email setup` writes hooks.presets and hooks.email only: every other line stays byte for byte
 * as the user wrote it (`[a, b]` not re-spaced, a long template not folded, comments and
 * indentation as they were).
 */
describe('email setup leaves every line it does not need alone', function () {
  this.timeout(30000);

  const LONG = `Push to {{payload.repository.full_name}} by {{payload.pusher.name}}: {{#each payload.commits}}{{this.message}} ({{this.id}}), {{/each}} — summarise what changed and whether anything looks risky`;
  const HEAD = `# hookrelay config
server: { host: 127.0.0.1, port: 8788, trustedProxies: [10.0.0.1, 10.0.0.2] }   # loopback, two spaces before this comment
log: { level: info }
session: { provider: telegram, to: '1' }
dataDir: ./data

hooks:
  token: \${HOOKS_TOKEN:-dev-token}
`;
  const REST = `  mappings:
    - id: gh
      match: { path: github, headers: {x-github-event: push} }
      action: agent
      messageTemplate: "${LONG}"
      name: 'GitHub'
    - id: block
      match: {path: blk}
      action: wake
      textTemplate: |
        line one
          indented
        line three

  # a comment at the end of hooks
agent:
    baseUrl: http://127.0.0.1:11434/v1   # four-space indent here
    model: llama3.2
store: { retainDays: 7 }
providers:
  telegram: { botToken: "\${TG_TOKEN:-x}" }
`;
  const EMAIL = `  email:
    imap:
      host: imap.example.com
      port: 993
      tls: implicit
      user: me
      passwordEnv: MAIL_PASSWORD
    mailbox: INBOX
`;
  const SETUP = ['email', 'setup', '--imap-host', 'imap.example.com', '--user', 'me', '--password-env', 'MAIL_PASSWORD'];

  async function setup(text: string): Promise<string> {
    const file = path.join(tmpDir(), 'hookrelay.yaml');
    fs.writeFileSync(file, text);
    const r = await runCli([...SETUP, '--config', file]);
    expect(r.code, r.stderr).to.equal(0);
    const check = await runCli(['check', '--config', file]);
    expect(check.code, check.stderr).to.equal(0);
    return fs.readFileSync(file, 'utf8');
  }

  it('a flow list of presets: [] becomes [email], a list that has it stays [a, b] as written; hooks.email is added; nothing else changes', async () => {
    const after = await setup(`${HEAD}  presets: []\n${REST}`);
    expect(after).to.include(`\n${EMAIL}`);
    expect(after.replace(EMAIL, '')).to.equal(`${HEAD}  presets: [email]\n${REST}`);
    // A list of several, spaced as the user spaced it: [a, b] stays [a, b], the new name joins it.
    const two = await setup(`${HEAD}  presets: [email, email]\n${REST}`);
    expect(two.replace(EMAIL, '')).to.equal(`${HEAD}  presets: [email, email]\n${REST}`);
  });

  it('a block list of presets and an hooks.email already there: only those two keys are written anew', async () => {
    const before = `${HEAD}  presets:\n    - email\n  email:\n    imap:\n      host: old.example.com\n    mailbox: Archive   # was\n${REST}`;
    const after = await setup(before);
    expect(after).to.equal(`${HEAD}  presets:\n    - email\n${EMAIL.replace('mailbox: INBOX', 'mailbox: INBOX # was')}${REST}`);
  });
});
