import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { HookError } from '../errors.js';
import { linearRegExp } from './linear-regexp.js';

/** Checks a payload against a mapping's `schema:`; throws HookError `invalid_payload`. */
export type PayloadCheck = (payload: Record<string, unknown>) => void;

/**
 * An ajv for the users' payload schemas (JSON Schema draft 2020-12), one per engine. Strict
 * about the schema itself — an unknown keyword or format is a config error, since it is
 * usually a typo that would silently check nothing — but not about type combinations, which
 * are the author's business. allErrors off: the first failure is all a caller is told.
 * `pattern` and `patternProperties` run on the linear-time regex engine (a pattern it cannot
 * run is a config error saying why), so that no payload can make one backtrack; that engine
 * has no unicode mode, hence `unicodeRegExp: false` (`\p{…}` is refused, and a character
 * outside the BMP counts as two).
 */
export function createSchemaCompiler(): (schema: unknown) => PayloadCheck {
  let ajv: Ajv2020 | undefined;
  return (schema) => {
    ajv ??= createAjv();
    // ajv keeps a reference to the schema it compiles; the config is frozen, so hand it a copy.
    const validate: ValidateFunction = ajv.compile(structuredClone(schema) as object);
    return (payload) => {
      if (!validate(payload)) throw new HookError('invalid_payload', schemaProblem(validate.errors![0]!));
    };
  };
}

// Loaded with the first mapping that has a `schema:` (a config without one does not pay for
// ajv's draft 2020-12 and ajv-formats at start-up); require keeps compiling synchronous.
const require = createRequire(import.meta.url);

function createAjv(): Ajv2020 {
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as typeof import('ajv-formats');
  const ajv = new Ajv2020({
    allErrors: false, strict: true, strictTypes: false, strictTuples: false, strictRequired: false,
    unicodeRegExp: false, code: { regExp: schemaRegExp },
  });
  addFormats.default(ajv);
  return ajv;
}

/**
 * `payload/messages/0/from: must have required property 'from'`: where the payload failed
 * (a JSON Pointer under `payload`) and ajv's rule. Never a value from the payload: ajv's
 * messages quote the schema (limits, patterns, allowed values), not the data.
 */
function schemaProblem(e: ErrorObject): string {
  let at = `payload${e.instancePath}`;
  if (e.keyword === 'required') at += `/${(e.params as { missingProperty: string }).missingProperty}`;
  return `${at}: ${e.message ?? 'is invalid'}`;
}

/** `\p{…}`, `\P{…}` or `\u{…}` not itself escaped (an even run of backslashes before it). */
const UNICODE_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\[pPu]\{/;

/** ajv's regex engine for schema patterns: the linear-time one, naming the pattern it refuses. */
const schemaRegExp = Object.assign(
  (pattern: string, flags: string): RegExp => {
    try {
      // Without unicode mode `\p{L}` would quietly match the letters "p{L}": refuse it instead.
      if (UNICODE_ESCAPE.test(pattern)) throw new Error('cannot run in linear time: unicode escapes (\\p{…}, \\u{…}) need unicode mode, which the linear-time engine does not have; list the characters in a class instead');
      return linearRegExp(pattern, flags);
    } catch (err) {
      throw new Error(`pattern /${pattern}/ ${(err as Error).message}`);
    }
  },
  { code: 'linearRegExp' },
);
