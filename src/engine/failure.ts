import type { MappingFailure } from '../failure.js';
import { RenderBudgetError } from './render-budget.js';

/** A cause's message is cut here: the first line, enough to say what went wrong. */
const MESSAGE_MAX = 300;
/** Payload strings shorter than this are not looked for in a message (`id`, `ok` would blank its words). */
const SHORTEST_HIDDEN = 4;
/** Payload values looked at when hiding them: a bound on the work for a large payload. */
const VALUES_MAX = 10_000;
const HIDDEN = '…';

// JSONata fills its messages' {{value}}, {{value2}} and {{exp}} from the data
// (https://github.com/jsonata-js/jsonata/blob/master/src/jsonata.js, errorCodes); `$error(…)`'s
// message is the author's, payload strings in it hidden like any other.
const JSONATA_DATA_FIELDS = ['value', 'value2', 'exp'] as const;
const JSONATA_CODE = /^[DSTU]\d{4}$/;

/**
 * The failure of `step` of a mapping from what it threw. With `payload` (the listener, the log),
 * payload data is left out of the message: JSONata's data fields, quoted text in a transform's
 * message, and any payload string it quotes; without (`hookrelay test`, the author's own payload), the message as thrown.
 */
export function failureOf(mappingId: string, step: string, err: unknown, payload?: unknown): MappingFailure {
  const e = (err !== null && typeof err === 'object' ? err : {}) as Record<string, unknown>;
  const ownCode = typeof e.code === 'string' && e.code !== '' ? e.code : undefined;
  const code = ownCode ?? (err instanceof RenderBudgetError ? 'render_budget' : step === 'transform' ? nameOf(err) : typeof e.line === 'number' || typeof e.lineNumber === 'number' ? 'handlebars' : nameOf(err));
  let message = typeof e.message === 'string' ? e.message : typeof err === 'string' ? err : `threw ${err === null ? 'null' : typeof err}`;
  message = message.split('\n').find((l) => l.trim() !== '')?.trim() ?? '';
  if (payload !== undefined) {
    if (ownCode !== undefined && JSONATA_CODE.test(ownCode)) {
      for (const field of JSONATA_DATA_FIELDS) if (e[field] !== undefined) message = hide(message, JSON.stringify(e[field]) ?? '');
    } else if (step === 'transform') {
      // A transform's own message may quote what it read (`JSON.parse`: `"…" is not valid JSON`).
      message = message.replace(/"[^"]*"|`[^`]*`/g, `"${HIDDEN}"`);
    }
    for (const s of payloadStrings(payload)) message = hide(message, s);
  }
  const failure: MappingFailure = { mappingId, step, code, message: message.length > MESSAGE_MAX ? `${message.slice(0, MESSAGE_MAX)}${HIDDEN}` : message };
  if (typeof e.position === 'number') failure.position = e.position;
  const line = typeof e.line === 'number' ? e.line : typeof e.lineNumber === 'number' ? e.lineNumber : undefined;
  if (line !== undefined && typeof e.column === 'number') {
    failure.line = line;
    // Handlebars counts columns from 0; editors from 1.
    failure.column = e.column + 1;
  }
  return failure;
}

function nameOf(err: unknown): string {
  return err instanceof Error && err.name !== '' ? err.name : 'Error';
}

function hide(message: string, text: string): string {
  return text === '' ? message : message.split(text).join(HIDDEN);
}

/** The payload's string values long enough to hide, longest first (so a longer one is hidden whole). */
function payloadStrings(payload: unknown): string[] {
  const found = new Set<string>();
  const stack: unknown[] = [payload];
  for (let seen = 0; stack.length > 0 && seen < VALUES_MAX; seen++) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.length >= SHORTEST_HIDDEN) found.add(v);
    } else if (v !== null && typeof v === 'object') {
      for (const child of Object.values(v)) stack.push(child);
    }
  }
  return [...found].sort((a, b) => b.length - a.length);
}
