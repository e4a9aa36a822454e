import { isHeartbeatOk } from '../dispatch/main-session.js';
import type { RunRecord } from '../store/records.js';

/**
 * OpenClaw's `completion` of a `/hooks/agent` call with `"waitForCompletion": true` (CONTRACT.md
 * §14), with OpenClaw's meanings (openclaw/openclaw src/gateway/hooks.types.ts
 * `HookAgentCompletion`): bounded facts only, never the reply text, target or provider's words.
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
