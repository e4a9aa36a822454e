import type { IncomingHttpHeaders } from 'node:http';
import { HookError } from '../errors.js';
import type { MappingAnswer } from '../mapping-answer.js';
import type { VerifyKeys } from './descriptor.js';

/** A request as a handshake sees it; `json()` parses the body once, undefined when it is not a JSON object. */
export interface HandshakeRequest {
  method: 'GET' | 'POST';
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json(): Record<string, unknown> | undefined;
}

/** What a handshake may ask beyond its request: the mapping, and Asana's kept secret. */
export interface HandshakeContext {
  mappingId: string;
  verify: VerifyKeys;
  /** Let through without the hooks token (`auth: signature`). */
  bySignature: boolean;
  /** Keeps a sender's secret for the mapping (store.ts keepHookSecret): the secret kept now. */
  keepSecret(secret: string, replace: boolean): Promise<string>;
}

/** Who counts a failed handshake, and as what (http/auth.ts FailureKind). */
export type HandshakeFailure = HookError & { counts?: 'hooks' | 'verifyToken' };

/**
 * A sender's handshake (CONTRACT.md §12, §15): a request answered with no action, and only when
 * it passes its own check. `signature`: it is signed like the sender's other requests, and is
 * recognised once its signature passed (Slack, Discord, Zoom, Twitch). `own`: it is recognised
 * by its form and carries a check of its own in place of a signature, which `answer` makes
 * (Meta's verify token; Asana's secret rule; Dropbox's and Graph's, which carry no secret, their form).
 */
export interface Handshake {
  method: 'GET' | 'POST';
  check: 'signature' | 'own';
  is(req: HandshakeRequest): boolean;
  /** The failure kind a passed own check clears (Meta's verify token, CONTRACT.md §4). */
  passes?: 'verifyToken';
  /** The answer; throws a {@link HandshakeFailure} when the handshake fails its check. */
  answer(req: HandshakeRequest, ctx: HandshakeContext): MappingAnswer | Promise<MappingAnswer>;
}

/** The longest text a handshake echoes. */
export const MAX_ECHO = 1024;
/** Printable text, no control characters: what a challenge may be to be echoed. */
const ECHOABLE = /^[^\p{Cc}]+$/u;

/**
 * Echoes a challenge the sender chose as text/plain, exactly: nosniff (and the mapping answer's
 * sandbox CSP), bounded and printable, so that it can be shown only as the text it is.
 */
export function echo(value: unknown, name: string, headers?: Record<string, string>): MappingAnswer {
  if (typeof value !== 'string' || value === '') throw new HookError('invalid_payload', `${name} is missing: the handshake sends the text to echo`);
  if (value.length > MAX_ECHO || !ECHOABLE.test(value)) throw new HookError('invalid_payload', `${name} must be at most ${MAX_ECHO} printable characters`);
  return { status: 200, contentType: 'text/plain; charset=utf-8', body: value, headers: { 'x-content-type-options': 'nosniff', ...headers } };
}

/** A JSON answer of a signed handshake. */
export function json(body: unknown): MappingAnswer {
  return { status: 200, contentType: 'application/json; charset=utf-8', body: JSON.stringify(body) };
}

/** A failed own check, counted as a failed attempt of `counts`. */
export function failed(error: HookError, counts: 'hooks' | 'verifyToken'): HandshakeFailure {
  return Object.assign(error, { counts });
}
