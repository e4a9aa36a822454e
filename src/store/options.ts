import type { MaintenanceOptions } from './maintenance.js';

/**
 * What every store is opened with, whichever the backend: one options object of resolved
 * values. Those that come from the config (`store.retainDays`, `hooks.idempotencyWindowSeconds`,
 * and each backend's own: `store.durability`, `store.poolSize`, `store.leaseSeconds`) have their
 * defaults in the config schema only, applied by the loader; open.ts passes them on, and no
 * store repeats them. Each backend adds where its data is (SqliteStoreOptions,
 * PostgresStoreOptions).
 */
export interface StoreOptions extends MaintenanceOptions {
  /** Most accepts (SQLite: write ops) per group commit (default {@link BATCH_MAX}): bounds one commit's latency and size. */
  batchMax?: number;
  /**
   * Called after each group commit that carried accepts, with how many (the
   * `hookrelay_commit_batch_size` histogram, src/metrics.ts): a plain callback, so that the
   * store knows nothing of how it is measured.
   */
  onCommit?: (accepts: number) => void;
}

/** Most accepts per group commit unless a spec or benchmark says otherwise. */
export const BATCH_MAX = 512;
