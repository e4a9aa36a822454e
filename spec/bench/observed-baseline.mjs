// The observed yardstick for `npm run bench`: the durable baseline (durable-baseline.mjs) plus
// what an operator needs to see what a gateway did, done the straightforward way — a
// request-log row committed with the event it accepted (a refusal's row in the next commit,
// answered without waiting), a pino access line per request to stderr (asynchronous, as the
// gateway's), and prom-client metrics (requests by route and status, a duration histogram,
// GET /metrics). No framework, no validation, no mapping: what keeping the same promises costs
// a server written for nothing else.
//
//   node spec/bench/observed-baseline.mjs PORT TOKEN MAX_BODY_BYTES DATA_DIR
import { hash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import pino from 'pino';
import client from 'prom-client';

if (isMainThread) {
  const [port, token, maxBytes, dataDir] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4] ?? 262144), process.argv[5]];
  fs.mkdirSync(dataDir, { recursive: true });
  const expected = hash('sha256', `Bearer ${token}`, 'buffer');
  const writer = new Worker(new URL(import.meta.url), { workerData: { file: path.join(dataDir, 'observed.db') } });
  const log = pino({ base: undefined }, pino.destination({ fd: 2, sync: false, minLength: 4096 }));
  setInterval(() => log.flush(), 100).unref();
  const registry = new client.Registry();
  const requests = new client.Counter({ name: 'requests_total', help: 'requests answered', labelNames: ['route', 'status'], registers: [registry] });
  const seconds = new client.Histogram({ name: 'request_duration_seconds', help: 'time to answer', labelNames: ['route'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1], registers: [registry] });

  // Rows waiting for the next commit (an event with its request-log row, or a request-log row
  // alone), and the answers of the commit in flight.
  let queued = [];
  let waiting = [];
  let inFlight;
  const commit = () => {
    if (inFlight !== undefined || queued.length === 0) return;
    inFlight = waiting;
    writer.postMessage(queued);
    queued = [];
    waiting = [];
  };
  writer.on('message', (failed) => {
    const done = inFlight;
    inFlight = undefined;
    for (const res of done) {
      if (failed) answer(res, 500, '{"ok":false}');
      else answer(res, 200, `{"ok":true,"eventId":"${res.eventId}"}`);
    }
    commit();
  });
  writer.on('error', (err) => {
    process.stderr.write(`observed baseline writer: ${err.stack}\n`);
    process.exit(1);
  });

  function answer(res, status, body, headers) {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
    const ms = performance.now() - res.started;
    requests.inc({ route: res.route, status });
    seconds.observe({ route: res.route }, ms / 1000);
    log.info({ requestId: res.requestId, method: res.method, path: res.path, route: res.route, status, ms: Math.round(ms * 10) / 10 }, 'request');
  }

  /** A request-log row: queued for the next commit; an accepted one goes with its event. */
  function requestRow(res, status, eventId) {
    queued.push(['request', res.requestId, Date.now(), res.method, res.path, res.route, status, eventId ?? null]);
  }

  const prefix = Date.now().toString(36).padStart(10, '0');
  let seq = 0;

  http.createServer((req, res) => {
    res.started = performance.now();
    res.requestId = `${prefix}-${(++seq).toString(36)}`;
    res.method = req.method;
    res.path = req.url.split('?')[0];
    res.route = res.path.slice(res.path.lastIndexOf('/') + 1);
    if (req.method === 'GET' && res.path === '/metrics') {
      registry.metrics().then((text) => answer(res, 200, text, { 'content-type': registry.contentType }));
      return;
    }
    if (req.method === 'GET' && res.path === '/healthz') return answer(res, 200, '{"ok":true}');
    const given = req.headers.authorization;
    if (typeof given !== 'string' || !timingSafeEqual(hash('sha256', given, 'buffer'), expected)) {
      requestRow(res, 401);
      commit();
      return answer(res, 401, '{"ok":false,"error":{"code":"unauthorized","message":"bad token"}}');
    }
    if (Number(req.headers['content-length'] ?? 0) > maxBytes) {
      requestRow(res, 413);
      commit();
      return answer(res, 413, '{"ok":false,"error":{"code":"payload_too_large","message":"too large"}}', { connection: 'close' });
    }
    const chunks = [];
    let size = 0;
    req.on('data', (c) => { size += c.length; chunks.push(c); });
    req.on('end', () => {
      const text = Buffer.concat(chunks, size).toString('utf8') || '{}';
      try {
        JSON.parse(text);
      } catch {
        requestRow(res, 400);
        commit();
        return answer(res, 400, '{"ok":false}');
      }
      res.eventId = `${prefix}-${(++seq).toString(36).padStart(8, '0')}`;
      queued.push(['event', res.eventId, text, Date.now()]);
      requestRow(res, 200, res.eventId);
      waiting.push(res);
      commit();
    });
  }).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
} else {
  const db = new Database(workerData.file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, text TEXT NOT NULL, at INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS requests (seq INTEGER PRIMARY KEY, request_id TEXT NOT NULL, at INTEGER NOT NULL, method TEXT NOT NULL, path TEXT NOT NULL, route TEXT NOT NULL, status INTEGER NOT NULL, event_id TEXT)`);
  const insertEvent = db.prepare('INSERT INTO events (id, text, at) VALUES (?, ?, ?)');
  const insertRequest = db.prepare('INSERT INTO requests (request_id, at, method, path, route, status, event_id) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const commitAll = db.transaction((rows) => {
    for (const [kind, ...values] of rows) (kind === 'event' ? insertEvent : insertRequest).run(...values);
  });
  parentPort.on('message', (rows) => {
    try {
      commitAll(rows);
      parentPort.postMessage(false);
    } catch (err) {
      process.stderr.write(`observed baseline commit: ${err.message}\n`);
      parentPort.postMessage(true);
    }
  });
}
