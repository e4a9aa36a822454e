import type { Logger } from '../log.js';
import type { Db } from './dialect.js';
import { repeat } from './maintenance.js';
import type { RunRecord } from './records.js';
import { toRun, type RunRow } from './rows.js';
import * as sql from './sql/index.js';

/**
 * Several instances on one PostgreSQL database (CONTRACT.md §10): each holds a lease, renewed
 * every third of `store.leaseSeconds`; a survivor takes over what one whose lease has expired held.
 */
type Tx = <T>(fn: (db: Db) => Promise<T>) => Promise<T>;

/** Says, at open, which other live instances this one joins. */
export async function logJoining(db: Db, id: string, log: Logger): Promise<void> {
  const others = (await db.all<{ id: string }>(sql.instances.otherLiveInstances, [id])).map((r) => r.id);
  if (others.length === 0) log.info({ others }, 'the only live instance on this database');
  else log.info({ others }, `joining ${others.length} other live instance${others.length === 1 ? '' : 's'} on this database: ids ${others.join(', ')} (they share the work: docs/several-instances.md)`);
}

/** Renews the lease every third of `leaseSeconds` until stopped; `stop` waits for a renewal under way. */
export function keepLease(tx: Tx, id: string, leaseSeconds: number, log: Logger, open: () => boolean): { stop(): Promise<void> } {
  const every = (leaseSeconds * 1000) / 3;
  const renew = () => tx((db) => db.run(sql.instances.renewLease, [id, leaseSeconds]));
  const failed = (err: unknown) => log.warn({ err }, 'renewing this instance\'s lease failed; retrying (past store.leaseSeconds, other instances take over its runs)');
  return repeat(open, renew, failed, every, every);
}

/** See Store.takeOver: the running runs and outbox leases of instances whose lease has expired. */
export async function takeOverGone(tx: Tx, id: string, limit: number | null, log: Logger): Promise<{ runs: RunRecord[]; deliveries: number }> {
  const { runs, released } = await tx(async (db) => {
    const released = await db.run(sql.instances.releaseGoneLeases, [id]);
    const runs = limit === 0 ? [] : await db.all<RunRow>(sql.instances.takeOverRuns, [id, limit]);
    await db.run(sql.instances.forgetGoneInstances);
    return { runs, released };
  });
  if (released > 0) log.warn({ released }, 'outbox leases of a gone instance released: a survivor sends those deliveries');
  return { runs: runs.sort((a, b) => a.seq - b.seq).map(toRun), deliveries: released };
}

/** A graceful stop: this instance's leases and row go, so others take over at once. */
export async function releaseInstance(tx: Tx, id: string, log: Logger): Promise<void> {
  await tx(async (db) => {
    await db.run(sql.instances.releaseOwnLeases, [id]);
    await db.run(sql.instances.removeInstance, [id]);
  }).catch((err) => log.warn({ err }, 'could not release this instance at close; others take over after its lease'));
}
