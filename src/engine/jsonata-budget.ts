import { JsonataGuardError } from './jsonata-guard.js';

/**
 * The work JSONata may do for one request, counted in evaluation steps, and the turns it
 * leaves the listener. JSONata's own `timeout` would measure each evaluation's wall time,
 * which includes every evaluation interleaved with it (they are asynchronous): the other items
 * of a `forEach` batch, the other requests taken at once — a batch would pass or fail by the
 * load it meets (CONTRACT.md §7: a 200-message batch is taken whole, every time, under load).
 * Steps are the same for the same expressions and payload on any machine. One budget is
 * shared by all the template evaluations of a request, so a batch of 200 items cannot do 200
 * times the work, and once it is spent the evaluations still running stop at their next step
 * (each `match.when` has one of its own: their number is the config's, not the payload's).
 */

/** What is left of one request's steps ({@link stepBudget}); shared by its evaluations. */
export interface StepBudget {
  left: number;
}

/** A fresh budget of `maxSteps` steps. */
export function stepBudget(maxSteps: number): StepBudget {
  return { left: maxSteps };
}

/**
 * The name the budget is bound to in an evaluation (`evaluate(input, bindings)`): with a space,
 * no JSONata variable can spell it, so an expression never reads or replaces it.
 */
export const BUDGET_BINDING = 'hookrelay step budget';

// The budget of one evaluation, found once and kept on its environment (JSONata makes a fresh
// `environment.base` per evaluate() and points every frame of it there).
const BUDGET = Symbol('hookrelay.budget');

interface Environment {
  base: { [BUDGET]?: StepBudget; lookup(name: string): unknown };
}

/**
 * Spends one step of the evaluation's budget (throws `too_many_steps` once it is spent) and
 * gives the event loop its turn when JSONata has held the thread for {@link SLICE_MS}: called
 * from JSONata's step hook, whose returned promise JSONata awaits.
 */
export function spendStep(environment: Environment, maxSteps: number): Promise<void> | undefined {
  const base = environment.base;
  const budget = (base[BUDGET] ??= base.lookup(BUDGET_BINDING) as StepBudget);
  if (--budget.left < 0) {
    throw new JsonataGuardError('too_many_steps', `the JSONata of one request would take more than ${maxSteps} evaluation steps (maxSteps): bound the work an expression does per payload item, e.g. no loop over a payload array inside a forEach item`);
  }
  return pace();
}

/**
 * JSONata awaits every step, but on promises that are already settled: a batch, or a long
 * evaluation, runs on microtasks alone and never lets the listener read a request. After each
 * step the clock is read (JSONata's own `timeout` option reads it on entering each); once a slice of
 * {@link SLICE_MS} has passed, every evaluation waits for the next turn of the event loop (a
 * setImmediate, which runs after the poll phase has taken the pending I/O). Read at every
 * step, not every few: one step of a built-in can take milliseconds on a large payload, and
 * the evaluations of several requests take theirs one after another. CONTRACT.md §8: no
 * template output blocks the listener for more than about 100 ms.
 */
const SLICE_MS = 10;
let sliceEnd = 0;
// The next turn of the event loop, from the first step of a slice until that turn comes.
let turn: Promise<void> | undefined;

function pace(): Promise<void> | undefined {
  const now = performance.now();
  if (turn === undefined) {
    sliceEnd = now + SLICE_MS;
    turn = new Promise((resolve) => setImmediate(() => {
      turn = undefined;
      resolve();
    }));
    return undefined;
  }
  return now < sliceEnd ? undefined : turn;
}
