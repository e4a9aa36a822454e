import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import { configSchema, mappingSchema } from './schema.js';

/**
 * The ajv that checks a config's shape and fills its defaults against schema.ts (load.ts).
 * coerceTypes lets `port: ${PORT:-8788}` and `to: 123456` work: after ${VAR} expansion every
 * such scalar is a string or a number. `defaultDoc`, `secret` and `url` are annotations (schema.ts).
 * The build compiles `configSchema` with it ahead of time (scripts/build.mjs). ajv itself is
 * required here, when one is made, so that a start (which uses the build's checkers) does not
 * load it.
 */
export function createShapeAjv(options: { code?: { source: boolean } } = {}): Ajv {
  const { Ajv } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
  const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: true, strict: true, verbose: true, ...options });
  ajv.addKeyword('defaultDoc');
  ajv.addKeyword('secret');
  ajv.addKeyword('url');
  return ajv;
}

/** Compiles `configSchema` with an ajv of {@link createShapeAjv}'s (the build passes one that keeps the code). */
export const compileShape = (ajv: Ajv): ValidateFunction => ajv.compile(configSchema);

/** Compiles the shape of a list of mappings (a preset's file, load.ts) with an ajv of {@link createShapeAjv}'s. */
export const compileMappingListShape = (ajv: Ajv): ValidateFunction => ajv.compile({ type: 'array', items: mappingSchema });

/** The build's compiled checker of `configSchema`, under dist/ (scripts/build.mjs writes it). */
export const SHAPE_CHECKER = 'config/config-shape.cjs';

/** The build's compiled checker of a list of mappings, beside it. */
export const MAPPING_LIST_CHECKER = 'config/mapping-list-shape.cjs';

/**
 * A checker the build compiled (ajv's standalone code, `dist/<file>`, scripts/build.mjs), or,
 * run from the sources (tsx: the specs), `compile()`d here. The one place that tells the two
 * apart for ajv's checkers. Found from this folder's parent: the build bundles this file into
 * dist/chunks/.
 */
export function prebuiltChecker(file: string, compile: () => ValidateFunction): ValidateFunction {
  if (import.meta.url.endsWith('.ts')) return compile();
  return createRequire(import.meta.url)(`../${file}`) as ValidateFunction;
}

/**
 * The checker of `configSchema` ({@link prebuiltChecker}). Compiling it is most of a config
 * load's time (measured: see docs/performance.md), which every start would pay.
 */
export const shapeChecker = (ajv: () => Ajv): ValidateFunction => prebuiltChecker(SHAPE_CHECKER, () => compileShape(ajv()));

/**
 * The checker of a list of mappings ({@link prebuiltChecker}): compiling it took 100–170 ms of
 * CPU at every start of a config with presets (the example config's `presets: [email]`).
 */
export const mappingListChecker = (ajv: () => Ajv): ValidateFunction => prebuiltChecker(MAPPING_LIST_CHECKER, () => compileMappingListShape(ajv()));
