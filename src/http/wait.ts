import type { Accepted } from '../action.js';
import type { Runtime } from '../dispatch/runtime.js';
import { HookError } from '../errors.js';
import type { Answer } from './accept.js';
import { completed, completionOf, ended } from './completion.js';
import type { Exchange } from './exchange.js';
import { publicRun } from './reads.js';

/** The longest `?wait=S` (CONTRACT.md §14). */
const MAX_WAIT_SECONDS = 60;

/**
 * How long `POST {path}/agent` waits for its run, and for what (CONTRACT.md §14,
 * docs/callbacks.md): `?wait=S` for the run's end; OpenClaw's `"waitForCompletion": true` for
 * its end and its reply's delivery, up to `hooks.maxWaitSeconds` (or `?wait=S` when both are
 * given). Read once, before anything is looked up or accepted: a bad `wait` is 400
 * invalid_payload and nothing is committed.
 */
export interface AgentWait {
  ms: number;
  /** OpenClaw's form: the answer carries `completion`. */
  completion: boolean;
}

/** The request's wait, or undefined when it asked for none. */
export function agentWait(ex: Exchange, maxWaitSeconds: number): AgentWait | undefined {
  const given = new URLSearchParams(ex.route?.query ?? '').get('wait');
  const completion = (ex.payload as { waitForCompletion?: unknown } | undefined)?.waitForCompletion === true;
  if (given === null) return completion ? { ms: maxWaitSeconds * 1000, completion } : undefined;
  const s = given.trim() === '' ? NaN : Number(given);
  if (!Number.isFinite(s) || s <= 0 || s > MAX_WAIT_SECONDS) {
    throw new HookError('invalid_payload', `wait must be a number of seconds greater than 0 and at most ${MAX_WAIT_SECONDS} (e.g. ?wait=30)`);
  }
  return { ms: Math.round(s * 1000), completion };
}

/**
 * Waits for the accepted run (the commit is durable: a 2xx still means committed first) and
 * makes the 200 answer `{ok, runId, sessionKey, run, completion?}`; undefined when it did not
 * end in time (or the gateway is stopping), and the caller answers what it would have without
 * waiting (`hooks.acceptStatus`).
 */
export async function waitedAnswer(dispatch: Pick<Runtime, 'waitRun'>, wait: AgentWait, accepted: Accepted): Promise<Answer | undefined> {
  if (accepted.action !== 'agent') return undefined;
  const run = await dispatch.waitRun(accepted.runId, wait.ms, wait.completion ? completed : ended);
  if (!run) return undefined;
  const body: Record<string, unknown> = { ok: true, runId: run.runId, sessionKey: run.sessionKey, run: publicRun(run) };
  if (wait.completion) body.completion = completionOf(run);
  return { status: 200, body: JSON.stringify(body) };
}
