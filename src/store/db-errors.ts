import { StoreError, type StoreErrorCode } from './store.js';

/** An error as it crosses the writer thread: `code` is SQLite's (`SQLITE_FULL`, …) or a {@link StoreErrorCode}. */
export interface WireError {
  message: string;
  code?: string;
}

/** Maps a SQLite error, or one from the writer thread, to the store's. */
export function sqliteStoreError(err: unknown, fallback: StoreErrorCode = 'failed'): StoreError {
  if (err instanceof StoreError) return err;
  const { message, code = '' } = err as WireError;
  const kind: StoreErrorCode =
    code === 'run_not_running' ? 'run_not_running'
    : code === 'constraint' || code.startsWith('SQLITE_CONSTRAINT') ? 'constraint'
    : /^SQLITE_(BUSY|LOCKED|FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB)/.test(code) ? 'unavailable'
    : fallback;
  return new StoreError(kind, message, { cause: err });
}

/**
 * A commit's failure as the senders and /healthz may read it: its cause in words, without
 * paths or payload text (https://www.sqlite.org/rescode.html).
 */
export function sqliteProblem(e: WireError): string {
  const code = e.code ?? '';
  if (code.startsWith('SQLITE_FULL')) return "no space left on the data directory's disk";
  if (code.startsWith('SQLITE_READONLY')) return 'the data directory cannot be written (read-only)';
  if (code.startsWith('SQLITE_IOERR')) return "the data directory's disk failed a write (I/O error)";
  return `the database cannot be written (${code || 'unknown error'})`;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Maps a `pg` error to the store's by SQLSTATE class (https://www.postgresql.org/docs/current/errcodes-appendix.html):
 * 23 → `constraint`; 08, 53, 57, network errors and a dropped connection → `unavailable`; else `failed`.
 */
export function pgStoreError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const e = err as Error & { code?: string };
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = e instanceof Error ? e.message : String(err);
  const kind: StoreErrorCode =
    code.startsWith('23') ? 'constraint'
    : /^(08|53|57)/.test(code) || NETWORK_CODES.has(code)
      || /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection closed/i.test(message)
      ? 'unavailable'
      : 'failed';
  return new StoreError(kind, kind === 'unavailable' ? `the database is unavailable: ${message}` : message, { cause: err });
}

/** A failed PostgreSQL transaction as the senders and /healthz may read it: never the URL. */
export function pgProblem(err: StoreError): string {
  const code = String((err.cause as { code?: unknown } | undefined)?.code ?? '');
  if (/^57P0[123]$/.test(code)) return 'PostgreSQL is shutting down or restarting';
  if (code === '53100') return "no space left on PostgreSQL's disk";
  if (code.startsWith('53')) return `PostgreSQL is out of resources (SQLSTATE ${code})`;
  return 'PostgreSQL cannot be reached';
}

/** Refuses, saying what to do, a store `where` (`at <file>`, `in <url>`) at another schema version than the one this hookrelay `reads` or `writes`. */
export function refuseOtherSchema(where: string, version: number, current: number, verb: 'reads' | 'writes' = 'reads'): void {
  if (version === current) return;
  const what = version > current && verb === 'reads' ? `newer than this hookrelay understands (v${current})` : `this hookrelay ${verb} v${current}`;
  const todo = version < current ? 'run `hookrelay serve` once to migrate it' : 'upgrade hookrelay';
  throw new StoreError('unavailable', `the store ${where} has schema v${version}, ${what}: ${todo}`);
}
