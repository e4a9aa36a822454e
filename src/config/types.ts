/**
 * The validated, defaulted and frozen configuration. `schema.ts` is the source of truth
 * (defaults and descriptions live there); these types mirror it for the compiler.
 */
export type Provider = 'whatsapp' | 'telegram' | 'signal' | 'imessage' | 'discord' | 'slack' | 'msteams';
export type ProviderOrLast = Provider | 'last';
export type WakeMode = 'now' | 'next-heartbeat';
export type Thinking = 'off' | 'minimal' | 'low' | 'medium' | 'high';
export type Engine = 'handlebars' | 'jsonata';

export interface MappingConfig {
  id: string;
  match: { path?: string; source?: string };
  forEach?: string;
  action: 'wake' | 'agent';
  wakeMode: WakeMode;
  engine: Engine;
  name?: string;
  messageTemplate?: string;
  textTemplate?: string;
  sessionKey?: string;
  deliver?: boolean;
  provider?: ProviderOrLast;
  to?: string;
  model?: string;
  thinking?: Thinking;
  timeoutSeconds?: number;
  transform?: { module: string; export?: string };
  allowUnsafeExternalContent?: boolean;
}

export interface HooksConfig {
  enabled: boolean;
  token: string;
  path: string;
  maxBodyBytes: number;
  allowQueryToken: boolean;
  allowedSessionKeyPrefixes: string[];
  defaultSessionKey: string;
  acceptStatus: 200 | 202;
  mainSummary: 'always' | 'undelivered';
  allowUnsafeExternalContent: boolean;
  maxFanOut: number;
  presets: string[];
  transformsDir: string;
  transformTimeoutMs: number;
  mappings: MappingConfig[];
}

export interface AgentConfig {
  baseUrl: string;
  apiKey: string;
  model: string;
  allowedModels: string[];
  aliases: Record<string, string>;
  timeoutSeconds: number;
  maxConcurrent: number;
  historyTurns: number;
  systemPrompt: string;
}

export interface Config {
  server: { host: string; port: number; trustedProxies: string[] };
  dataDir: string;
  store: { kind: 'sqlite'; durability: 'fsync' | 'os' };
  hooks: HooksConfig;
  agent: AgentConfig;
  heartbeat: { everySeconds: number };
  session: { provider?: Provider; to?: string };
  providers: {
    telegram?: { botToken: string; apiBase: string };
    [name: string]: Record<string, unknown> | undefined;
  };
  log: { level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent' };
}

/** Where a config came from: the file (for resolving relative paths) and the frozen value. */
export interface LoadedConfig {
  file: string;
  /** Directory of the config file: relative `dataDir` and `transformsDir` resolve against it. */
  baseDir: string;
  config: Readonly<Config>;
  /** Set when `serve` generated the first-use token (CONTRACT.md §3). */
  generatedTokenFile?: string;
}
