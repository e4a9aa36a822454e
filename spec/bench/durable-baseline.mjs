// The durable yardstick for `npm run bench` (issue 34): the least a webhook receiver must do to
// answer 2xx only once the request is on disk — check the token in constant time, read a
// bounded body, parse it, and answer after the same kind of commit hookrelay makes: one row
// per event, commits grouped on a worker thread (what arrived during one commit goes in the
// next), WAL, `synchronous=FULL`, better-sqlite3. No framework, no validation, no mapping, no
// logging: the physical limit of a durable accept on this machine. The accept paths' targets
// are ratios to it, measured in the same run on the same core.
//
//   node spec/bench/durable-baseline.mjs PORT TOKEN MAX_BODY_BYTES DATA_DIR
import { hash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

if (isMainThread) {
  const [port, token, maxBytes, dataDir] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4] ?? 262144), process.argv[5]];
  fs.mkdirSync(dataDir, { recursive: true });
  const expected = hash('sha256', `Bearer ${token}`, 'buffer');
  const writer = new Worker(new URL(import.meta.url), { workerData: { file: path.join(dataDir, 'durable.db') } });

  // Rows waiting for the next commit, and the answers of the commit in flight.
  let queued = [];
  let waiting = [];
  let inFlight = [];
  const commit = () => {
    if (inFlight.length > 0 || queued.length === 0) return;
    inFlight = waiting;
    writer.postMessage(queued);
    queued = [];
    waiting = [];
  };
  writer.on('message', (failed) => {
    const done = inFlight;
    inFlight = [];
    for (const res of done) {
      if (failed) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"ok":false}');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"ok":true,"eventId":"${res.eventId}"}`);
      }
    }
    commit();
  });
  writer.on('error', (err) => {
    process.stderr.write(`durable baseline writer: ${err.stack}\n`);
    process.exit(1);
  });

  // Time-ordered ids, as hookrelay's UUIDv7: each insert lands on the index's last page.
  const prefix = Date.now().toString(36).padStart(10, '0');
  let seq = 0;

  http.createServer((req, res) => {
    const given = req.headers.authorization;
    if (typeof given !== 'string' || !timingSafeEqual(hash('sha256', given, 'buffer'), expected)) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"ok":false,"error":{"code":"unauthorized","message":"bad token"}}');
      return;
    }
    if (Number(req.headers['content-length'] ?? 0) > maxBytes) {
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
      res.end('{"ok":false,"error":{"code":"payload_too_large","message":"too large"}}');
      return;
    }
    const chunks = [];
    let size = 0;
    req.on('data', (c) => { size += c.length; chunks.push(c); });
    req.on('end', () => {
      const text = Buffer.concat(chunks, size).toString('utf8') || '{}';
      try {
        JSON.parse(text);
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"ok":false}');
        return;
      }
      res.eventId = `${prefix}-${(++seq).toString(36).padStart(8, '0')}`;
      queued.push(res.eventId, text, Date.now());
      waiting.push(res);
      commit();
    });
  }).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
} else {
  const db = new Database(workerData.file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, text TEXT NOT NULL, at INTEGER NOT NULL)');
  const insert = db.prepare('INSERT INTO events (id, text, at) VALUES (?, ?, ?)');
  // One message per commit: the flat [id, text, at, id, text, at, …] of its rows.
  const commitAll = db.transaction((rows) => {
    for (let i = 0; i < rows.length; i += 3) insert.run(rows[i], rows[i + 1], rows[i + 2]);
  });
  parentPort.on('message', (rows) => {
    try {
      commitAll(rows);
      parentPort.postMessage(false);
    } catch (err) {
      process.stderr.write(`durable baseline commit: ${err.message}\n`);
      parentPort.postMessage(true);
    }
  });
}
