import { isHeartbeatOk } from '../dispatch/main-session.js';
import type { RunRecord } from '../store/records.js';

/**
 * OpenClaw's `completion` object of a direct `/hooks/agent` call made with
 * `"waitForCompletion": true` (CONTRACT.md §14), with OpenClaw's meanings: openclaw/openclaw
 * src/gateway/hooks.types.ts (`HookAgentCompletion`) and src/gateway/server/hooks.ts
 * (`logHookRunTerminal`, which builds it from the run's result; PR #139155). Bounded facts
 * only — never the reply text, the target or the provider's diagnostics:
 * - `status`: the run's execution, `ok` or `error` (a delivery failure does not make it
 *   `error`: "a delivery error is separate from execution status"); OpenClaw's `skipped` is a
 *   cron job that did not run, which a hookrelay run never is.
 * - `replyDisposition`: `visible` when the run answered text a user would see; `empty` when it
 *   answered nothing or only the acknowledgment token (OpenClaw maps its heartbeat suppression
 *   to `empty`); `silent` is OpenClaw's exact `NO_REPLY`, a token hookrelay does not have.
 * - `delivered` / `deliveryAttempted`: whether a send was verified / was tried at all (both
 *   false when delivery was not asked for or had nothing to send); `deliveryError:
 *   "delivery-failed"` when it was asked for and failed, without the provider's words.
 */
export interface Completion {
  status: 'ok' | 'error' | 'skipped';
  replyDisposition: 'visible' | 'silent' | 'empty';
  delivered?: boolean;
  deliveryAttempted?: boolean;
  deliveryError?: 'delivery-failed';
}

/** The completion of an ended run whose delivery (if any) has settled. */
export function completionOf(run: RunRecord): Completion {
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
export function completed(run: RunRecord): boolean {
  return ended(run) && run.delivery?.status !== 'pending';
}

/** True once a run has ended (`?wait`). */
export function ended(run: RunRecord): boolean {
  return run.status === 'succeeded' || run.status === 'failed' || run.status === 'timed_out';
}
