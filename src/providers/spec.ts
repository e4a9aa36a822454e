import { str, type SchemaNode } from '../schema-node.js';

/** A provider as config/ and the docs see it (STYLE.md #7), readable without loading its sender (dispatch/providers/). */
export interface ProviderSpec<N extends string = string> {
  name: N;
  schema: SchemaNode;
  /** Longest text of one message, in UTF-16 code units (CONTRACT.md §9). */
  limit: number;
  /** Where the credentials come from (docs). */
  summary: string;
  example: string;
  /** Configured when all of these are non-empty strings. */
  required: readonly string[];
}

/** A base URL, http(s): trailing slashes are dropped at send time; without a default it must not be empty. */
export const url = (description: string, dflt?: string): SchemaNode =>
  str(description, dflt, { url: true, ...(dflt === undefined ? { minLength: 1 } : {}) });
