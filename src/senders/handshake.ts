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

/** The mapping, whether the hooks token was waived (`auth: signature`), and Asana's kept secret (store.ts keepHookSecret). */
export interface HandshakeContext {
  mappingId: string;
  verify: VerifyKeys;
  bySignature: boolean;
  keepSecret(secret: string, replace: boolean): Promise<string>;
}

/** Who counts a failed handshake, and as what (http/auth.ts FailureKind). */
export type HandshakeFailure = HookError & { counts?: 'hooks' | 'verifyToken' };

/**
 * A sender's handshake (CONTRACT.md §12, §15), answered with no action only when it passes its own
 * check: `signature`, recognised once its signature passed; `own`, recognised by its form, `answer` checking it.
 */
export interface Handshake {
  method: 'GET' | 'POST';
  check: 'signature' | 'own';
  is(req: HandshakeRequest): boolean;
  /** The failure kind a passed own check clears (CONTRACT.md §4). */
  passes?: 'verifyToken';
  answer(req: HandshakeRequest, ctx: HandshakeContext): MappingAnswer | Promise<MappingAnswer>;
}

export const MAX_ECHO = 1024;
const ECHOABLE = /^[^\p{Cc}]+$/u;

/** A challenge echoed exactly as text/plain with nosniff, bounded and printable: shown only as the text it is. */
export function echo(value: unknown, name: string): MappingAnswer {
  if (typeof value !== 'string' || value === '') throw new HookError('invalid_payload', `${name} is missing: the handshake sends the text to echo`);
  if (value.length > MAX_ECHO || !ECHOABLE.test(value)) throw new HookError('invalid_payload', `${name} must be at most ${MAX_ECHO} printable characters`);
  return { status: 200, contentType: 'text/plain; charset=utf-8', body: value, headers: { 'x-content-type-options': 'nosniff' } };
}

export function json(body: unknown): MappingAnswer {
  return { status: 200, contentType: 'application/json; charset=utf-8', body: JSON.stringify(body) };
}

/** A failed own check, counted as a failed attempt of its kind. */
export function failed(error: HookError, counts: 'hooks' | 'verifyToken'): HandshakeFailure {
  return Object.assign(error, { counts });
}
