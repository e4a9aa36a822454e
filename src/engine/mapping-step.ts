import type { Action } from '../action.js';
import type { MappingAnswer } from '../mapping-answer.js';

/** The input and output of the pure mapping step `map()` (STYLE.md #3): what the listener, `hookrelay test` and the console's dry run hand the engine, and what it answers. */

/** The result of the pure mapping step `map()`. */
export type MapResult =
  | {
      type: 'actions';
      mappingId: string;
      actions: Action[];
      dropped?: number;
    }
  | { type: 'skipped'; mappingId: string }
  | { type: 'respond'; mappingId: string; answer: MappingAnswer };

/** One request as the mapping step sees it: no Koa, no sockets. */
export interface HookRequest {
  name: string;
  method?: 'GET' | 'POST';
  payload: Record<string, unknown>;
  headers: Record<string, string>;
  withheld?: Record<string, string>;
  query: Record<string, string>;
  url: string;
  now: Date;
}
