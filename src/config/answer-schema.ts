import type { TSchemaOptions } from 'typebox';
import { int, obj, str, strMap } from '../schema-node.js';

export const template = (description: string, extra: TSchemaOptions = {}) => str(`Template. ${description}.`, undefined, { minLength: 1, ...extra });

/** `respond` of an `action: respond` mapping (CONTRACT.md §12); config/answer-rules.ts checks what the schema cannot. */
export const respondSchema = obj('What an `action: respond` mapping answers, with no action: e.g. `{status: 204}` to acknowledge and ignore, or a handshake\'s echo. See "Answering senders" in docs/mappings.md.', {
  status: int('The status: 200–599; 204, 205 and 304 take no body.', 200, 200, 599),
  contentType: str('The Content-Type of the body (sent only with a body).', 'application/json', { minLength: 1 }),
  body: template('The body, in the mapping\'s engine; it sees the request\'s template context. Unset: no body'),
  headers: strMap('Further answer headers, name → value (fixed text, not templates). Hop-by-hop headers, Content-Type (use contentType), Content-Length and Set-Cookie are refused.'),
});

/** `response` of a wake or agent mapping (CONTRACT.md §12). */
export const responseSchema = obj('Replaces the success answer of a wake or agent mapping (errors stay as they are); an idempotent repeat gets the same answer. See "Answering senders" in docs/mappings.md.', {
  status: int('The status of the success answer: 200–299 (204 and 205 take no body).', undefined, 200, 299, { defaultDoc: 'the usual one (200, or hooks.acceptStatus with an agent run)' }),
  contentType: str('The Content-Type of the body.', undefined, { minLength: 1, defaultDoc: '`application/json`' }),
  body: template('The body, in the mapping\'s engine; besides the template context it sees `eventId`, `runId`, `sessionKey` (the first action\'s) and `actions` (every action\'s, as the usual answer lists them)', { defaultDoc: 'the usual answer\'s' }),
});
