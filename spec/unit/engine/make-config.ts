import { fileURLToPath } from 'node:url';
import { configFromObject } from '../../../src/config/load.js';
import type { AgentConfig, Config, HooksConfig, MappingConfig } from '../../../src/config/types.js';

/** Where the spec transforms live. */
export const FIXTURE_TRANSFORMS = fileURLToPath(new URL('../../fixtures/transforms/', import.meta.url));

/** Every provider with placeholder credentials (what counts as configured). */
const ALL_PROVIDERS: Config['providers'] = {
  whatsapp: { accessToken: 'a', phoneNumberId: '1', apiVersion: 'v21.0', apiBase: 'http://127.0.0.1:9' },
  telegram: { botToken: 't', apiBase: 'http://127.0.0.1:9' },
  signal: { number: '+1', apiBase: 'http://127.0.0.1:9' },
  imessage: { password: 'p', apiBase: 'http://127.0.0.1:9', method: 'apple-script' },
  discord: { botToken: 'd', apiBase: 'http://127.0.0.1:9' },
  slack: { botToken: 's', apiBase: 'http://127.0.0.1:9' },
  msteams: { appId: 'a', appPassword: 'p', tokenUrl: 'http://127.0.0.1:9', serviceUrl: 'http://127.0.0.1:9' },
};

/** A mapping as a spec writes it: anything left out gets the loader's default. `channel` is folded into `provider`. */
export type MappingInput = Partial<MappingConfig> & { channel?: MappingConfig['provider'] };

export interface ConfigInput {
  hooks?: Partial<Omit<HooksConfig, 'mappings'>> & { mappings?: MappingInput[] };
  agent?: Partial<AgentConfig>;
  /** Default: every provider configured, so that actions may name any of them. */
  providers?: Config['providers'];
}

/**
 * A config for engine specs, built by the real loader (src/config/load.ts) from what the spec
 * gives plus a token, the spec transforms and every provider: the defaults are the loader's,
 * so a new one cannot drift. A config the loader refuses throws its ConfigError.
 */
export function makeConfig(input: ConfigInput = {}): Config {
  const raw = {
    // One transform worker process unless a spec asks for more: engine specs call one at a time.
    hooks: { token: 'spec-token', transformsDir: FIXTURE_TRANSFORMS, transformPoolSize: 1, ...input.hooks },
    agent: input.agent,
    providers: input.providers ?? ALL_PROVIDERS,
    log: { level: 'silent' },
  };
  return configFromObject(raw, SPEC_CONFIG_FILE, {}).config as Config;
}

/** Where the spec config "lives": relative paths (dataDir) resolve beside the fixtures. */
const SPEC_CONFIG_FILE = fileURLToPath(new URL('../../fixtures/spec-config.yaml', import.meta.url));
