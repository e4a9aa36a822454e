import type { Action } from '../action.js';
import type { MappingAnswer } from '../mapping-answer.js';

/**
 * The input and output of the pure mapping step `map()` (STYLE.md #3): what the listener,
 * `hookrelay test` and the console's dry run hand the engine, and what it answers.
 */

/** The result of the pure mapping step `map()`. */
export type MapResult =
  | {
      type: 'actions';
      mappingId: string;
      actions: Action[];
      /** forEach only: items beyond `hooks.maxFanOut` that were not acted on (absent when none). */
      dropped?: number;
    }
  | { type: 'skipped'; mappingId: string }
  /** An `action: respond` mapping: its answer, and no action. */
  | { type: 'respond'; mappingId: string; answer: MappingAnswer }
  | { type: 'no_match' };

/** One request as the mapping step sees it: no Koa, no sockets. */
export interface HookRequest {
  /** The NAME part of `POST {path}/NAME` (no leading or trailing slash). */
  name: string;
  /** The request method (`match.method`); absent: POST. A GET's payload is its query. */
  method?: 'GET' | 'POST';
  payload: Record<string, unknown>;
  /** Lower-case header names; no credential (engine/context.ts requestHeaders). */
  headers: Record<string, string>;
  /** The credential headers left out of `headers`: only `match.headers` reads them, never a template, transform or `match.when`. */
  withheld?: Record<string, string>;
  query: Record<string, string>;
  /** The path the request was routed on and its query, without credentials, e.g. `/hooks/github?x=1`. */
  url: string;
  /** Injected clock: ISO text of `now` in templates and transforms. */
  now: Date;
}
