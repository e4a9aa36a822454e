import type { MaintenanceOptions } from './maintenance.js';

/** What every store is opened with, whichever the backend: one options object of resolved values. */
export interface StoreOptions extends MaintenanceOptions {
  /** Most accepts (SQLite: write ops) per group commit (default {@link BATCH_MAX}): bounds one commit's latency and size. */
  batchMax?: number;
  /** After each group commit that carried accepts, with how many (the `hookrelay_commit_batch_size` histogram, src/metrics.ts). */
  onCommit?: (accepts: number) => void;
}

/** Most accepts per group commit unless a spec or benchmark says otherwise. */
export const BATCH_MAX = 512;
