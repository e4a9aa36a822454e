import { uuidv7 } from '../ids.js';
import type { HooksConfig } from '../config/types.js';
import type { RunError } from '../run-errors.js';
import type { NewEvent, RunRecord } from '../store/records.js';
import { neutralise } from './fence.js';

const EXCERPT_CHARS = 300;

export type DeliveryOutcome =
  | { kind: 'delivered'; to: string }
  | { kind: 'failed'; to?: string; error: RunError }
  | { kind: 'not_requested' }
  | { kind: 'heartbeat_ok' };

export type RunOutcome =
  | { status: 'succeeded'; reply: string; delivery: DeliveryOutcome }
  | { status: 'failed'; error: RunError }
  | { status: 'timed_out'; afterSeconds: number; error: RunError };

type SummaryRun = Pick<RunRecord, 'runId' | 'sessionKey' | 'name' | 'wakeMode'>;

/** The summary posted to the main session (CONTRACT.md §5); it names the reply's recipient so the heartbeat does not resend it. */
function summaryText(run: SummaryRun, outcome: RunOutcome): string {
  const prefix = run.name ? `[${oneLine(run.name, 80)}] ` : '';
  const head = `${prefix}Agent run ${run.runId} (session ${run.sessionKey})`;
  switch (outcome.status) {
    case 'failed':
      return `${head} failed: ${outcome.error.message}.`;
    case 'timed_out':
      return `${head} timed out after ${outcome.afterSeconds} s.`;
    case 'succeeded':
      return `${head} succeeded. Reply: "${oneLine(outcome.reply, EXCERPT_CHARS)}" ${deliveryText(outcome.delivery)}`;
  }
}

function deliveryText(d: DeliveryOutcome): string {
  switch (d.kind) {
    case 'delivered':
      return `Delivered to ${d.to}: the user already has this reply, do not send it again.`;
    case 'failed':
      return `Delivery${d.to ? ` to ${d.to}` : ''} failed: ${d.error.message}.`;
    case 'heartbeat_ok':
      return 'The reply was only HEARTBEAT_OK, so nothing was delivered.';
    case 'not_requested':
      return 'Not delivered (the run did not ask for delivery).';
  }
}

/** The summary event, or none under `hooks.mainSummary: undelivered` for a delivered reply; a run with `wakeMode: now` has it wake the heartbeat. */
export function buildSummary(
  run: SummaryRun,
  outcome: RunOutcome,
  at: string,
  mainSummary: HooksConfig['mainSummary'],
): NewEvent | undefined {
  const delivered = outcome.status === 'succeeded' && outcome.delivery.kind === 'delivered';
  if (delivered && mainSummary === 'undelivered') return undefined;
  // Our own text (the excerpt is neutralised), so it reaches the heartbeat without a fence.
  const summary: NewEvent = { id: uuidv7(), kind: 'summary', text: summaryText(run, outcome), source: `run:${run.runId}`, at, unsafe: true };
  if (run.wakeMode === 'now') summary.wakesNow = true;
  return summary;
}

/** Collapses whitespace, neutralises fence-like tags and cuts at `max` characters with an ellipsis. */
function oneLine(text: string, max: number): string {
  const flat = neutralise(text).replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
