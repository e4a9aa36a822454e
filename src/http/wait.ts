import type { Accepted } from '../action.js';
import type { Runtime } from '../dispatch/runtime.js';
import type { AgentWait } from '../engine/decide.js';
import { completed, completionOf, ended } from './completion.js';
import { publicRun } from './reads.js';

/**
 * `POST {path}/agent?wait=S` or `waitForCompletion` (CONTRACT.md §14; engine/decide.ts reads the wait). Waits for the accepted run (the commit is durable: a 2xx still means committed first) and
 * makes the 200 answer `{ok, runId, sessionKey, run, completion?}`; undefined when it did not
 * end in time (or the gateway is stopping), and the caller answers what it would have without
 * waiting (`hooks.acceptStatus`).
 */
export async function waitedAnswer(dispatch: Pick<Runtime, 'waitRun'>, wait: AgentWait, accepted: Accepted): Promise<{ status: number; body: string } | undefined> {
  if (accepted.action !== 'agent') return undefined;
  const run = await dispatch.waitRun(accepted.runId, wait.ms, wait.completion ? completed : ended);
  if (!run) return undefined;
  const body: Record<string, unknown> = { ok: true, runId: run.runId, sessionKey: run.sessionKey, run: publicRun(run) };
  if (wait.completion) body.completion = completionOf(run);
  return { status: 200, body: JSON.stringify(body) };
}
