import type { Action } from '../action.js';
import type { MappingAnswer } from '../mapping-answer.js';

/** What a matched request comes to: actions (`dropped`: forEach items past `hooks.maxFanOut`), the mapping's own answer, or nothing to do. */
export type MapResult = { actions: Action[]; dropped?: number } | { answer: MappingAnswer } | undefined;

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
