import type { MappingConfig } from '../config/types.js';
import { HookError } from '../errors.js';
import { DEFAULT_ANSWER_TYPE, type MappingAnswer } from '../mapping-answer.js';
import type { HookRequest } from './compile-mapping.js';
import { requestContext } from './context.js';
import { compileJsonataValue, type JsonataLimits } from './jsonata.js';
import { failureText, type MappingFailure } from '../failure.js';
import { failureOf } from './failure.js';
import type { StepBudget } from './jsonata-budget.js';

/** The 500 of a failed template or transform: its failure without the data of `request` (what it carried, CONTRACT.md §16); the error is its `cause`. */
export function stepFailed(mappingId: string, step: string, cause: unknown, request: unknown): HookError {
  const failure = failureOf(mappingId, step, cause, request);
  const err = new HookError('transform_failed', failureText(failure));
  err.cause = cause;
  err.failure = failure;
  return err;
}

/** A compiled template field: context in, text out; a JSONata one spends `budget`, the request's steps (jsonata-budget.ts). */
export type Render = (context: Record<string, unknown>, budget?: StepBudget) => string | Promise<string>;

/** A `match.when` that could not be evaluated: the mapping counts as not matching (README "Answering senders"). */
export type WhenFailure = MappingFailure;

/** The compiled `match.when`, `respond` and `response` of a mapping. */
export interface AnswerParts {
  when?: (context: Record<string, unknown>, budget?: StepBudget) => Promise<unknown>;
  respondBody?: Render;
  responseBody?: Render;
}

/** Runs `make`, a compile of the part at `path` (unless skipped); its error, after `prefix`, is that path's problem. */
export type Attempt = (path: string, make: () => void, prefix?: string) => void;

/** Compiles `match.when` (always JSONata) and the `respond`/`response` bodies. */
export function compileAnswerParts(
  mapping: MappingConfig, at: string, compile: (source: string) => Render, limits: JsonataLimits, attempt: Attempt, skip: (path: string) => boolean,
): AnswerParts {
  const parts: AnswerParts = {};
  const when = mapping.match?.when;
  if (typeof when === 'string') attempt(`${at}.match.when`, () => (parts.when = compileJsonataValue(when, limits)));
  if (skip(`${at}.engine`)) return parts;
  const respondBody = mapping.respond?.body;
  if (typeof respondBody === 'string') attempt(`${at}.respond.body`, () => (parts.respondBody = compile(respondBody)));
  const responseBody = mapping.response?.body;
  if (typeof responseBody === 'string') attempt(`${at}.response.body`, () => (parts.responseBody = compile(responseBody)));
  return parts;
}

/** Whether a request satisfies `when`, or the failure of an evaluation that threw. */
export async function whenHolds(mappingId: string, when: NonNullable<AnswerParts['when']>, req: Pick<HookRequest, 'payload' | 'headers' | 'query'>): Promise<boolean | WhenFailure> {
  const context = { payload: req.payload, headers: req.headers, query: req.query };
  try {
    return truthy(await when(context));
  } catch (err) {
    return failureOf(mappingId, 'match.when', err, context);
  }
}

/** JSONata's boolean cast, https://docs.jsonata.org/boolean-functions#boolean */
function truthy(value: unknown): boolean {
  if (value === undefined || value === null || typeof value === 'function') return false;
  if (typeof value === 'string') return value !== '';
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.some(truthy);
  return typeof value === 'object' && Object.keys(value).length > 0;
}

/** Renders an `action: respond` mapping's answer. */
export async function renderRespond(mapping: MappingConfig, body: Render | undefined, req: HookRequest, now: string): Promise<MappingAnswer> {
  const respond = mapping.respond!;
  const answer: MappingAnswer = { status: respond.status, contentType: respond.contentType ?? DEFAULT_ANSWER_TYPE };
  if (respond.headers !== undefined) answer.headers = respond.headers;
  if (body !== undefined) answer.body = await renderField(mapping.id, 'respond.body', body, requestContext(req, now));
  return answer;
}

/** Renders a mapping's `response` for what its request was accepted as; `usual` (the status and body the listener would answer) fills what `response` leaves out. */
export async function renderResponse(
  mapping: MappingConfig, body: Render | undefined, req: HookRequest, now: string, accepted: readonly Record<string, unknown>[], usual: { status: number; body: string },
): Promise<MappingAnswer> {
  const response = mapping.response!;
  const answer: MappingAnswer = { status: response.status ?? usual.status, contentType: response.contentType ?? DEFAULT_ANSWER_TYPE };
  if (body !== undefined) {
    const context = requestContext(req, now);
    const first = accepted[0] ?? {};
    context.eventId = first.eventId;
    context.runId = first.runId;
    context.sessionKey = first.sessionKey;
    context.actions = accepted;
    answer.body = await renderField(mapping.id, 'response.body', body, context);
  } else if (answer.status !== 204 && answer.status !== 205) {
    answer.body = usual.body;
  }
  return answer;
}

/** A template field rendered, its failure a {@link stepFailed}. */
export async function renderField(mappingId: string, label: string, render: Render, context: Record<string, unknown>, budget?: StepBudget): Promise<string> {
  try {
    return await render(context, budget);
  } catch (err) {
    throw stepFailed(mappingId, label, err, context);
  }
}
