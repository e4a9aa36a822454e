import { fileURLToPath } from 'node:url';
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
 * A validated-looking Config with the contract's defaults, for engine specs. The real loader
 * (src/config/load.ts) is deliberately not used: these specs test the engine alone.
 */
export function makeConfig(input: ConfigInput = {}): Config {
  const { mappings = [], ...hooks } = input.hooks ?? {};
  return {
    server: { host: '127.0.0.1', port: 8788, trustedProxies: [], headersTimeoutMs: 20000, requestTimeoutMs: 60000, maxConnections: 1024, maxHeaderBytes: 16384, maxConnectionsPerAddress: 128 },
    dataDir: '/tmp/hookrelay-spec',
    store: { kind: 'sqlite', durability: 'fsync', retainDays: 30 },
    delivery: { maxAttempts: 10, maxDelaySeconds: 300, timeoutSeconds: 30 },
    hooks: {
      enabled: true,
      token: 'spec-token',
      path: '/hooks',
      maxBodyBytes: 262144,
      bodyTimeoutMs: 30000,
      allowQueryToken: true,
      allowedSessionKeyPrefixes: ['hook:'],
      defaultSessionKey: '',
      acceptStatus: 202,
      mainSummary: 'always',
      allowUnsafeExternalContent: false,
      maxFanOut: 200,
      presets: [],
      transformsDir: FIXTURE_TRANSFORMS,
      transformTimeoutMs: 5000,
      ...hooks,
      mappings: mappings.map(withMappingDefaults),
    },
    agent: {
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: '',
      model: 'llama3.2',
      allowedModels: [],
      aliases: {},
      timeoutSeconds: 600,
      maxConcurrent: 4,
      historyTurns: 20,
      systemPrompt: '',
      ...input.agent,
    },
    heartbeat: { everySeconds: 1800 },
    session: {},
    providers: input.providers ?? ALL_PROVIDERS,
    log: { level: 'silent' },
  } as Config;
}

function withMappingDefaults(m: MappingInput, i: number): MappingConfig {
  const { channel, ...rest } = m;
  return {
    id: `mapping-${i + 1}`,
    match: {},
    action: 'agent',
    wakeMode: 'now',
    engine: 'handlebars',
    ...rest,
    provider: rest.provider ?? channel ?? 'last',
  };
}
