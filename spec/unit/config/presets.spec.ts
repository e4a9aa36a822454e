import { expect } from 'chai';
import { ConfigError } from '../../../src/config/errors.js';
import { configFromObject } from '../../../src/config/load.js';
import { knownPresets, loadPresets, type MappingValidator } from '../../../src/config/presets.js';
import type { MappingConfig } from '../../../src/config/types.js';

const load = (hooks: object) => configFromObject({ hooks }, '/srv/hr/hookrelay.yaml', {}).config.hooks.mappings;
const byPath = (ms: readonly MappingConfig[]) => ms.map((m) => `${m.id}@${m.match.path}`);

describe('config/presets', () => {
  it('knows the shipped presets and their aliases', () => {
    expect(knownPresets()).to.deep.equal(['email', 'gmail']);
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
      { path: 'hooks.presets[1]', message: 'unknown preset "nope"; known presets: email, gmail' },
    ]);
  });
});
