import { insertInto } from '../dialect.js';
import { EVENT_COLUMNS, FOLD_COLUMNS } from '../rows.js';
import { FOLD_TYPES, foldedSeq } from './requests.js';

/** The PostgreSQL types of EVENT_COLUMNS. */
export const EVENT_TYPES = 'text, text, text, text, text, smallint';

export const insertEvents = insertInto('events', EVENT_COLUMNS, EVENT_TYPES);

/** Accepted events, each with its request's folded columns or NULLs (rows.ts foldedRow). */
const ACCEPTED_COLUMNS = `${EVENT_COLUMNS}, ${FOLD_COLUMNS}`;
export const insertAccepted = insertInto('events', ACCEPTED_COLUMNS, `${EVENT_TYPES}, ${FOLD_TYPES}`, '', foldedSeq(ACCEPTED_COLUMNS));

export const listEvents = 'SELECT * FROM events WHERE seq > $1 ORDER BY seq LIMIT $2';

/**
 * PostgreSQL takes this transaction-scoped advisory lock before inserting events, so that seq is
 * handed out in commit order: a reader paging with `after` never skips a later-committed event.
 */
export const EVENTS_LOCK = 0x686f6f6b65766e74n; // "hookevnt"
export const lockEvents = `SELECT pg_advisory_xact_lock(${EVENTS_LOCK})`;

/** The LISTEN/NOTIFY channel of `now` triggers, for the heartbeat leader (postgres-leader.ts). */
export const HEARTBEAT_CHANNEL = 'hookrelay_heartbeat';
