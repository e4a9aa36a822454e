import { existsSync } from 'node:fs';
import { expect } from 'chai';
import { parse } from 'yaml';
import { providersGuide } from '../../../scripts/docs/render.js';
import { generatedSection, generatedSectionText, repoFile } from '../../../scripts/docs/sections.js';
import { ConfigError } from '../../../src/config/errors.js';
import { configFromObject } from '../../../src/config/load.js';
import { configSchema, PROVIDERS, SECRET_KEYS, unconfiguredProvider } from '../../../src/config/schema.js';
import { PROVIDER_DESCRIPTORS } from '../../../src/dispatch/providers/index.js';

/** The problems' paths and messages of a config that must not load. */
function problems(raw: Record<string, unknown>): string[] {
  try {
    configFromObject({ hooks: { token: 't' }, ...raw }, '/x/c.yaml', {});
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.path}: ${p.message}`);
    throw err;
  }
  return [];
}

const agentMapping = { match: { path: 'x' }, messageTemplate: 'm', deliver: true, to: 'C1' };

describe('dispatch/providers: config and docs', () => {
  it('the config schema composes every provider\'s own schema, credentials marked secret', () => {
    const providers = configSchema.properties!.providers!.properties!;
    expect(Object.keys(providers)).to.deep.equal([...PROVIDERS]);
    for (const d of PROVIDER_DESCRIPTORS) expect(providers[d.name]).to.equal(d.schema);
    for (const key of ['accessToken', 'botToken', 'password', 'appPassword']) expect(SECRET_KEYS.has(key), key).to.equal(true);
  });

  it('each documented example loads and makes its provider configured', () => {
    for (const d of PROVIDER_DESCRIPTORS) {
      const env = new Proxy({}, { get: (_, name) => `value-of-${String(name)}` }) as Record<string, string>;
      const { config } = configFromObject({ hooks: { token: 't' }, ...parse(d.example) }, '/x/c.yaml', env);
      expect(unconfiguredProvider(d.name, config.providers), d.name).to.equal(undefined);
    }
  });

  it('a provider is configured when every key its descriptor requires is non-empty', () => {
    expect(unconfiguredProvider('slack', {})).to.equal('providers.slack.botToken is empty');
    expect(unconfiguredProvider('slack', { slack: { botToken: '', apiBase: 'x' } })).to.equal('providers.slack.botToken is empty');
    expect(unconfiguredProvider('slack', { slack: { botToken: 'xoxb', apiBase: 'x' } })).to.equal(undefined);
    expect(unconfiguredProvider('whatsapp', { whatsapp: { accessToken: 'a', phoneNumberId: '' } })).to.equal('providers.whatsapp.phoneNumberId is empty');
    expect(unconfiguredProvider('msteams', { msteams: { appId: 'a', appPassword: 'p', tokenUrl: 'u' } })).to.equal('providers.msteams.serviceUrl is empty');
  });

  describe('the loader refuses a provider named in the config that is not configured', () => {
    it('on a mapping (provider or its alias channel), naming hooks.mappings[i].provider', () => {
      expect(problems({ hooks: { token: 't', mappings: [{ ...agentMapping }, { ...agentMapping, provider: 'slack' }] } }))
        .to.deep.equal(['hooks.mappings[1].provider: provider slack is not configured: providers.slack.botToken is empty']);
      expect(problems({ hooks: { token: 't', mappings: [{ ...agentMapping, channel: 'discord' }] } }))
        .to.deep.equal(['hooks.mappings[0].provider: provider discord is not configured: providers.discord.botToken is empty']);
      expect(problems({ hooks: { token: 't', mappings: [{ ...agentMapping, provider: 'slack' }] }, providers: { slack: { botToken: '' } } }))
        .to.have.length(1);
    });

    it('on session.provider', () => {
      expect(problems({ session: { provider: 'telegram', to: '1' }, providers: { telegram: { botToken: '' } } }))
        .to.deep.equal(['session.provider: provider telegram is not configured: providers.telegram.botToken is empty']);
    });

    it('accepts configured providers and `last`', () => {
      expect(problems({
        hooks: { token: 't', mappings: [{ ...agentMapping, provider: 'slack' }, { ...agentMapping, provider: 'last' }] },
        session: { provider: 'slack', to: 'C1' },
        providers: { slack: { botToken: 'xoxb-1' } },
      })).to.deep.equal([]);
    });
  });

  it('docs/providers.md carries exactly the generated provider guide between the providers markers (npm run docs)', () => {
    expect(generatedSection('providers').file).to.equal('docs/providers.md');
    expect(existsSync(repoFile('docs/providers.md'))).to.equal(true);
    expect(generatedSectionText('providers')).to.equal(providersGuide().trim());
  });
});
