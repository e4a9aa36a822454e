import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { HookError } from '../errors.js';
import { linearRegExp } from './linear-regexp.js';
import type { Payload } from '../transform-types.js';

/** Checks a payload against a mapping's `schema:`; throws HookError `invalid_payload`. */
export type PayloadCheck = (payload: Payload) => void;

/** An ajv for the users' payload schemas (JSON Schema draft 2020-12), one per engine. */
export function createSchemaCompiler(): (schema: unknown) => PayloadCheck {
  let ajv: Ajv2020 | undefined;
  return (schema) => {
    ajv ??= createAjv();
    const validate: ValidateFunction = ajv.compile(structuredClone(schema) as object);
    return (payload) => {
      if (!validate(payload)) throw new HookError('invalid_payload', schemaProblem(validate.errors![0]!));
    };
  };
}

const require = createRequire(import.meta.url);

function createAjv(): Ajv2020 {
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as typeof import('ajv-formats');
  const ajv = new Ajv2020({
    // Strict: an unknown keyword is a typo that checks nothing. No unicode mode on the linear-time engine.
    allErrors: false, strict: true, strictTypes: false, strictTuples: false, strictRequired: false,
    unicodeRegExp: false, code: { regExp: schemaRegExp },
  });
  addFormats.default(ajv);
  return ajv;
}

/** `payload/messages/0/from: must have required property 'from'`: where the payload failed (a JSON Pointer under `payload`) and ajv's rule. */
function schemaProblem(e: ErrorObject): string {
  let at = `payload${e.instancePath}`;
  if (e.keyword === 'required') at += `/${(e.params as { missingProperty: string }).missingProperty}`;
  return `${at}: ${e.message ?? 'is invalid'}`;
}

const UNICODE_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\[pPu]\{/;

const schemaRegExp = Object.assign(
  (pattern: string, flags: string): RegExp => {
    try {
      if (UNICODE_ESCAPE.test(pattern)) throw new Error('cannot run in linear time: unicode escapes (\\p{…}, \\u{…}) need unicode mode, which the linear-time engine does not have; list the characters in a class instead');
      return linearRegExp(pattern, flags);
    } catch (err) {
      throw new Error(`pattern /${pattern}/ ${(err as Error).message}`);
    }
  },
  { code: 'linearRegExp' },
);
