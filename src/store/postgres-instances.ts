import type pg from 'pg';
import type { Logger } from '../log.js';
import { pgLimit } from './postgres-reader.js';
import type { RunRecord } from './records.js';
import { toRun, type RunRow } from './rows.js';
import * as sql from './sql/index.js';

/**
 * Several instances on one PostgreSQL database (CONTRACT.md §10; README "Several instances"):
 * each store registers an instance row with a lease it renews in the background; runs it claims
 * and outbox rows it leases name it. A survivor takes over what an instance whose lease has
 * expired held; a graceful stop hands over at once. The statements: sql/instances.ts.
 */

/** Registers or renews an instance's lease: alive until `leaseSeconds` from now (the database's clock). */
export async function renewLease(c: pg.ClientBase, id: string, leaseSeconds: number): Promise<void> {
  await c.query(sql.instances.renewLease, [id, leaseSeconds]);
}

/**
 * Says at start which other live instances this one joins (several instances on one database
 * are a feature, not a mistake: docs/several-instances.md), or that it is the only one.
 */
export async function logJoining(c: pg.ClientBase, id: string, log: Logger): Promise<void> {
  const others = (await c.query<{ id: string }>(sql.instances.otherLiveInstances, [id])).rows.map((r) => r.id);
  if (others.length === 0) log.info({ others }, 'the only live instance on this database');
  else log.info({ others }, `joining ${others.length} other live instance${others.length === 1 ? '' : 's'} on this database: ids ${others.join(', ')} (they share the work: docs/several-instances.md)`);
}

/** Runs a transaction on the store's pool (postgres-writer.ts inTransaction). */
type Tx = <T>(fn: (c: pg.PoolClient) => Promise<T>) => Promise<T>;

/**
 * Renews the lease every third of it, off the request path, while `open()` says so; a failure
 * is logged and retried at the next tick. `stop()` clears the timer and waits for a renewal
 * under way.
 */
export function keepLease(tx: Tx, id: string, leaseSeconds: number, log: Logger, open: () => boolean): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let renewing: Promise<void> | undefined;
  const schedule = () => {
    timer = setTimeout(() => {
      if (!open()) return;
      renewing = tx((c) => renewLease(c, id, leaseSeconds)).then(
        () => {},
        (err) => log.warn({ err }, 'renewing this instance\'s lease failed; retrying (past store.leaseSeconds, other instances take over its runs)'),
      ).finally(() => {
        renewing = undefined;
        if (open()) schedule();
      });
    }, (leaseSeconds * 1000) / 3);
    timer.unref();
  };
  schedule();
  return {
    stop: async () => {
      clearTimeout(timer);
      await renewing;
    },
  };
}

/**
 * What instance `id` takes over from gone ones, in one transaction: their outbox leases
 * released (how many), and up to `limit` of their running runs, now named for `id`.
 */
export async function takeOverGone(tx: Tx, id: string, limit: number, log: Logger): Promise<{ runs: RunRecord[]; deliveries: number }> {
  const n = pgLimit(limit);
  const { runs, released } = await tx(async (c) => {
    const released = (await c.query(sql.instances.releaseGoneLeases, [id])).rowCount ?? 0;
    const runs = n === 0 ? [] : (await c.query<RunRow>(sql.instances.takeOverRuns, [id, n])).rows;
    await c.query(sql.instances.forgetGoneInstances);
    return { runs, released };
  });
  if (released > 0) log.warn({ released }, 'outbox leases of a gone instance released: a survivor sends those deliveries');
  return { runs: runs.sort((a, b) => a.seq - b.seq).map(toRun), deliveries: released };
}

/**
 * A graceful stop hands over at once rather than after the lease: the runtime has requeued its
 * runs; its outbox leases are released and its instance row goes. A failure only means others
 * wait for the lease.
 */
export async function releaseInstance(tx: Tx, id: string, log: Logger): Promise<void> {
  await tx(async (c) => {
    await c.query(sql.instances.releaseOwnLeases, [id]);
    await c.query(sql.instances.removeInstance, [id]);
  }).catch((err) => log.warn({ err }, 'could not release this instance at close; others take over after its lease'));
}
