import { expect } from 'chai';
import { ConfigError, type ConfigProblem } from '../../../src/config/errors.js';
import { configFromObject } from '../../../src/config/load.js';
import { ensureToken } from '../../../src/config/token.js';
import { publicUrlProblems } from '../../../src/config/verify.js';
import { SENDERS } from '../../../src/senders/index.js';

function problemsFor(hooks: Record<string, unknown>): ConfigProblem[] {
  try {
    configFromObject({ hooks }, '/etc/hookrelay/hookrelay.yaml', {});
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}
const mapping = (extra: Record<string, unknown>) => ({ match: { path: 'github' }, action: 'wake', textTemplate: 't', ...extra });
const one = (extra: Record<string, unknown>) => problemsFor({ mappings: [mapping(extra)] });

describe('config: verify, auth and hooks.tokens', () => {
  it('accepts each scheme with secret or secrets, and defaults auth to token', () => {
    for (const verify of [
      { scheme: 'github', secret: 's' },
      { scheme: 'stripe', secrets: ['a', 'b'], toleranceSeconds: 60 },
      { scheme: 'slack', secret: 's' },
      { scheme: 'standard-webhooks', secret: `whsec_${Buffer.from('key').toString('base64')}` },
      { scheme: 'hmac', secret: 's', header: 'X-Sig', algorithm: 'sha1', encoding: 'base64', prefix: 'sha1=' },
    ]) {
      expect(one({ verify }), verify.scheme).to.deep.equal([]);
    }
    const loaded = configFromObject({ hooks: { mappings: [mapping({ verify: { scheme: 'github', secret: 's' } })] } }, '/x/h.yaml', {});
    expect(loaded.config.hooks.mappings[0].auth).to.equal('token');
  });

  it('needs match.path with verify, and says why', () => {
    const [p] = problemsFor({ mappings: [{ match: { source: 'gh' }, action: 'wake', textTemplate: 't', verify: { scheme: 'github', secret: 's' } }] });
    expect(p.path).to.equal('hooks.mappings[0].match.path');
    expect(p.message).to.match(/checked before the body is parsed/);
  });

  it('needs exactly one of secret and secrets, without quoting either', () => {
    expect(one({ verify: { scheme: 'github' } })).to.deep.include({ path: 'hooks.mappings[0].verify.secret', message: 'is required: the signing secret the sender shows (or secrets, a list of them, for rotation)' });
    const both = one({ verify: { scheme: 'github', secret: 'topsecret-1', secrets: ['topsecret-2'] } });
    expect(both.map((p) => p.path)).to.deep.equal(['hooks.mappings[0].verify.secrets']);
    expect(JSON.stringify(both)).to.not.include('topsecret');
    expect(one({ verify: { scheme: 'github', secrets: [] } }).map((p) => p.path)).to.deep.equal(['hooks.mappings[0].verify.secrets']);
  });

  it('refuses keys of another scheme, a missing hmac header, an unknown scheme and a bad whsec_ secret', () => {
    expect(one({ verify: { scheme: 'github', secret: 's', header: 'X' } }).map((p) => p.path)).to.deep.equal(['hooks.mappings[0].verify.header']);
    expect(one({ verify: { scheme: 'github', secret: 's', toleranceSeconds: 10 } }).map((p) => p.path)).to.deep.equal(['hooks.mappings[0].verify.toleranceSeconds']);
    expect(one({ verify: { scheme: 'hmac', secret: 's' } }).map((p) => p.path)).to.deep.equal(['hooks.mappings[0].verify.header']);
    expect(one({ verify: { scheme: 'gitlub', secret: 's' } }).map((p) => p.path)).to.include('hooks.mappings[0].verify.scheme');
    const bad = one({ verify: { scheme: 'standard-webhooks', secrets: [`whsec_${Buffer.from('k').toString('base64')}`, 'whsec_not base64!'] } });
    expect(bad.map((p) => p.path)).to.deep.equal(['hooks.mappings[0].verify.secrets[1]']);
    expect(bad[0].message).to.not.include('not base64');
  });

  it('takes the keys of the scheme\'s descriptor: its credential (secret, or username and password), and says which schemes take another', () => {
    expect(one({ verify: { scheme: 'postmark', username: 'u', password: 'p' } })).to.deep.equal([]);
    const missing = one({ verify: { scheme: 'postmark', secret: 's' } });
    expect(missing.map((p) => p.path)).to.have.members(['hooks.mappings[0].verify.secret', 'hooks.mappings[0].verify.username', 'hooks.mappings[0].verify.password']);
    expect(missing.find((p) => p.path.endsWith('.secret'))!.message).to.match(/^only applies to the schemes github, .*hmac \(postmark does not take it\): remove it$/);
    expect(missing.find((p) => p.path.endsWith('.password'))!.message).to.match(/^is required with scheme postmark/);
    const [tolerance] = one({ verify: { scheme: 'hmac', secret: 's', header: 'X', toleranceSeconds: 10 } });
    expect(tolerance.message).to.match(/^only applies to the schemes stripe, slack, (\S+, )*standard-webhooks \(hmac does not take it\): remove it$/);
    expect(tolerance.message).to.include('paddle').and.not.include('github');
    expect(one({ verify: { scheme: 'github', secret: 's', password: 'p' } })[0].message).to.equal('only applies to scheme postmark (github does not take it): remove it');
  });

  it('telegram: a secret Telegram would refuse as secret_token is refused at load, without quoting it', () => {
    expect(one({ verify: { scheme: 'telegram', secret: 'Abc_12-3' } })).to.deep.equal([]);
    const [p] = one({ verify: { scheme: 'telegram', secrets: ['ok_one', 'not ok!'] } });
    expect(p.path).to.equal('hooks.mappings[0].verify.secrets[1]');
    expect(p.message).to.match(/A-Z, a-z, 0-9, _ and -/).and.not.include('not ok!');
  });

  it('refuses auth: signature without verify', () => {
    expect(one({ auth: 'signature' }).map((p) => p.path)).to.deep.equal(['hooks.mappings[0].auth']);
  });

  it('hooks.tokens: refused together with hooks.token, empty, or past 8; the first-use token is left alone', () => {
    expect(problemsFor({ token: 'a', tokens: ['b'] }).map((p) => p.path)).to.deep.equal(['hooks.tokens']);
    expect(problemsFor({ tokens: [] }).map((p) => p.path)).to.deep.equal(['hooks.tokens']);
    expect(problemsFor({ tokens: ['a', ''] }).map((p) => p.path)).to.deep.equal(['hooks.tokens[1]']);
    expect(problemsFor({ tokens: Array.from({ length: 9 }, (_, i) => `t${i}`) }).map((p) => p.path)).to.deep.equal(['hooks.tokens']);
    const loaded = configFromObject({ server: { host: '0.0.0.0', adminToken: 'admin' }, hooks: { tokens: ['a', 'b'] } }, '/x/h.yaml', {});
    expect(ensureToken(loaded, { dryRun: true })).to.equal(loaded); // no token needed, none generated
    expect(() => ensureToken(configFromObject({ server: { host: '0.0.0.0' } }, '/x/h.yaml', {}), { dryRun: true })).to.throw(ConfigError);
  });

  it('hooks.tokens: a scoped entry is {token, name?, routes?}, each route naming wake, agent or a mapping; one problem per mistake', () => {
    const scoped = (entry: unknown) => problemsFor({ tokens: ['plain', entry], mappings: [mapping({ id: 'gh', match: { path: 'gh' } })] });
    expect(scoped({ token: 'b', name: 'ci-bot', routes: ['wake', 'agent', 'gh'] })).to.deep.equal([]);
    expect(scoped({ token: 'b' })).to.deep.equal([]);
    expect(scoped({ token: 'b', routes: ['github'] }).map((p) => p.path)).to.deep.equal(['hooks.tokens[1].routes[0]']);
    expect(scoped({ token: 'b', route: ['gh'] })).to.deep.equal([{ path: 'hooks.tokens[1].route', message: 'unknown key "route"; did you mean "routes"?' }]);
    expect(scoped({ name: 'x' }).map((p) => p.path)).to.deep.equal(['hooks.tokens[1].token']);
    expect(scoped({ token: 'b', routes: [] }).map((p) => p.path)).to.deep.equal(['hooks.tokens[1].routes']);
    expect(scoped(['b'])).to.deep.equal([{ path: 'hooks.tokens[1]', message: 'must be a string or a map of token, name, routes (got a list)' }]);
    expect(scoped({ token: 'plain', routes: ['wake'] }).map((p) => p.path)).to.deep.equal(['hooks.tokens[1]']);
  });

  it('server.adminToken: one spelling, and never a hooks token', () => {
    const problems = (server: object, hooks: object) => {
      try {
        configFromObject({ server, hooks }, '/x/h.yaml', {});
        return [];
      } catch (e) {
        return (e as ConfigError).problems;
      }
    };
    expect(problems({ adminToken: 'x', adminTokens: ['y'] }, {}).map((p) => p.path)).to.deep.equal(['server.adminTokens']);
    expect(problems({ adminToken: 'same' }, { token: 'same' }).map((p) => p.path)).to.deep.equal(['server.adminToken']);
    expect(problems({ adminTokens: ['a', 'same'] }, { tokens: ['b', { token: 'same', routes: ['wake'] }] }).map((p) => p.path)).to.deep.equal(['server.adminTokens[1]']);
    expect(JSON.stringify(problems({ adminToken: 'same' }, { token: 'same' }))).to.not.include('same"');
    expect(problems({ adminTokens: Array.from({ length: 9 }, (_, i) => `a${i}`) }, {}).map((p) => p.path)).to.deep.equal(['server.adminTokens']);
  });
});

describe('config: a scheme that signs the URL (publicUrlProblems)', () => {
  const signsUrl = new Map([['urly', { ...SENDERS[0]!, scheme: 'urly', signsUrl: true }]]);
  const urly = (verify: Record<string, unknown>) => ({ match: { path: 'u' }, verify: { scheme: 'urly', secret: 's', ...verify } });

  it('needs verify.url or server.publicUrl, and says what to give', () => {
    const [p] = publicUrlProblems([mapping({}), urly({})], undefined, signsUrl);
    expect(p!.path).to.equal('hooks.mappings[1].verify.url');
    expect(p!.message).to.match(/^is required with scheme urly unless server\.publicUrl is set: urly signs the URL it was sent to/);
    expect(publicUrlProblems([urly({ url: 'https://hooks.example.com/hooks/u' })], undefined, signsUrl)).to.deep.equal([]);
    expect(publicUrlProblems([urly({})], 'https://hooks.example.com', signsUrl)).to.deep.equal([]);
  });

  it('server.publicUrl is an http(s) URL', () => {
    expect(problemsFor({ mappings: [mapping({})] })).to.deep.equal([]);
    const bad = (() => {
      try {
        configFromObject({ server: { publicUrl: 'hooks.example.com' }, hooks: { mappings: [mapping({})] } }, '/etc/hookrelay/hookrelay.yaml', {});
        return [];
      } catch (e) {
        return (e as ConfigError).problems;
      }
    })();
    expect(bad.map((p) => p.path)).to.deep.equal(['server.publicUrl']);
  });
});
