import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import { MAX_TIMEOUT_SECONDS, PROVIDERS, THINKING_LEVELS, WAKE_MODES } from '../config/schema.js';
import { prebuiltChecker } from '../config/shape.js';

/** What an action's `provider` (or `channel`) may name: a provider, or the last one used. */
const PROVIDERS_OR_LAST = ['last', ...PROVIDERS] as const;
/** What an action's `sessionMode` may be. */
const SESSION_MODES = ['persistent', 'isolated'] as const;

const NON_BLANK = '\\S';
const nullableEnum = (values: readonly string[]) => ({ enum: [...values, null] });
const nullableString = { type: ['string', 'null'] };

const WAKE_SCHEMA = {
  type: 'object',
  required: ['text'],
  properties: { text: { type: 'string', pattern: NON_BLANK }, mode: nullableEnum(WAKE_MODES) },
};

const AGENT_SCHEMA = {
  type: 'object',
  required: ['message'],
  properties: {
    message: { type: 'string', pattern: NON_BLANK },
    name: nullableString,
    sessionKey: { type: ['string', 'null'], pattern: NON_BLANK },
    wakeMode: nullableEnum(WAKE_MODES),
    deliver: { type: ['boolean', 'null'] },
    provider: nullableEnum(PROVIDERS_OR_LAST),
    channel: nullableEnum(PROVIDERS_OR_LAST),
    to: nullableString,
    model: { type: ['string', 'null'], pattern: NON_BLANK },
    thinking: nullableEnum(THINKING_LEVELS),
    timeoutSeconds: { type: ['number', 'null'], exclusiveMinimum: 0, maximum: MAX_TIMEOUT_SECONDS },
    agentId: { type: ['string', 'null'], pattern: NON_BLANK },
    sessionMode: nullableEnum(SESSION_MODES),
    // OpenClaw clients send it; accepted and not acted on (CONTRACT.md §14).
    waitForCompletion: { type: ['boolean', 'null'] },
  },
};

/** The checkers of a direct (or rendered) `/wake` and `/agent` body, before validate.ts's own rules. */
export type ActionCheckers = Record<'wake' | 'agent', ValidateFunction>;

/** The ajv that compiles the two body schemas: the build's (with `code.source`, for ajv's standalone code), or the specs' at load. */
export function createActionAjv(options: { code?: { source: boolean } } = {}): Ajv {
  const { Ajv } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
  return new Ajv({ allErrors: false, allowUnionTypes: true, ...options });
}

/** Compiles both schemas with an ajv of {@link createActionAjv}'s. */
export function compileActionSchemas(ajv: Ajv): ActionCheckers {
  return { wake: ajv.compile(WAKE_SCHEMA), agent: ajv.compile(AGENT_SCHEMA) };
}

/** The build's compiled checker of each schema, under dist/ (scripts/build.mjs writes them). */
export const ACTION_CHECKERS: Readonly<Record<keyof ActionCheckers, string>> = { wake: 'engine/wake-body.cjs', agent: 'engine/agent-body.cjs' };

/** The checkers: the build's, or, run from the sources (the specs), compiled here (config/shape.ts `prebuiltChecker`). */
export function actionCheckers(): ActionCheckers {
  let compiled: ActionCheckers | undefined;
  const fromSources = () => (compiled ??= compileActionSchemas(createActionAjv()));
  return {
    wake: prebuiltChecker(ACTION_CHECKERS.wake, () => fromSources().wake),
    agent: prebuiltChecker(ACTION_CHECKERS.agent, () => fromSources().agent),
  };
}
