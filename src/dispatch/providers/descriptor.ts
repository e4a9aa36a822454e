import type { SchemaNode } from '../../config/schema.js';
import type { Provider } from '../../config/types.js';
import type { Sender } from './sender.js';

/**
 * One delivery provider, described beside its code (STYLE.md §7): its `providers.<name>`
 * config schema, its message-length limit, an example for the README, which keys must be
 * non-empty for it to count as configured, and the factory of its {@link Sender}.
 */
export interface ProviderDescriptor<C = any> {
  name: Provider;
  /** The schema of `providers.<name>` (defaults and descriptions: the reference docs). */
  schema: SchemaNode;
  /** Longest text of one message, in UTF-16 code units (CONTRACT.md §9). */
  limit: number;
  /** Where the credentials come from, for the README. */
  summary: string;
  /** A working YAML snippet, for the README. */
  example: string;
  /** Keys that must be non-empty strings: the provider is configured when all of them are. */
  required: readonly string[];
  create(config: C, fetchImpl: typeof fetch): Sender;
}

// Small schema builders for the provider files (the config schema's own are private to it).
export const text = (description: string, dflt?: string, extra: Partial<SchemaNode> = {}): SchemaNode =>
  ({ type: 'string', description, ...(dflt === undefined ? {} : { default: dflt }), ...extra });
/** A credential (empty: not configured): never echoed by the loader, redacted from logs. */
export const credential = (description: string): SchemaNode => text(description, '', { secret: true });
/** A base URL: trailing slashes are dropped at send time. */
export const url = (description: string, dflt?: string): SchemaNode =>
  text(description, dflt, dflt === undefined ? { minLength: 1 } : {});
export const section = (description: string, properties: Record<string, SchemaNode>, required?: string[]): SchemaNode =>
  ({ type: 'object', description, additionalProperties: false, properties, ...(required ? { required } : {}) });
