/**
 * The JSON Schema the config file is written in: the node type and the small builders that
 * write one. Below config/ and providers/, which both write schema (the config schema, and
 * each delivery provider its own `providers.<name>` part beside its code, STYLE.md #7), so
 * that neither imports the other for them (STYLE.md #14).
 */

/** The subset of JSON Schema the config schema uses; config/docs.ts walks it. */
export interface SchemaNode {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  default?: unknown;
  defaultDoc?: string;
  /** A credential: never echoed in a config problem, redacted from logs, "Secret" in the docs. */
  secret?: boolean;
  /** An http(s) URL: checked at load by config/rules.ts, one rule for every URL setting. */
  url?: boolean;
  enum?: readonly (string | number)[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  /** The value matches one of these (`hooks.tokens` items: a string or a scoped entry). */
  anyOf?: SchemaNode[];
}

/** A string; `dflt` is its default (absent: none), `extra` any further keywords. */
export const str = (description: string, dflt?: string, extra: Partial<SchemaNode> = {}): SchemaNode =>
  ({ type: 'string', description, ...(dflt === undefined ? {} : { default: dflt }), ...extra });
/** An integer of at least `minimum` (0 unless given) and at most `maximum` (if given). */
export const int = (description: string, dflt: number | undefined, minimum = 0, maximum?: number): SchemaNode =>
  ({ type: 'integer', description, minimum, ...(maximum === undefined ? {} : { maximum }), ...(dflt === undefined ? {} : { default: dflt }) });
/** true or false. */
export const bool = (description: string, dflt?: boolean): SchemaNode =>
  ({ type: 'boolean', description, ...(dflt === undefined ? {} : { default: dflt }) });
/** One of `values` (strings, or integers when the first one is a number). */
export const choice = (values: readonly (string | number)[], description: string, dflt?: string | number): SchemaNode =>
  ({ type: typeof values[0] === 'number' ? 'integer' : 'string', enum: values, description, ...(dflt === undefined ? {} : { default: dflt }) });
/** A closed object: unknown keys are config errors (they are usually typos). */
export const obj = (description: string, properties: Record<string, SchemaNode>, extra: Partial<SchemaNode> = {}): SchemaNode =>
  ({ type: 'object', description, additionalProperties: false, properties, ...extra });
/** A list of strings. */
export const strList = (description: string, dflt: string[]): SchemaNode =>
  ({ type: 'array', description, items: { type: 'string' }, default: dflt });
/**
 * A credential (empty: not configured): the `secret` mark is what the loader never echoes and
 * the logger redacts (config/schema.ts `SECRET_KEYS`).
 */
export const secret = (description: string): SchemaNode => str(description, '', { secret: true });
