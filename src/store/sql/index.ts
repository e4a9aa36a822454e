/**
 * The store's SQL, one file per table (graphile-worker's src/sql/*): each statement written
 * once with `$n` placeholders, and twice ({ sqlite, pg }) only where the dialects really differ.
 */
export * as events from './events.js';
export * as history from './history.js';
export * as idempotency from './idempotency.js';
export * as instances from './instances.js';
export * as outbox from './outbox.js';
export * as requests from './requests.js';
export * as runs from './runs.js';
export * as rates from './rates.js';
export * as flow from './flow.js';
export * as tallies from './tallies.js';
