import type { Static } from 'typebox';
import type { ConfigSchema as Schema, mappingSchema, PROVIDERS, THINKING_LEVELS, WAKE_MODES } from './schema.js';

/** The validated, defaulted and frozen configuration: the types of `schema.ts`, with what the loader settles. */
export type Provider = (typeof PROVIDERS)[number];
export type ProviderOrLast = Provider | 'last';
export type WakeMode = (typeof WAKE_MODES)[number];
export type Thinking = (typeof THINKING_LEVELS)[number];

/** `id` is set and the alias `channel` folded into `provider` at load; `match.headers` names are lower-case. */
export type MappingConfig = Omit<Static<typeof mappingSchema>, 'id' | 'channel'> & { id: string };
export type VerifyConfig = NonNullable<MappingConfig['verify']>;

/** `mappings`: the user's first, then the enabled presets' (first match wins). */
export type HooksConfig = Omit<Schema['hooks'], 'mappings'> & { mappings: MappingConfig[] };
export type AgentConfig = Schema['agent'];
export type ForwardConfig = Schema['runtime']['forward'];
export type Config = Omit<Schema, 'hooks' | 'providers'> & { hooks: HooksConfig; providers: ProvidersConfig };

/** `persistent`: a session key continues its conversation; `isolated`: a run from an empty history. */
export type SessionMode = 'persistent' | 'isolated';

/** `providers.<name>`, CONTRACT.md §3's provider table. Credentials default to "" (not configured). */
export interface ProvidersConfig {
  whatsapp?: { accessToken: string; phoneNumberId: string; apiVersion: string; apiBase: string };
  telegram?: { botToken: string; apiBase: string };
  signal?: { number: string; apiBase: string };
  imessage?: { password: string; apiBase: string; method: 'apple-script' | 'private-api' };
  discord?: { botToken: string; apiBase: string };
  slack?: { botToken: string; apiBase: string };
  msteams?: { appId: string; appPassword: string; tokenUrl: string; serviceUrl: string };
  [name: string]: Record<string, unknown> | undefined;
}

export interface LoadedConfig {
  file: string;
  /** Directory of the config file: relative `dataDir` and `transformsDir` resolve against it. */
  baseDir: string;
  config: Readonly<Config>;
  /** Set when `serve` generated the first-use token (CONTRACT.md §3). */
  generatedTokenFile?: string;
  /** Set when `serve` uses the generated admin token, `{dataDir}/admin-token` (CONTRACT.md §4). */
  generatedAdminTokenFile?: string;
}
