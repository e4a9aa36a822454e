import type { ConfigProblem } from '../config/errors.js';
import type { MappingConfig } from '../config/types.js';
import { HookError } from '../errors.js';
import { checkIdempotencyKey } from '../idempotency-key.js';
import type { Action } from '../action.js';
import { requestContext, transformInput } from './context.js';
import { compileHandlebars } from './handlebars.js';
import { compileJsonata, type JsonataLimits } from './jsonata.js';
import type { StepBudget } from './jsonata-budget.js';
import { OVERRIDE_KEYS, type Payload } from '../transform-types.js';
import type { LoadedTransform, TransformFn } from './transform-module.js';
import type { PayloadCheck } from './payload-schema.js';
import type { ActionOrigin, ActionValidator } from './validate.js';
import type { MappingAnswer } from '../mapping-answer.js';
import { compileAnswerParts, renderField, renderRespond, renderResponse, stepFailed, type AnswerParts, type Attempt, type Render } from './mapping-answers.js';

/** What a matched request comes to: actions (`dropped`: forEach items past `hooks.maxFanOut`), the mapping's own answer, or nothing to do. */
export type MapResult = { actions: Action[]; dropped?: number } | { answer: MappingAnswer } | undefined;

/** One request as the mappings see it (decide.ts makes it). */
export interface HookRequest {
  name: string;
  method?: 'GET' | 'POST';
  payload: Payload;
  headers: Record<string, string>;
  withheld?: Record<string, string>;
  query: Record<string, string>;
  url: string;
  now: Date;
}

/** A mapping ready for requests: everything compiled, its transform loaded. */
export interface CompiledMapping {
  id: string;
  match: { path?: string; source?: string };
  method: 'GET' | 'POST';
  when?: AnswerParts['when'];
  respond?: (req: HookRequest, now: string) => Promise<MappingAnswer>;
  response?: (req: HookRequest, now: string, accepted: readonly Record<string, unknown>[], usual: { status: number; body: string }) => Promise<MappingAnswer>;
  headers: readonly (readonly [string, string])[];
  forEach?: string;
  keyed: boolean;
  /** The mapping's `schema:`, checked before anything is rendered (CONTRACT.md §6). */
  checkPayload?: PayloadCheck;
  /** One validated action for the request (`index` -1) or for item `index` of the forEach array, or null when the transform skipped it. */
  act(req: HookRequest, now: string, item: unknown, index: number, budget: StepBudget): Promise<Action | null>;
}

/** What compiling a mapping needs from the engine; without a `validator` only its problems are wanted (a draft config). */
export interface CompileDeps {
  loadTransform: (spec: { module: string; export?: string }) => Promise<LoadedTransform>;
  jsonataLimits: JsonataLimits;
  compileSchema: (schema: unknown) => PayloadCheck;
  validator?: ActionValidator;
  allowUnsafeExternalContent?: boolean;
}

type Body = Record<string, unknown>;
/** What a transform returns: fields of the action to set. */
type TransformOverride = Record<string, unknown>;

interface Field {
  key: string;
  label: string;
  render: Render;
}

const AGENT_FIELDS = [
  ['message', 'messageTemplate'],
  ['name', 'name'],
  ['sessionKey', 'sessionKey'],
  ['to', 'to'],
  ['model', 'model'],
] as const;
const WAKE_FIELDS = [['text', 'textTemplate']] as const;

/** Compiles a mapping's templates, payload schema and transform, ready for requests; problems go to `problems` with their YAML paths. */
export async function compileMapping(
  mapping: MappingConfig,
  at: string,
  deps: CompileDeps,
  problems: ConfigProblem[],
  skip: (path: string) => boolean = () => false,
): Promise<CompiledMapping | undefined> {
  const before = problems.length;
  const compile = (source: string): Render =>
    mapping.engine === 'jsonata' ? compileJsonata(source, deps.jsonataLimits) : compileHandlebars(source);
  const attempt: Attempt = (path, make, prefix = '') => {
    if (skip(path)) return;
    try {
      make();
    } catch (err) {
      problems.push({ path, message: `${prefix}${(err as Error).message}` });
    }
  };
  const compileFields = (specs: readonly (readonly [string, keyof MappingConfig])[]): Field[] => {
    const fields: Field[] = [];
    if (skip(`${at}.engine`)) return fields;
    for (const [key, label] of specs) {
      const source = mapping[label];
      if (source !== undefined) attempt(`${at}.${label}`, () => fields.push({ key, label, render: compile(String(source)) }));
    }
    return fields;
  };
  const agentFields = compileFields(AGENT_FIELDS);
  const wakeFields = compileFields(WAKE_FIELDS);
  const keyField = compileFields([['idempotencyKey', 'idempotencyKey']])[0];
  let checkPayload: PayloadCheck | undefined;
  if (mapping.schema !== undefined) attempt(`${at}.schema`, () => (checkPayload = deps.compileSchema(mapping.schema)), 'not a usable JSON Schema (draft 2020-12): ');
  const loading = mapping.transform && !skip(`${at}.transform`) ? deps.loadTransform(mapping.transform) : undefined;
  const transformAt = problems.length;
  const answers = compileAnswerParts(mapping, at, compile, deps.jsonataLimits, attempt, skip);
  let transform: TransformFn | undefined;
  const loaded = await loading;
  if (loaded && 'problem' in loaded) problems.splice(transformAt, 0, { path: `${at}.transform.${loaded.key}`, message: loaded.problem });
  else transform = loaded?.fn;
  if (problems.length > before || deps.validator === undefined) return undefined;
  const validator = deps.validator;
  const { id, action: defaultKind, wakeMode } = mapping;
  const origin: ActionOrigin = {
    source: `mapping:${id}`,
    unsafe: mapping.allowUnsafeExternalContent ?? deps.allowUnsafeExternalContent!,
  };
  const deliverDefault = mapping.deliver ?? false;

  function baseBody(kind: 'wake' | 'agent'): Body {
    if (kind === 'wake') return { mode: wakeMode };
    return { wakeMode, provider: mapping.provider, thinking: mapping.thinking, timeoutSeconds: mapping.timeoutSeconds };
  }

  async function render(fields: Field[], context: Body, body: Body, budget: StepBudget): Promise<void> {
    for (const field of fields) body[field.key] = await renderField(id, field.label, field.render, context, budget);
  }

  async function produce(req: HookRequest, now: string, item: unknown, index: number, budget: StepBudget): Promise<Action | null> {
    let kind = defaultKind as 'wake' | 'agent';
    let override: TransformOverride | null | undefined;
    if (transform) {
      try {
        // The worker sends back an object, null or undefined (transform-worker.ts `carried`).
        override = (await transform(transformInput(req, now, item, index))) as TransformOverride | null | undefined;
      } catch (cause) {
        throw stepFailed(id, 'transform', cause, { payload: req.payload, headers: req.headers, query: req.query });
      }
      if (override === null) return null;
      if (override !== undefined && override.kind != null) {
        if (override.kind !== 'wake' && override.kind !== 'agent') {
          throw new HookError('invalid_payload', 'kind must be one of: wake, agent');
        }
        kind = override.kind;
      }
    }
    const body = baseBody(kind);
    const fields = kind === 'agent' ? agentFields : wakeFields;
    let context: Body | undefined;
    if (fields.length > 0) {
      context = requestContext(req, now, item, index);
      await render(fields, context, body, budget);
    }
    if (override) applyOverride(body, override);
    const action: Action = kind === 'agent' ? validator.agent(body, origin, deliverDefault) : validator.wake(body, origin);
    if (action.kind === 'agent' && mapping.callback) action.callbackUrl = mapping.callback.url;
    if (keyField) {
      context ??= requestContext(req, now, item, index);
      const rendered = await renderField(id, keyField.label, keyField.render, context, budget);
      const key = checkIdempotencyKey(rendered.trim(), 'idempotencyKey');
      // Under forEach the item is what the key guards (CONTRACT.md §8).
      if (key !== undefined) action.idempotency = index >= 0 ? { key, item: JSON.stringify(item) ?? 'null' } : { key };
    }
    return action;
  }

  return {
    id,
    match: mapping.match,
    headers: Object.entries(mapping.match.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value] as const),
    method: mapping.match.method ?? 'POST',
    when: answers.when,
    respond: mapping.action === 'respond' ? (req, now) => renderRespond(mapping, answers.respondBody, req, now) : undefined,
    response: mapping.response ? (req, now, accepted, usual) => renderResponse(mapping, answers.responseBody, req, now, accepted, usual) : undefined,
    forEach: mapping.forEach,
    keyed: keyField !== undefined,
    checkPayload,
    async act(req, now, item, index, budget) {
      try {
        return await produce(req, now, item, index, budget);
      } catch (err) {
        throw atItem(err, index);
      }
    },
  };
}

function applyOverride(body: Body, override: TransformOverride): void {
  for (const key of OVERRIDE_KEYS) {
    const value = override[key];
    if (value !== undefined && Object.hasOwn(override, key)) body[key] = value;
  }
  // `channel` aliases `provider`; beside it, it is passed on so that a disagreement is reported.
  if (override.channel !== undefined && Object.hasOwn(override, 'channel')) {
    if (Object.hasOwn(override, 'provider') && override.provider !== undefined) body.channel = override.channel;
    else body.provider = override.channel;
  }
}

function atItem(err: unknown, index: number): unknown {
  if (index < 0 || !(err instanceof HookError)) return err;
  const located = new HookError(err.code, `item ${index}: ${err.message}`);
  located.cause = err.cause;
  if (err.failure) located.failure = { ...err.failure, step: `${err.failure.step} (forEach item ${index})` };
  return located;
}
