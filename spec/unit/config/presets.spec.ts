import { expect } from 'chai';
import { ConfigError } from '../../../src/config/errors.js';
import { configFromObject } from '../../../src/config/load.js';
import { knownPresets, loadPresets, type MappingValidator } from '../../../src/config/presets.js';
import type { MappingConfig } from '../../../src/config/types.js';

const load = (hooks: object) => configFromObject({ hooks }, '/srv/hr/hookrelay.yaml', {}).config.hooks.mappings;
const byPath = (ms: readonly MappingConfig[]) => ms.map((m) => `${m.id}@${m.match.path}`);

describe('config/presets', () => {
  it('knows the shipped presets and their aliases', () => {
    expect(knownPresets()).to.deep.equal(['alertmanager', 'email', 'github', 'gmail', 'grafana', 'linear', 'pagerduty', 'sentry', 'stripe']);
  });

  describe('email (CONTRACT.md §7)', () => {
    it('adds one agent mapping per message for POST {path}/email, as the contract words it', () => {
      const [email] = load({ presets: ['email'] });
      expect(email).to.deep.include({
        id: 'email', match: { path: 'email' }, forEach: 'messages', action: 'agent', name: '"Email"',
        sessionKey: 'threadId ? "hook:email:" & threadId : id ? "hook:email:" & id : "hook:" & $uuid()', engine: 'jsonata', wakeMode: 'now', provider: 'last',
      });
      // What the message says is in spec/cases/presets (rendered, not as template text).
      expect(email.idempotencyKey).to.equal('uid ? "email:uid:" & uid : id ? "email:id:" & id : ""');
      expect(email.deliver).to.equal(undefined);
      expect(email.match.source).to.equal(undefined); // a payload without source:"email" still matches
    });

    it('serves the same mapping at gmail, whichever of the two names is enabled', () => {
      for (const presets of [['email'], ['gmail'], ['gmail', 'email']]) {
        const ms = load({ presets });
        expect(byPath(ms), presets.join()).to.deep.equal(['email@email', 'gmail@gmail']);
        const { id: _a, match: _b, ...email } = ms[0];
        const { id: _c, match: _d, ...gmail } = ms[1];
        expect(gmail).to.deep.equal(email);
      }
    });
  });

  it('appends preset mappings after the user mappings, so a user mapping for the same path wins', () => {
    const mine = { id: 'my-mail', match: { path: 'email' }, messageTemplate: 'mail: {{subject}}' };
    const ms = load({ presets: ['email'], mappings: [mine, { match: { path: 'ci' }, action: 'wake', textTemplate: 't' }] });
    expect(byPath(ms)).to.deep.equal(['my-mail@email', 'mapping-2@ci', 'email@email', 'gmail@gmail']);
    expect(ms.find((m) => m.match.path === 'email')?.id).to.equal('my-mail');
  });

  it('refuses a user mapping id that a preset uses', () => {
    try {
      load({ presets: ['email'], mappings: [{ id: 'email', match: { path: 'x' }, messageTemplate: 'm' }] });
      expect.fail('expected a ConfigError');
    } catch (e) {
      expect((e as ConfigError).problems?.map((p) => p.path)).to.deep.equal(['hooks.mappings[0].id']);
    }
  });

  it('refuses the preset when the prefixes admit none of its session keys', () => {
    try {
      load({ presets: ['email'], allowedSessionKeyPrefixes: ['agent:'], defaultSessionKey: 'agent:main' });
      expect.fail('expected a ConfigError');
    } catch (e) {
      expect((e as ConfigError).problems?.map((p) => p.path)).to.deep.equal(['hooks.allowedSessionKeyPrefixes', 'hooks.allowedSessionKeyPrefixes']);
    }
  });

  it('validates each preset file with the given validator, under presets.<name>', () => {
    const seen: [unknown, string, string][] = [];
    const validate: MappingValidator = (raw, path, idPrefix) => {
      seen.push([raw, path, idPrefix]);
      return { problems: [{ path: `${path}[0].messageTemplate`, message: 'bad' }], mappings: [] };
    };
    const result = loadPresets(['gmail', 'nope', 'email'], validate);
    expect(seen.map(([, path, prefix]) => [path, prefix])).to.deep.equal([['presets.email', 'email-']]);
    expect(seen[0][0]).to.be.an('array').with.lengthOf(2);
    expect(result.problems).to.deep.equal([
      { path: 'presets.email[0].messageTemplate', message: 'bad' },
      { path: 'hooks.presets[1]', message: `unknown preset "nope"; known presets: ${knownPresets().join(', ')}` },
    ]);
  });
  describe('the senders\' presets and their secrets (docs/presets.md)', () => {
    const SIGNING = { github: 'github', stripe: 'stripe', sentry: 'sentry', linear: 'linear', pagerduty: 'pagerduty' } as const;
    const problems = (hooks: object, env: Record<string, string> = {}) => {
      try {
        configFromObject({ hooks }, '/srv/hr/hookrelay.yaml', env);
        return [];
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        return e.problems.map((p) => `${p.path}: ${p.message}`);
      }
    };

    it('a preset whose sender signs refuses to load without its secret, saying where and how to give it', () => {
      for (const name of Object.keys(SIGNING)) {
        const found = problems({ presets: ['email', name] });
        expect(found, name).to.have.lengthOf(1);
        expect(found[0], name).to.match(new RegExp(`^hooks\\.presets\\[1\\]: the ${name} preset checks the sender's \\S+ signature and needs its signing secret .*write the entry as \\{${name}: \\{secret: "\\$\\{${name.toUpperCase()}_WEBHOOK_SECRET\\}"\\}\\}$`));
      }
    });

    it('puts the secret into every mapping of the preset, which takes the signature in place of the hooks token', () => {
      for (const name of Object.keys(SIGNING)) {
        const ms = load({ presets: [{ [name]: { secret: 's3cret' } }] });
        expect(ms.length, name).to.be.greaterThan(1);
        for (const m of ms) {
          expect(m.id.startsWith(`${name}-`), m.id).to.equal(true);
          expect(m.match.path, m.id).to.equal(name);
          expect(m.auth, m.id).to.equal('signature');
          expect(m.verify, m.id).to.include({ secret: 's3cret' });
        }
      }
    });

    it('takes secrets (a list, for rotation) in place of secret, never both', () => {
      const [m] = load({ presets: [{ stripe: { secrets: ['whsec_new', 'whsec_old'] } }] });
      expect(m.verify).to.deep.include({ scheme: 'stripe', secrets: ['whsec_new', 'whsec_old'] });
      expect(m.verify?.secret).to.equal(undefined);
      expect(problems({ presets: [{ stripe: { secret: 'a', secrets: ['b'] } }] })).to.deep.equal(['hooks.presets[0].stripe.secrets: give secret or secrets (a list, for rotation), not both']);
    });

    it('expands ${VAR} in the entry, and names the entry\'s key when the variable is unset', () => {
      const [m] = load({ presets: [{ github: { secret: '${GITHUB_WEBHOOK_SECRET:-from-default}' } }] });
      expect(m.verify?.secret).to.equal('from-default');
      expect(problems({ presets: [{ github: { secret: '${GITHUB_WEBHOOK_SECRET}' } }] }).join('\n')).to.include('hooks.presets[0].github.secret').and.include('GITHUB_WEBHOOK_SECRET');
    });

    it('refuses a secret for a preset whose sender sends the hooks token, an entry of two names, an unknown name and a preset enabled twice with a secret', () => {
      expect(problems({ presets: [{ alertmanager: { secret: 'x' } }] })).to.deep.equal(['hooks.presets[0].alertmanager.secret: the alertmanager preset checks no signature (its sender sends the hooks token): remove the secret']);
      expect(problems({ presets: [{ email: { secret: 'x' } }] })[0]).to.match(/^hooks\.presets\[0\]\.email\.secret: the email preset checks no signature/);
      expect(problems({ presets: [{ github: { secret: 'x' }, stripe: { secret: 'y' } }] })).to.deep.equal(['hooks.presets[0]: names 2 presets (github, stripe): give each preset an entry of its own, e.g. - github: {secret: "${GITHUB_WEBHOOK_SECRET}"}']);
      expect(problems({ presets: [{ githib: { secret: 'x' } }] })).to.deep.equal([`hooks.presets[0]: unknown preset "githib"; known presets: ${knownPresets().join(', ')}`]);
      expect(problems({ presets: [{ github: { secret: 'x' } }, { github: { secret: 'y' } }] })).to.deep.equal(['hooks.presets[1]: preset github is enabled twice: keep one entry, with its secret']);
      expect(problems({ presets: [{ github: { secrett: 'x' } }] })[0]).to.match(/^hooks\.presets\[0\]\.github/);
      // A problem never quotes the secret it is about.
      const secretive = [{ alertmanager: { secret: 'sekrit-1' } }, { stripe: { secret: 'sekrit-2', secrets: ['sekrit-3'] } }, { github: { secret: 'sekrit-4' }, linear: { secret: 'sekrit-5' } }];
      expect(problems({ presets: secretive }).join('\n')).to.not.include('sekrit');
    });

    it('grafana: the hooks token without a secret, Grafana\'s HMAC signature in its place with one', () => {
      const [plain] = load({ presets: ['grafana'] });
      expect([plain.verify, plain.auth]).to.deep.equal([undefined, 'token']);
      const [signed] = load({ presets: [{ grafana: { secret: 'g' } }] });
      expect(signed.auth).to.equal('signature');
      expect(signed.verify).to.deep.include({ scheme: 'hmac', header: 'X-Grafana-Alerting-Signature', secret: 'g' });
    });

    it('keeps payload text inside the untrusted-content fence: no preset mapping opts out, and every name is a constant', () => {
      const all = load({ presets: ['email', 'alertmanager', 'grafana', ...Object.keys(SIGNING).map((n) => ({ [n]: { secret: 's' } }))] });
      expect(all.length).to.be.greaterThan(20);
      for (const m of all) {
        expect(m.allowUnsafeExternalContent, m.id).to.equal(undefined);
        // The name prefixes the main-session summary, which is not fenced (dispatch/summary.ts).
        if (m.name !== undefined) expect(m.name, m.id).to.match(/^"[A-Za-z ]+"$/);
      }
    });
  });
});
