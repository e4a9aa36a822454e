import type { Harness } from './harness.js';
import { callbacksContract } from './callbacks.js';
import { claimContract } from './claim.js';
import { commitContract } from './commit.js';
import { eventTimesContract } from './event-times.js';
import { countsContract } from './counts.js';
import { keysContract } from './keys.js';
import { outboxContract } from './outbox.js';
import { plansContract } from './plans.js';
import { readsContract } from './reads.js';
import { recordsContract } from './records.js';
import { retentionContract } from './retention.js';
import { takeOverContract } from './takeover.js';
import { requestLogContract } from './request-log.js';
import { requestLogFoldedContract } from './request-log-folded.js';
import { flowContract } from './flow.js';
import { hookSecretsContract } from './hook-secrets.js';

/**
 * The store specs that every backend must pass (the semantics documented on `Store` in
 * src/store/store.ts), run once per backend by the `*-contract.spec.ts` entries. What only
 * one backend has (SQLite's file lock, durability pragmas, crash specifics) stays in that
 * backend's own specs.
 */
export function storeContract(h: Harness): void {
  before(() => h.setup());
  after(() => h.teardown());
  recordsContract(h);
  eventTimesContract(h);
  commitContract(h);
  claimContract(h);
  readsContract(h);
  plansContract(h);
  countsContract(h);
  keysContract(h);
  outboxContract(h);
  retentionContract(h);
  takeOverContract(h);
  requestLogContract(h);
  requestLogFoldedContract(h);
  callbacksContract(h);
  flowContract(h);
  hookSecretsContract(h);
}
