import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RUN_STATUSES, type RunStatus } from './store/records.js';

export type Metrics = ReturnType<typeof createMetrics>;

/** A row counts once under `delivered` or `failed`, and under `retried` once per retry before that. */
export type DeliveryOutcome = 'delivered' | 'failed' | 'retried';

/** Seconds: from a refused request to a transform near its time limit. */
export const DURATION_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];
/** Accept calls per commit: 1 when idle, up to the store's batch limit under load. */
const COMMIT_BATCH_BUCKETS: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/** The Prometheus metrics of CONTRACT.md §11 in a registry of our own, so several gateways in one process never collide; the gauges read the counts the store keeps (store/sql/tallies.ts) at each scrape. */
export function createMetrics(countRuns: () => Promise<Record<RunStatus, number>>, logDropped: () => number = () => 0, countHeld?: () => Promise<Record<string, number>>) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'hookrelay_requests_total',
    help: 'HTTP requests answered, by route (wake, agent, mapping:<id>, events, runs, healthz, metrics, unmatched) and status code.',
    labelNames: ['route', 'status'],
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'hookrelay_request_duration_seconds',
    help: 'Time from the request line to the end of the answer, by route, in seconds.',
    labelNames: ['route'],
    buckets: [...DURATION_BUCKETS],
    registers: [registry],
  });
  new Gauge({
    name: 'hookrelay_runs',
    help: 'Agent runs in the store, by status (ended runs count until store.retainDays purges them).',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const counts = await countRuns();
      for (const status of RUN_STATUSES) this.set({ status }, counts[status]);
    },
  });
  const deliveries = new Counter({
    name: 'hookrelay_deliveries_total',
    help: 'Reply deliveries from the outbox, by provider and outcome (delivered, failed: settled; retried: an attempt failed and another is scheduled).',
    labelNames: ['provider', 'outcome'],
    registers: [registry],
  });
  const heartbeats = new Counter({
    name: 'hookrelay_heartbeats_total',
    help: 'Heartbeat turns of the main session that asked the model (a trigger with no queued event is none).',
    registers: [registry],
  });
  new Gauge({
    name: 'hookrelay_mapping_held',
    help: 'Agent runs and wakes a paused mapping holds (hookrelay pause), carried out once it is resumed.',
    labelNames: ['mapping'],
    registers: [registry],
    async collect() {
      this.reset();
      const counts = countHeld ? await countHeld() : {};
      for (const [source, n] of Object.entries(counts)) this.set({ mapping: source.replace(/^mapping:/, '') }, n);
    },
  });
  const rateLimited = new Counter({
    name: 'hookrelay_rate_limited_total',
    help: 'Requests refused with 429 because their mapping had taken its ratePerMinute in the last 60 s (flow control).',
    labelNames: ['mapping'],
    registers: [registry],
  });
  const commits = new Histogram({
    name: 'hookrelay_commit_batch_size',
    help: 'Accept calls (accepted requests) carried by each group commit of the store; commits without accepts are not observed.',
    buckets: [...COMMIT_BATCH_BUCKETS],
    registers: [registry],
  });

  const requestLogDropped = new Counter({
    name: 'hookrelay_request_log_dropped_total',
    help: 'Request-log rows of requests that were not accepted, dropped rather than slowing the listener or growing the store: the buffer was full, the store could not take a batch, or the client address had already had 60 refusals logged that minute.',
    registers: [registry],
  });

  new Counter({
    name: 'hookrelay_log_dropped_total',
    help: 'Log lines dropped rather than holding up requests: stderr was not read fast enough and the log buffer (log.bufferBytes) was full.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(logDropped());
    },
  });

  return {
    contentType: registry.contentType,
    /** The gauges as the store's kept counts stand at this moment. */
    render: () => registry.metrics(),
    request(route: string, status: number, seconds: number): void {
      requests.inc({ route, status });
      durations.observe({ route }, seconds);
    },
    commit: (accepts: number) => commits.observe(accepts),
    delivery: (provider: string, outcome: DeliveryOutcome) => deliveries.inc({ provider, outcome }),
    heartbeat: () => heartbeats.inc(),
    rateLimited: (mapping: string) => rateLimited.inc({ mapping }),
    /** Request-log rows dropped (store/request-log.ts). */
    requestLogDropped: (rows: number) => requestLogDropped.inc(rows),
  };
}
