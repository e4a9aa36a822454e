import pg from 'pg';

/** int8 (bigint: seq, ids, counts) as a JS number: they stay far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export interface PoolOptions {
  url: string;
  max: number;
  /** Called for errors of idle clients (the server went away): the pool drops them itself. */
  onIdleError: (err: Error) => void;
  /** How long a query waits for a connection of the pool (default 5 s). */
  waitMs?: number;
}

/** A connection pool on `url`: a broken connection is dropped and the next query opens a new one. */
export function createPool(opts: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max,
    connectionTimeoutMillis: opts.waitMs ?? 5000,
    idleTimeoutMillis: 30_000,
    application_name: 'hookrelay',
    types,
  });
  pool.on('error', opts.onIdleError);
  // A broken connection emits 'error' on its client even after the pool let go of it: unhandled, it would end the process.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`: what may be printed. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
  }
}
