import type { Action } from '../action.js';
import type { MappingAnswer } from '../mapping-answer.js';

/** What mapping a matched request comes to, for decide() to turn into its decision. */
export type MapResult =
  | {
      type: 'actions';
      mappingId: string;
      actions: Action[];
      dropped?: number;
    }
  | { type: 'skipped'; mappingId: string }
  | { type: 'respond'; mappingId: string; answer: MappingAnswer };

/** One request as the mappings see it (decide.ts makes it). */
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
