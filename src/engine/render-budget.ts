// The budget of one Handlebars render (handlebars.ts routes every #each iteration and every
// mustache value through it).
//
import { jsonExceeds } from './jsonata-guard.js';
import { toText } from './to-text.js';

// Handlebars renders synchronously on the listener's thread, and a template multiplies the
// payload: `#each` nested in `#each` over a 3,000-item array (14 KB) is 2.7·10¹⁰ iterations,
// which blocked /healthz for seconds (issue 30). Like JSONata's guard (jsonata-guard.ts), a
// render has a budget of work — steps and built characters, counted as it goes, the same for
// the same template and payload on any machine — plus a clock as the last resort. The step
// budget is sized to stay under the clock on the 2-core CI machine, even under load (measured:
// see docs/performance.md), so the clock (100 ms) only trips first on a slower machine.

/** Block iterations plus values rendered, per render. */
export const MAX_RENDER_STEPS = 20_000;
/** Characters of text built per render, nested blocks counted at each level (a loop's body text and each value). */
export const MAX_RENDER_CHARS = 4_194_304;
/** Wall-clock backstop of one render, checked every 256 steps (CONTRACT.md §8: about 100 ms). */
export const MAX_RENDER_MS = 100;

/** A budget trip: a render error (500 transform_failed); never carries payload text. */
export class RenderBudgetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderBudgetError';
  }
}

// The render in progress (renders are synchronous and do not nest).
let steps = 0;
let chars = 0;
let deadline = 0;

function step(): void {
  if (++steps > MAX_RENDER_STEPS) {
    throw new RenderBudgetError(`the template would take more than ${MAX_RENDER_STEPS} steps (block iterations and values) in one render: bound the loops over payload arrays, e.g. no #each nested in another over the same array`);
  }
  if ((steps & 255) === 0 && performance.now() > deadline) {
    throw new RenderBudgetError(`the template render took more than ${MAX_RENDER_MS} ms: bound the loops over payload arrays`);
  }
}

function tooMuchText(): RenderBudgetError {
  return new RenderBudgetError(`the template would build more than ${MAX_RENDER_CHARS} characters in one render: render fewer or smaller values per item`);
}

export function built(text: string): string {
  step();
  if ((chars += text.length) > MAX_RENDER_CHARS) throw tooMuchText();
  return text;
}

/** Every mustache's value as text, sized before a JSON text is built (O(budget) at most). */
export function textOf(value: unknown): string {
  if (value !== null && typeof value === 'object' && jsonExceeds(value, MAX_RENDER_CHARS - chars)) throw tooMuchText();
  return built(toText(value));
}

/** Starts the budget of one render (handlebars.ts calls it before each). */
export function startRender(): void {
  steps = 0;
  chars = 0;
  deadline = performance.now() + MAX_RENDER_MS;
}
