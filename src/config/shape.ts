import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import { configSchema } from './schema.js';

/** coerceTypes: `port: ${PORT:-8788}` is a string after expansion. ajv loads only when a checker is compiled here. */
export function createShapeAjv(options: { code?: { source: boolean } } = {}): Ajv {
  const { Ajv } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
  // The annotations the docs and the loader read (schema-node.ts), declared so that strict mode admits them.
  return new Ajv({ allErrors: true, useDefaults: true, coerceTypes: true, strict: true, verbose: true, keywords: ['defaultDoc', 'secret', 'url'], ...options });
}

export const compileShape = (ajv: Ajv): ValidateFunction => ajv.compile(configSchema);

export const SHAPE_CHECKER = 'config/config-shape.cjs';

/** The build's compiled checker (ajv standalone code under dist/), or, run from the sources, compiled here. */
export function prebuiltChecker(file: string, compile: () => ValidateFunction): ValidateFunction {
  if (import.meta.url.endsWith('.ts')) return compile();
  return createRequire(import.meta.url)(`../${file}`) as ValidateFunction;
}
