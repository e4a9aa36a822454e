import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ConfigError } from '../../../src/config/errors.js';
import { configFromObject } from '../../../src/config/load.js';
import { ensureToken, isLoopback } from '../../../src/config/token.js';

/** A loaded config whose dataDir is a fresh (not yet created) directory. */
function loaded(server: object = {}, hooks: object = {}) {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'hookrelay-token-')), 'data');
  return configFromObject({ server, dataDir, hooks }, '/x/hookrelay.yaml', {});
}

describe('config/token', () => {
  it('isLoopback: 127.0.0.0/8, ::1 in any spelling, localhost; nothing else', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST']) {
      expect(isLoopback(h), h).to.equal(true);
    }
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '::ffff:10.0.0.1', 'example.com', 'localhost.example.com', '']) {
      expect(isLoopback(h), h).to.equal(false);
    }
  });

  it('generates a token into {dataDir}/token (mkdir -p, mode 0600) on a loopback host', () => {
    const before = loaded();
    const after = ensureToken(before);
    const file = join(before.config.dataDir, 'token');
    expect(after.generatedTokenFile).to.equal(file);
    expect(after.config.hooks.token).to.match(/^[A-Za-z0-9_-]{43}$/); // 32 bytes, base64url
    expect(readFileSync(file, 'utf8').trim()).to.equal(after.config.hooks.token);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).to.equal(0o600);
    expect(Object.isFrozen(after.config.hooks)).to.equal(true);
    expect(before.config.hooks.token).to.equal(''); // the input is left as it was
  });

  it('reuses the stored token on the next load', () => {
    const first = ensureToken(loaded());
    const again = configFromObject({ dataDir: first.config.dataDir }, '/x/hookrelay.yaml', {});
    const second = ensureToken(again);
    expect(second.config.hooks.token).to.equal(first.config.hooks.token);
    expect(second.generatedTokenFile).to.equal(first.generatedTokenFile);
  });

  it('reads a token the user put in the file (trimmed)', () => {
    const l = loaded();
    ensureToken(l);
    writeFileSync(join(l.config.dataDir, 'token'), '  my-own-token\n');
    expect(ensureToken(l).config.hooks.token).to.equal('my-own-token');
  });

  it('refuses a non-loopback host without a token, at hooks.token, naming HOOKRELAY_TOKEN', () => {
    const l = loaded({ host: '0.0.0.0' });
    let error: unknown;
    try {
      ensureToken(l);
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const [p] = (error as ConfigError).problems;
    expect(p!.path).to.equal('hooks.token');
    expect(p.message).to.include('HOOKRELAY_TOKEN');
    expect(existsSync(l.config.dataDir)).to.equal(false);
  });

  it('leaves configured tokens, or disabled hooks, alone', () => {
    const withToken = loaded({ host: '0.0.0.0', adminToken: 'configured-admin' }, { token: 'configured' });
    expect(ensureToken(withToken)).to.equal(withToken);
    const disabled = loaded({ host: '0.0.0.0', adminToken: 'configured-admin' }, { enabled: false });
    expect(ensureToken(disabled)).to.equal(disabled);
    const rotating = loaded({ host: '0.0.0.0', adminTokens: ['a1', 'a2'] }, { token: 'configured' });
    expect(ensureToken(rotating)).to.equal(rotating);
  });

  it('generates the admin token into {dataDir}/admin-token (mode 0600) on a loopback host, and reuses it', () => {
    const before = loaded({}, { token: 'configured' });
    const after = ensureToken(before);
    const file = join(before.config.dataDir, 'admin-token');
    expect(after.generatedAdminTokenFile).to.equal(file);
    expect(after.generatedTokenFile).to.equal(undefined);
    expect(after.config.server.adminToken).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(file, 'utf8').trim()).to.equal(after.config.server.adminToken);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).to.equal(0o600);
    const again = ensureToken(configFromObject({ dataDir: before.config.dataDir, hooks: { token: 'configured' } }, '/x/hookrelay.yaml', {}));
    expect(again.config.server.adminToken).to.equal(after.config.server.adminToken);
    // Both files at once, one token each.
    const both = ensureToken(loaded());
    expect(both.config.hooks.token).to.not.equal(both.config.server.adminToken);
    expect(both.generatedTokenFile).to.match(/token$/);
    expect(both.generatedAdminTokenFile).to.match(/admin-token$/);
  });

  it('refuses a non-loopback host without an admin token, at server.adminToken, naming HOOKRELAY_ADMIN_TOKEN', () => {
    const l = loaded({ host: '0.0.0.0' }, { token: 'configured' });
    expect(() => ensureToken(l, { dryRun: true })).to.throw(ConfigError);
    try {
      ensureToken(l);
      expect.fail('started');
    } catch (e) {
      const problems = (e as ConfigError).problems;
      expect(problems.map((p) => p.path)).to.deep.equal(['server.adminToken']);
      expect(problems[0]!.message).to.include('HOOKRELAY_ADMIN_TOKEN');
    }
    expect(existsSync(l.config.dataDir)).to.equal(false);
  });

  it('dry run (check): refuses the same way but writes nothing', () => {
    const l = loaded();
    expect(ensureToken(l, { dryRun: true })).to.equal(l);
    expect(existsSync(l.config.dataDir)).to.equal(false);
    expect(() => ensureToken(loaded({ host: '0.0.0.0' }), { dryRun: true })).to.throw(ConfigError);
  });

  it('never puts the token in a log line', () => {
    const lines: unknown[] = [];
    const log = { info: (o: object, m: string) => lines.push([o, m]), warn: (o: object, m: string) => lines.push([o, m]) };
    const after = ensureToken(loaded(), { log });
    expect(lines).to.have.lengthOf(2); // the hooks token and the admin token, generated
    expect(JSON.stringify(lines)).not.to.include(after.config.hooks.token);
    expect(JSON.stringify(lines)).not.to.include(after.config.server.adminToken);
  });
});
