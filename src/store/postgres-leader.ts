import pg from 'pg';
import type { Logger } from '../log.js';
import { pgStoreError } from './db-errors.js';
import { LEADER_LOCK } from './postgres-schema.js';
import { HEARTBEAT_CHANNEL } from './sql/events.js';
import type { Leadership, LeaderHandlers } from './store.js';

/**
 * Heartbeat leadership on PostgreSQL (CONTRACT.md §10): whoever holds the session-level advisory lock {@link LEADER_LOCK} on a
 * connection of its own, LISTENing for `now` triggers there. `retryMs`: how often a follower tries for the lock, and how soon a
 * lost connection is opened again.
 */
export async function pgLeader(url: string, parentLog: Logger, retryMs: number, handlers: LeaderHandlers): Promise<Leadership> {
  const log = parentLog.child({ part: 'leader' });
  let stopped = false;
  let client: pg.Client | undefined;
  let leading = false;
  let timer: NodeJS.Timeout | undefined;
  let attempt: Promise<void> | undefined;

  const setLeading = (on: boolean) => {
    if (on === leading) return;
    leading = on;
    log.info({ leading: on }, on ? 'this instance is the heartbeat leader' : 'this instance is no longer the heartbeat leader');
    handlers.onLeader(on);
  };

  const schedule = () => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void tryOnce(), retryMs);
    timer.unref();
  };

  const connect = async (): Promise<pg.Client> => {
    const c = new pg.Client({ connectionString: url, application_name: 'hookrelay-leader', keepAlive: true, connectionTimeoutMillis: 5000 });
    c.on('error', () => {}); // a broken connection also ends: 'end' below decides
    c.on('notification', (msg) => {
      if (msg.channel === HEARTBEAT_CHANNEL && leading && client === c) handlers.onTrigger();
    });
    c.on('end', () => {
      if (client !== c) return;
      client = undefined;
      setLeading(false); // the lock went with the connection
      schedule();
    });
    await c.connect();
    return c;
  };

  const tryOnce = () => {
    attempt = (async () => {
      if (stopped || leading) return;
      try {
        if (!client) client = await connect();
        const c = client;
        const { rows } = await c.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1) AS got', [LEADER_LOCK.toString()]);
        if (rows[0]?.got) {
          await c.query(`LISTEN ${HEARTBEAT_CHANNEL}`);
          if (stopped) return;
          setLeading(true);
          return;
        }
      } catch (err) {
        log.warn({ err: pgStoreError(err) }, 'heartbeat leadership: the database is unavailable; trying again');
        const c = client;
        client = undefined;
        await c?.end().catch(() => {});
      }
      schedule();
    })();
    return attempt;
  };

  await tryOnce();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await attempt;
      const c = client;
      client = undefined;
      setLeading(false);
      await c?.end().catch(() => {});
    },
  };
}
