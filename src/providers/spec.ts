import { str, type SchemaNode } from '../schema-node.js';

/**
 * One delivery provider as the config and the docs see it (STYLE.md #7, Benthos' component
 * spec): its `providers.<name>` config schema, its message-length limit, what the docs say
 * about it, and which keys must be non-empty for it to count as configured. Its sender, which
 * spreads this spec into its descriptor, is dispatch/providers/<name>.ts: config/ reads the
 * spec without loading any sender (STYLE.md #14).
 */
export interface ProviderSpec<N extends string = string> {
  name: N;
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
}

/** A base URL, http(s): trailing slashes are dropped at send time; without a default it must not be empty. */
export const url = (description: string, dflt?: string): SchemaNode =>
  str(description, dflt, { url: true, ...(dflt === undefined ? { minLength: 1 } : {}) });
