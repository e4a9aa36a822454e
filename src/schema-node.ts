import * as Type from 'typebox';
import type { TObject, TOptional, TProperties, TRemoveOptional, TSchema, TSchemaOptions } from 'typebox';

/** JSON Schema builders, below config/ and providers/, which both write schema (STYLE.md #7, #14); TypeBox derives their types. */

/** A schema node as the walkers (docs, secret keys, URL checks) read it. */
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
  anyOf?: SchemaNode[];
}

/** ajv fills a key's default (useDefaults), so only a key without one may be missing once loaded. */
type Field<T extends TSchema, D> = undefined extends D ? TOptional<T> : T;
type Need<P extends TProperties, R extends string> = { [K in keyof P]: K extends R ? TRemoveOptional<P[K]> : P[K] };

export function field<T extends TSchema, D>(schema: T, dflt: D | undefined): Field<T, D> {
  return (dflt === undefined ? Type.Optional(schema) : Object.assign(schema, { default: dflt })) as Field<T, D>;
}

export const str = <D extends string | undefined = undefined>(description: string, dflt?: D, extra: TSchemaOptions = {}) =>
  field(Type.String({ description, ...extra }), dflt);
export const int = <D extends number | undefined = undefined>(description: string, dflt: D, minimum = 0, maximum?: number, extra: TSchemaOptions = {}) =>
  field(Type.Integer({ description, minimum, ...(maximum === undefined ? {} : { maximum }), ...extra }), dflt);
export const bool = <D extends boolean | undefined = undefined>(description: string, dflt?: D) =>
  field(Type.Boolean({ description }), dflt);
export const choice = <const V extends (string | number)[], D extends V[number] | undefined = undefined>(values: readonly [...V], description: string, dflt?: D, extra: TSchemaOptions = {}) =>
  field(Type.Enum(values, { type: typeof values[0] === 'number' ? 'integer' : 'string', description, ...extra }), dflt);
/** Closed: unknown keys are config errors (they are usually typos). Only the `required` keys must be given. */
export function obj<P extends TProperties, const R extends string = never, D extends object | undefined = undefined>(
  description: string, properties: P, extra: { required?: R[]; default?: D } = {},
) {
  const schema = Type.Object(properties, { description, additionalProperties: false, ...extra });
  if (!extra.required) delete (schema as { required?: unknown }).required;
  return field(schema as unknown as TObject<Need<P, R>>, extra.default);
}
/** Names to text, e.g. headers. */
export const strMap = <D extends Record<string, string> | undefined = undefined>(description: string, dflt?: D, value: TSchemaOptions = {}) =>
  field(Object.assign(Type.Unsafe<Record<string, string>>({ description, additionalProperties: Type.String(value) }), { type: 'object' as const }), dflt);
export const strList = (description: string, dflt: string[]) => Type.Array(Type.String(), { description, default: dflt });
/** Empty: not configured. */
export const secret = (description: string, extra: TSchemaOptions = {}) => str(description, '', { secret: true, ...extra });
