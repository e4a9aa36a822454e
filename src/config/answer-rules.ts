import type { ConfigProblem } from './errors.js';
import { joinPath } from './problems.js';
import type { Obj } from './read.js';

/** Statuses that carry no body (RFC 9110 §15.3.5, §15.3.6, §15.4.5). */
export const BODYLESS_STATUSES: ReadonlySet<number> = new Set([204, 205, 304]);

/** A header name: an RFC 9110 §5.6.2 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value Node writes as it is: visible characters, spaces and tabs, no CR, LF or NUL (RFC 9110 §5.5). */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Headers a mapping may not set: hop-by-hop ones (RFC 9110 §7.6.1), Content-Length and
 * Content-Type (`contentType`), and cookies, which would land on the console's origin.
 */
const REFUSED_HEADERS: ReadonlyMap<string, string> = new Map([
  ...['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']
    .map((h) => [h, 'is a hop-by-hop header: it belongs to the connection, which the listener manages'] as const),
  ['content-length', 'is computed from the body'],
  ['content-type', 'is set with contentType'],
  ['set-cookie', 'a webhook answer sets no cookies (they would land on the console\'s origin)'],
]);

/** What an action mapping sets that a respond mapping, which acts on nothing, never uses. */
const ACTION_KEYS = ['forEach', 'transform', 'name', 'messageTemplate', 'textTemplate', 'sessionKey', 'deliver', 'to', 'model', 'thinking', 'timeoutSeconds', 'idempotencyKey', 'response'] as const;

/** The load checks of `respond` and `response` (CONTRACT.md §12) that the schema cannot say. */
export function answerProblems(m: Obj, path: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (m.action === 'respond') {
    if (m.respond === undefined) problems.push({ path: `${path}.respond`, message: 'action: respond needs respond: what to answer, e.g. {status: 204} to acknowledge and ignore, or {status: 200, body: "…"}' });
    for (const key of ACTION_KEYS) {
      if (m[key] !== undefined) problems.push({ path: `${path}.${key}`, message: `an action: respond mapping acts on nothing and takes no ${key}; remove it, or use action: wake or agent` });
    }
  } else if (m.respond !== undefined) {
    problems.push({ path: `${path}.respond`, message: 'is for action: respond; to change the answer of a wake or agent mapping use response: {status, contentType, body}' });
  }
  for (const key of ['respond', 'response'] as const) {
    const a = m[key];
    if (a === null || typeof a !== 'object') continue;
    if (BODYLESS_STATUSES.has(a.status) && a.body !== undefined) {
      problems.push({ path: `${path}.${key}.body`, message: `status ${a.status} answers no body: remove body, or choose another status` });
    }
    if (key === 'respond' && a.headers !== null && typeof a.headers === 'object') headerProblems(a.headers, `${path}.respond.headers`, problems);
  }
  return problems;
}

function headerProblems(headers: Obj, path: string, problems: ConfigProblem[]): void {
  const seen = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    const at = joinPath(path, name);
    const lower = name.toLowerCase();
    if (!TOKEN.test(name)) problems.push({ path: at, message: 'is not a header name: use letters, digits and !#$%&\'*+.^_`|~-' });
    else if (REFUSED_HEADERS.has(lower)) problems.push({ path: at, message: `${lower} ${REFUSED_HEADERS.get(lower)}: remove it` });
    else if (seen.has(lower)) problems.push({ path: at, message: `"${lower}" is given twice (header names are case-insensitive)` });
    else if (typeof value === 'string' && !FIELD_VALUE.test(value)) problems.push({ path: at, message: 'the value must be one line of text: no line breaks or control characters' });
    seen.add(lower);
  }
}
