import type { Accepted } from '../action.js';
import type { AgentWait } from '../engine/decide.js';
import { ENDED_STATUSES, type RunRecord } from '../store/records.js';
import type { Runtime } from '../dispatch/runtime.js';
import { isHeartbeatOk } from '../dispatch/main-session.js';
import { publicRun } from './reads.js';

/** The 200 of a waited `agent` call once its run ended (CONTRACT.md §14); undefined when it did not in time. */
export async function waitedAnswer(dispatch: Pick<Runtime, 'waitRun'>, wait: AgentWait, accepted: Accepted): Promise<{ status: number; body: string } | undefined> {
  if (accepted.action !== 'agent') return undefined;
  const run = await dispatch.waitRun(accepted.runId, wait.ms, wait.completion ? completed : ended);
  if (!run) return undefined;
  const body: Record<string, unknown> = { ok: true, runId: run.runId, sessionKey: run.sessionKey, run: publicRun(run) };
  if (wait.completion) body.completion = completionOf(run);
  return { status: 200, body: JSON.stringify(body) };
}

/** OpenClaw's `completion` of a waited `/hooks/agent` call (CONTRACT.md §14; openclaw src/gateway/hooks.types.ts): bounded facts only. */
interface Completion {
  status: 'ok' | 'error' | 'skipped';
  replyDisposition: 'visible' | 'silent' | 'empty';
  delivered?: boolean;
  deliveryAttempted?: boolean;
  deliveryError?: 'delivery-failed';
}

/** The completion of an ended run whose delivery (if any) has settled. */
function completionOf(run: RunRecord): Completion {
  const reply = run.reply?.trim() ?? '';
  const completion: Completion = {
    status: run.status === 'succeeded' ? 'ok' : 'error',
    replyDisposition: reply === '' || isHeartbeatOk(reply) ? 'empty' : 'visible',
  };
  // Forward mode: the upstream delivers, and hookrelay does not know whether it did.
  if (run.forwarded !== undefined || run.errorCode === 'forward_failed') return completion;
  const d = run.delivery;
  completion.delivered = d?.status === 'delivered';
  completion.deliveryAttempted = d !== undefined;
  if (d?.status === 'failed' || (run.deliver && run.errorCode === 'no_recipient')) completion.deliveryError = 'delivery-failed';
  return completion;
}

/** True once a run has ended and its reply's delivery, if any, has settled: what waitForCompletion waits for. */
function completed(run: RunRecord): boolean {
  return ended(run) && run.delivery?.status !== 'pending';
}

function ended(run: RunRecord): boolean {
  return ENDED_STATUSES.includes(run.status);
}
