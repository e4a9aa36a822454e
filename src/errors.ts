import type { MappingFailure } from './failure.js';

/** The one catalog of error codes (CONTRACT.md §5, §8); a code is never reused, and spec/unit/errors.spec.ts checks it. */
export const ERRORS = {
  invalid_json: { status: 400, summary: 'the body is not valid JSON (or form data on a mapped hook)' },
  invalid_path: { status: 400, summary: 'the request path cannot be read (a bad percent-escape or a control character)' },
  invalid_payload: { status: 400, summary: 'a field is missing, blank or of the wrong type; the message names it' },
  model_not_allowed: { status: 400, summary: 'the requested model is not in agent.allowedModels' },
  session_key_not_allowed: { status: 400, summary: 'the sessionKey does not start with one of hooks.allowedSessionKeyPrefixes' },
  unauthorized: { status: 401, summary: 'the credential is missing, wrong, or of the other kind: sending takes a hooks token, reading (events, runs, metrics, the console) the admin token' },
  invalid_signature: { status: 401, summary: 'the mapping\'s verify needs a valid signature of the raw body: the signature header is missing, malformed or does not match' },
  stale_signature: { status: 401, summary: 'the signature\'s timestamp is outside verify.toleranceSeconds (default 300 s), in the past or the future' },
  cross_origin: { status: 403, summary: 'a console POST that did not come from the console\'s own pages (its Origin or Sec-Fetch-Site names another site, or neither was sent)' },
  forbidden: { status: 403, summary: 'a scoped hooks token (hooks.tokens[].routes) does not reach this route or mapping, or Meta\'s verification request has the wrong hub.verify_token' },
  not_found: { status: 404, summary: 'no such route, or no run with that id' },
  no_mapping: { status: 404, summary: 'no mapping matches this hook name and payload' },
  method_not_allowed: { status: 405, summary: 'the route does not take this method; see the Allow header' },
  request_timeout: { status: 408, summary: 'the body did not arrive within hooks.bodyTimeoutMs; the connection is closed' },
  payload_too_large: { status: 413, summary: 'the body is larger than hooks.maxBodyBytes, or its path\'s own limit (a mapping\'s maxBodyBytes), on the wire or decoded' },
  unsupported_encoding: { status: 415, summary: 'the Content-Encoding is not identity, gzip, deflate or br (one encoding only)' },
  misdirected_request: { status: 421, summary: 'the console answers only for the hosts it serves (server.host, loopback, server.publicHosts): another Host, as after DNS rebinding, gets 421' },
  idempotency_key_reused: { status: 422, summary: 'this idempotency key was already used for a different request on this route; send a new key with a new request' },
  rate_limited: { status: 429, summary: 'too many failed token attempts from this address, or more requests to a mapping than its ratePerMinute; see Retry-After' },
  transform_failed: { status: 500, summary: 'a mapping template or transform module failed; the gateway log (at warn) and the console\'s request page name the mapping, the cause and where in the template' },
  internal_error: { status: 500, summary: 'an unexpected failure; details are in the log only' },
  unavailable: { status: 503, summary: 'the gateway is shutting down or its store is unavailable; retry later' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

/** 5xx messages are replaced by the code's summary before they leave the process (STYLE.md "expose or log"). */
export class HookError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers?: Record<string, string>;
  /** A mapping's template, `match.when` or transform that failed (`transform_failed`), without payload data. */
  failure?: MappingFailure;

  constructor(code: ErrorCode, message: string, headers?: Record<string, string>) {
    super(message);
    this.name = 'HookError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.headers = headers;
  }

  get expose(): boolean {
    return this.status < 500;
  }
}

/** The JSON error body of the contract: `{"ok":false,"error":{"code","message"}}`. */
export function errorBody(code: ErrorCode, message: string): string {
  return JSON.stringify({ ok: false, error: { code, message } });
}
