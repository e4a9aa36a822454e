import { jsonExceeds } from './jsonata-guard.js';
import { toText } from './to-text.js';

// Handlebars renders synchronously on the listener's thread, and `#each` nested in `#each`
// multiplies the payload: like JSONata's guard, a render has a budget of work (steps and
// built characters, the same on any machine), with a clock as the last resort (CONTRACT.md §8).

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

/** The work one render has done so far. */
export interface RenderBudget {
  steps: number;
  chars: number;
  readonly deadline: number;
}

/** A fresh budget for one render. */
export function renderBudget(): RenderBudget {
  return { steps: 0, chars: 0, deadline: performance.now() + MAX_RENDER_MS };
}

function step(budget: RenderBudget): void {
  if (++budget.steps > MAX_RENDER_STEPS) {
    throw new RenderBudgetError(`the template would take more than ${MAX_RENDER_STEPS} steps (block iterations and values) in one render: bound the loops over payload arrays, e.g. no #each nested in another over the same array`);
  }
  if ((budget.steps & 255) === 0 && performance.now() > budget.deadline) {
    throw new RenderBudgetError(`the template render took more than ${MAX_RENDER_MS} ms: bound the loops over payload arrays`);
  }
}

function tooMuchText(): RenderBudgetError {
  return new RenderBudgetError(`the template would build more than ${MAX_RENDER_CHARS} characters in one render: render fewer or smaller values per item`);
}

/** Counts `text` (a block's output) as a step and as built characters. */
export function built(budget: RenderBudget, text: string): string {
  step(budget);
  if ((budget.chars += text.length) > MAX_RENDER_CHARS) throw tooMuchText();
  return text;
}

/** A mustache's value as text, sized before a JSON text is built. */
export function textOf(budget: RenderBudget, value: unknown): string {
  if (value !== null && typeof value === 'object' && jsonExceeds(value, MAX_RENDER_CHARS - budget.chars)) throw tooMuchText();
  return built(budget, toText(value));
}
