/** JSON Schema builders, below config/ and providers/, which both write schema (STYLE.md #7, #14). */

export interface SchemaNode {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  default?: unknown;
  defaultDoc?: string;
  /** A credential: never echoed, redacted from logs, "Secret" in the docs. */
  secret?: boolean;
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
  anyOf?: SchemaNode[];
}

export const str = (description: string, dflt?: string, extra: Partial<SchemaNode> = {}): SchemaNode =>
  ({ type: 'string', description, ...(dflt === undefined ? {} : { default: dflt }), ...extra });
export const int = (description: string, dflt: number | undefined, minimum = 0, maximum?: number): SchemaNode =>
  ({ type: 'integer', description, minimum, ...(maximum === undefined ? {} : { maximum }), ...(dflt === undefined ? {} : { default: dflt }) });
export const bool = (description: string, dflt?: boolean): SchemaNode =>
  ({ type: 'boolean', description, ...(dflt === undefined ? {} : { default: dflt }) });
export const choice = (values: readonly (string | number)[], description: string, dflt?: string | number): SchemaNode =>
  ({ type: typeof values[0] === 'number' ? 'integer' : 'string', enum: values, description, ...(dflt === undefined ? {} : { default: dflt }) });
/** Closed: unknown keys are config errors (they are usually typos). */
export const obj = (description: string, properties: Record<string, SchemaNode>, extra: Partial<SchemaNode> = {}): SchemaNode =>
  ({ type: 'object', description, additionalProperties: false, properties, ...extra });
export const strList = (description: string, dflt: string[]): SchemaNode =>
  ({ type: 'array', description, items: { type: 'string' }, default: dflt });
/** Empty: not configured. */
export const secret = (description: string): SchemaNode => str(description, '', { secret: true });
