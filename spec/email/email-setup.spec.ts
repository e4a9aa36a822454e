import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { runCli } from '../support/cli.js';
import { tmpDir } from '../support/gateway.js';

/** `hookrelay email setup` on a real config file, through the CLI's `main` (CONTRACT.md §2, §7). */
describe('email setup', function () {
  this.timeout(30000);

  const ORIGINAL = `# My gateway. Keep this comment.
server:
  port: 8799 # not the default

hooks:
  token: \${HOOKRELAY_TOKEN:-dev-token}
  # presets I use
  presets: [github-like]
  mappings: []

agent:
  model: llama3.2
`;
  const GMAIL = ['--imap-host', 'imap.gmail.com', '--imap-port', '993', '--tls', 'implicit', '--user', 'me@gmail.com', '--password-env', 'GMAIL_APP_PASSWORD'];

  async function hookrelay(args: string[], env: Record<string, string> = {}) {
    const r = await runCli(args, env);
    return { code: r.code, out: r.stdout, err: r.stderr };
  }
  function configFile(text = ORIGINAL.replace('[github-like]', '[]')): string {
    const file = path.join(tmpDir(), 'hookrelay.yaml');
    fs.writeFileSync(file, text);
    return file;
  }

  it('writes hooks.email and adds email to hooks.presets, keeping comments and key order; the result passes check', async () => {
    const file = configFile(ORIGINAL.replace('[github-like]', '[]'));
    const r = await hookrelay(['email', 'setup', ...GMAIL, '--config', file]);
    expect(r.code, r.err).to.equal(0);
    const text = fs.readFileSync(file, 'utf8');
    for (const kept of ['# My gateway. Keep this comment.', 'port: 8799 # not the default', '# presets I use', 'token: ${HOOKRELAY_TOKEN:-dev-token}']) expect(text).to.include(kept);
    const cfg = parse(text);
    expect(Object.keys(cfg)).to.deep.equal(['server', 'hooks', 'agent']);
    expect(Object.keys(cfg.hooks).slice(0, 3)).to.deep.equal(['token', 'presets', 'mappings']);
    expect(cfg.hooks.presets).to.deep.equal(['email']);
    expect(cfg.hooks.email).to.deep.equal({
      imap: { host: 'imap.gmail.com', port: 993, tls: 'implicit', user: 'me@gmail.com', passwordEnv: 'GMAIL_APP_PASSWORD' },
      mailbox: 'INBOX',
    });
    const check = await hookrelay(['check', '--config', file]);
    expect(check.code, check.err).to.equal(0);
    expect(check.out).to.match(/ok: .* is valid \(2 mappings: email, gmail\)/);
  });

  it('a second run with the same options changes nothing, byte for byte; email is added to presets once', async () => {
    const file = configFile(ORIGINAL);
    expect((await hookrelay(['email', 'setup', ...GMAIL, '--config', file])).code).to.equal(0);
    const first = fs.readFileSync(file);
    const again = await hookrelay(['email', 'setup', ...GMAIL, '--config', file]);
    expect(again.code).to.equal(0);
    expect(again.out).to.match(/nothing changed/);
    expect(fs.readFileSync(file).equals(first)).to.equal(true);
    expect(parse(first.toString()).hooks.presets).to.deep.equal(['github-like', 'email']);
  });

  it('never writes the password, only where it is; switching to --password-file drops passwordEnv', async () => {
    const file = configFile();
    expect((await hookrelay(['email', 'setup', ...GMAIL, '--config', file], { GMAIL_APP_PASSWORD: 'app-secret-1234' })).code).to.equal(0);
    expect(fs.readFileSync(file, 'utf8')).not.to.include('app-secret-1234');
    const r = await hookrelay(['email', 'setup', '--imap-host', 'imap.gmail.com', '--user', 'me@gmail.com', '--password-file', 'imap-password.txt', '--config', file]);
    expect(r.code, r.err).to.equal(0);
    const imap = parse(fs.readFileSync(file, 'utf8')).hooks.email.imap;
    expect(imap).to.deep.equal({ host: 'imap.gmail.com', port: 993, tls: 'implicit', user: 'me@gmail.com', passwordFile: 'imap-password.txt' });
  });

  const refused: [string, string[], RegExp][] = [
    ['a host with a scheme', ['--imap-host', 'imaps://imap.gmail.com', '--user', 'u', '--password-env', 'P'], /--imap-host: must be a host name without a scheme: write imap\.gmail\.com/],
    ['a host with a port', ['--imap-host', 'imap.gmail.com:993', '--user', 'u', '--password-env', 'P'], /--imap-host: must be a host name or an IP address, without a port/],
    ['a port out of range', ['--imap-host', 'h', '--imap-port', '70000', '--user', 'u', '--password-env', 'P'], /--imap-port: must be a port number from 1 to 65535/],
    ['an unknown tls mode', ['--imap-host', 'h', '--tls', 'ssl', '--user', 'u', '--password-env', 'P'], /--tls: must be one of implicit, starttls, none/],
    ['both password options', ['--imap-host', 'h', '--user', 'u', '--password-env', 'P', '--password-file', 'f'], /--password-env: give exactly one of/],
    ['neither password option', ['--imap-host', 'h', '--user', 'u'], /--password-env: give exactly one of/],
    ['a password where the variable name goes', ['--imap-host', 'h', '--user', 'u', '--password-env', 'hunter2 !'], /--password-env: must be the name of an environment variable/],
    ['a hook URL that is not http(s)', ['--imap-host', 'h', '--user', 'u', '--password-env', 'P', '--hook-url', 'ftp://x/y'], /--hook-url: must be an http:\/\/ or https:\/\/ URL/],
  ];
  for (const [what, args, message] of refused) {
    it(`refuses ${what} with a reason, and leaves the file alone`, async () => {
      const file = configFile();
      const before = fs.readFileSync(file);
      const r = await hookrelay(['email', 'setup', ...args, '--config', file]);
      expect(r.code).to.equal(1);
      expect(r.err).to.match(message);
      expect(r.err).not.to.include('hunter2');
      expect(fs.readFileSync(file).equals(before)).to.equal(true);
    });
  }

  it('--help explains every option, with a Gmail example', async () => {
    const r = await hookrelay(['email', 'setup', '--help']);
    expect(r.code).to.equal(0);
    for (const option of ['--imap-host', '--imap-port', '--tls', '--user', '--password-env', '--password-file', '--mailbox', '--hook-url', '--config']) expect(r.out).to.include(option);
    expect(r.out).to.include('imap.gmail.com').and.include('App passwords').and.include('--tls implicit');
  });

  it('check names the YAML path when hooks.email has both password options', async () => {
    const file = configFile(`${ORIGINAL.replace('[github-like]', '[email]')}`.replace('  mappings: []', '  mappings: []\n  email:\n    imap: { host: h, user: u, passwordEnv: P, passwordFile: f }'));
    const r = await hookrelay(['check', '--config', file]);
    expect(r.code).to.equal(1);
    expect(r.err).to.match(/^hooks\.email\.imap\.passwordEnv: give passwordEnv .* or passwordFile .*, exactly one$/m);
  });
});
