/**
 * The SQLite writer's cost per accepted `/wake`, without HTTP or threads: the real write ops
 * (an event and its request-log row, as src/store/sqlite.ts queues them) applied by the real batch
 * runner (writes.ts runBatch) in batches, each batch one transaction on a fresh database at the
 * current schema, WAL + `synchronous=FULL` (one fsync per commit), as the writer thread does.
 * Prints CPU µs per op (user and system: the fsyncs are system time). `--no-request` leaves
 * the request-log row out: what it costs the writer. Pin it to one core like the bench's
 * server: `taskset -c 0 npx tsx spec/bench/writer-micro.ts`.
 *
 *   options: --ops N (default 60000) --batch B (15: the bench's median batch at 32 connections) --no-request
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { uuidv7 } from '../../src/ids.js';
import { requestValues } from '../../src/store/rows.js';
import { eventValues } from '../../src/store/rows.js';
import { sqliteDb } from '../../src/store/dialect.js';
import { runBatch, type WriteOp } from '../../src/store/writes.js';
import { migrate } from '../../src/store/sqlite-schema.js';

const { values } = parseArgs({ options: { ops: { type: 'string' }, batch: { type: 'string' }, 'no-request': { type: 'boolean' } } });
const OPS = Number(values.ops ?? 60_000);
const BATCH = Number(values.batch ?? 15);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'writer-micro-'));
const db = new Database(path.join(dir, 'hookrelay.db'));
db.pragma('journal_mode = WAL');
migrate(db);
db.pragma('synchronous = FULL');
const sdb = sqliteDb(db);

/** An accepted /wake's op, as Store.accept queues it. */
function wakeOp(): WriteOp {
  const at = new Date().toISOString();
  const id = uuidv7();
  const op: WriteOp = { kind: 'accept', events: [eventValues({ id, kind: 'wake', text: 'Disk usage on db1 is at 91 %', source: 'wake', at, unsafe: true })], runs: [] };
  if (!values['no-request']) {
    op.request = requestValues({
      at, requestId: '5f3a9c1e-1f', method: 'POST', path: '/hooks/wake', route: 'wake', status: 200, ms: 1.3,
      eventIds: [id], runIds: [], replayed: false, contentType: 'application/json', userAgent: 'autocannon',
    });
  }
  return op;
}

// Made first and copied as the thread boundary would (a structured clone), so that only the
// writer's side is timed.
const batches = Array.from({ length: Math.ceil(OPS / BATCH) }, () => structuredClone(Array.from({ length: BATCH }, wakeOp)));
const before = process.cpuUsage();
for (const batch of batches) await runBatch(sdb, batch);
const used = process.cpuUsage(before);
const ops = batches.length * BATCH;
console.log(`${ops} ops in batches of ${BATCH}${values['no-request'] ? ', no request-log row' : ''}: ${((used.user + used.system) / ops).toFixed(1)} µs CPU per op (user ${(used.user / ops).toFixed(1)}, system ${(used.system / ops).toFixed(1)})`);
db.close();
fs.rmSync(dir, { recursive: true, force: true });
