import type { EMAIL_TLS, PROVIDERS, THINKING_LEVELS, VERIFY_SCHEMES, WAKE_MODES } from './schema.js';

/** The validated, defaulted and frozen configuration; mirrors `schema.ts`, the source of truth. */
export type Provider = (typeof PROVIDERS)[number];
export type ProviderOrLast = Provider | 'last';
export type WakeMode = (typeof WAKE_MODES)[number];
export type Thinking = (typeof THINKING_LEVELS)[number];
export type TemplateLanguage = 'handlebars' | 'jsonata';

export interface MappingConfig {
  id: string;
  /** `headers` names are lower-case after load. */
  match: { path?: string; source?: string; headers?: Record<string, string>; method?: 'GET' | 'POST'; when?: string };
  schema?: Record<string, unknown>;
  forEach?: string;
  action: 'wake' | 'agent' | 'respond';
  respond?: RespondConfig;
  response?: ResponseConfig;
  wakeMode: WakeMode;
  engine: TemplateLanguage;
  name?: string;
  messageTemplate?: string;
  textTemplate?: string;
  sessionKey?: string;
  deliver?: boolean;
  /** Always set after load (default `last`; the alias `channel` is folded into it). */
  provider?: ProviderOrLast;
  to?: string;
  model?: string;
  idempotencyKey?: string;
  thinking?: Thinking;
  timeoutSeconds?: number;
  transform?: { module: string; export?: string };
  allowUnsafeExternalContent?: boolean;
  /** Signature check over the raw body (CONTRACT.md §8); load.ts guarantees match.path. */
  verify?: VerifyConfig;
  maxBodyBytes?: number;
  auth?: 'token' | 'signature';
  callback?: { url: string };
  concurrency?: number;
  ratePerMinute?: number;
}

export interface RespondConfig {
  status: number;
  contentType: string;
  body?: string;
  headers?: Record<string, string>;
}

export interface ResponseConfig {
  status?: number;
  contentType?: string;
  body?: string;
}

export type VerifyScheme = (typeof VERIFY_SCHEMES)[number];

/** `verify` of a mapping; exactly one of `secret` and `secrets` (load.ts). */
export interface VerifyConfig {
  scheme: VerifyScheme;
  secret?: string;
  secrets?: string[];
  toleranceSeconds?: number;
  verifyToken?: string;
  header?: string;
  algorithm?: 'sha256' | 'sha1' | 'sha512';
  encoding?: 'hex' | 'base64';
  prefix?: string;
}

export interface HooksConfig {
  enabled: boolean;
  token: string;
  /** Rotation: several accepted tokens, in place of `token` (load.ts refuses both); an entry may be scoped. */
  tokens?: HookTokenEntry[];
  path: string;
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  allowQueryToken: boolean;
  allowedSessionKeyPrefixes: string[];
  defaultSessionKey: string;
  acceptStatus: 200 | 202;
  mainSummary: 'always' | 'undelivered';
  allowUnsafeExternalContent: boolean;
  idempotencyWindowSeconds: number;
  keepBodies: number;
  maxFanOut: number;
  presets: string[];
  transformsDir: string;
  transformTimeoutMs: number;
  transformPoolSize?: number;
  transformMaxMemoryMb: number;
  maxTextLength: number;
  callbackSecret: string;
  callbackHosts: string[];
  maxWaitSeconds: number;
  /** User mappings first, then the enabled presets' (first match wins). */
  mappings: MappingConfig[];
  email?: EmailConfig;
}

/** A token, or a scoped one (CONTRACT.md §4). */
export type HookTokenEntry = string | { token: string; name?: string; routes?: string[] };

export interface EmailConfig {
  imap: {
    host: string;
    port?: number;
    tls: (typeof EMAIL_TLS)[number];
    user: string;
    passwordEnv?: string;
    passwordFile?: string;
  };
  mailbox: string;
  hookUrl?: string;
  bodyMaxChars: number;
  snippetChars: number;
  pollSeconds: number;
}

/** `persistent`: a session key continues its conversation; `isolated`: a run from an empty history. */
export type SessionMode = 'persistent' | 'isolated';

export interface AgentConfig {
  id: string;
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
  server: {
    host: string;
    port: number;
    trustedProxies: string[];
    publicHosts: string[];
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    maxConnections: number;
    maxHeaderBytes: number;
    maxConnectionsPerAddress: number;
    metrics: boolean;
    console: boolean;
    /** The admin token (reads and operates, CONTRACT.md §4); '' when not configured (token.ts generates one on loopback). */
    adminToken: string;
    /** Rotation: several admin tokens, in place of `adminToken` (load.ts refuses both). */
    adminTokens?: string[];
  };
  dataDir: string;
  store: { kind: 'sqlite' | 'postgres'; durability: 'fsync' | 'os'; retainDays: number; url?: string; poolSize: number; leaseSeconds: number };
  hooks: HooksConfig;
  agent: AgentConfig;
  heartbeat: { everySeconds: number };
  session: { provider?: Provider; to?: string };
  providers: ProvidersConfig;
  delivery: DeliveryConfig;
  runtime: RuntimeConfig;
  log: { level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'; bufferBytes: number };
}

export interface DeliveryConfig {
  maxAttempts: number;
  maxDelaySeconds: number;
  timeoutSeconds: number;
}

/** `runtime`: local runtime, or forward mode (CONTRACT.md §9); load.ts guarantees `url` and `token` with `forward`. */
export interface RuntimeConfig {
  kind: 'local' | 'forward';
  forward: ForwardConfig;
}

export interface ForwardConfig {
  url?: string;
  token: string;
  timeoutSeconds: number;
}

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
