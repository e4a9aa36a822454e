import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../../src/log.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import { StoreError, type NewDelivery, type NewEvent, type NewRun } from '../../../src/store/store.js';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const run = (runId: string, at = T0): NewRun => ({
  runId, sessionKey: `hook:${runId}`, message: `msg ${runId}`, wakeMode: 'now', deliver: true, provider: 'telegram', to: '555',
  source: 'agent', unsafe: false, createdAt: iso(at),
});
const reply = (parts: string[], at = T0, kind: NewDelivery['kind'] = 'run'): NewDelivery => ({ kind, provider: 'telegram', to: '555', parts, createdAt: iso(at) });
const summary = (id: string): NewEvent => ({ id, kind: 'summary', text: `summary ${id}`, source: `run:${id}`, at: iso(T0), unsafe: true });

describe('store/sqlite: the delivery outbox', function () {
  this.timeout(20000);
  let dir: string;
  let now: number;
  const stores: SqliteStore[] = [];
  const open = async (opts: { retainDays?: number } = {}) => {
    const s = await SqliteStore.open({ dataDir: dir, durability: 'os', log: silentLogger, clock: () => new Date(now), ...opts });
    stores.push(s);
    return s;
  };
  const far = iso(T0 + DAY);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-outbox-'));
    now = T0;
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A run ended with its reply queued for delivery. */
  async function queued(store: SqliteStore, runId: string, parts: string[]) {
    await store.accept([], [run(runId)]);
    await store.claimRuns(10, iso(T0));
    await store.finishRun(runId, { status: 'succeeded', endedAt: iso(T0), reply: parts.join(' ') }, { delivery: reply(parts) });
  }

  // SQLite only: its data directory is locked, so the process before has stopped. (PostgreSQL
  // cannot know that: another instance may hold the lease.)
  it('a restart clears the leases of the process before: its pending rows are claimable at once', async () => {
    let store = await open();
    await queued(store, 'r1', ['one', 'two']);
    const [d] = (await store.claimDeliveries(iso(T0), 10, far)).deliveries;
    await store.ackPart(d!.id, 0);
    await store.close();
    stores.splice(0);
    store = await open();
    const [resumed] = (await store.claimDeliveries(iso(T0 + 1), 10, far)).deliveries;
    expect(resumed).to.include({ id: d!.id, partsSent: 1, attempts: 2 });
  });

});
