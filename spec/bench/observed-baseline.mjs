// The observed yardstick for `npm run bench`: the durable baseline (durable-baseline.mjs) plus
// what an operator needs to see what a gateway did, done the straightforward way — a
// request-log row committed with the event it accepted (a refusal's row in the next commit,
// answered without waiting), a pino access line per request to stderr (asynchronous, as the
// gateway's), and prom-client metrics (requests by route and status, a duration histogram,
// GET /metrics). No validation, no mapping: what keeping the same promises costs a server
// written for nothing else. With `koa` the same work is served through Koa and @koa/router, the
// framework hookrelay is built on: what the framework costs on its own.
//
//   node spec/bench/observed-baseline.mjs PORT TOKEN MAX_BODY_BYTES DATA_DIR [koa]
import { hash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import Router from '@koa/router';
import Database from 'better-sqlite3';
import Koa from 'koa';
import pino from 'pino';
import client from 'prom-client';

if (isMainThread) {
  const [port, token, maxBytes, dataDir, framework] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4] ?? 262144), process.argv[5], process.argv[6]];
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
    for (const settle of done) settle(failed);
    commit();
  });
  writer.on('error', (err) => {
    process.stderr.write(`observed baseline writer: ${err.stack}\n`);
    process.exit(1);
  });

  const prefix = Date.now().toString(36).padStart(10, '0');
  let seq = 0;

  /** The access line and the metrics of an answered request. */
  function observe(r, status) {
    const ms = performance.now() - r.started;
    requests.inc({ route: r.route, status });
    seconds.observe({ route: r.route }, ms / 1000);
    log.info({ requestId: r.requestId, method: r.method, path: r.path, route: r.route, status, ms: Math.round(ms * 10) / 10 }, 'request');
  }

  /** What a request is: its id, method, path and route, and when it started. */
  function describe(method, url) {
    const p = url.split('?')[0];
    return { started: performance.now(), requestId: `${prefix}-${(++seq).toString(36)}`, method, path: p, route: p.slice(p.lastIndexOf('/') + 1) };
  }

  /** A request-log row: queued for the next commit; an accepted one goes with its event. */
  function requestRow(r, status, eventId) {
    queued.push(['request', r.requestId, Date.now(), r.method, r.path, r.route, status, eventId ?? null]);
  }

  /** A refusal's answer, its row in the next commit (not waited for). */
  function refuse(r, status, code) {
    requestRow(r, status);
    commit();
    return [status, `{"ok":false,"error":{"code":"${code}","message":"refused"}}`, status === 413 ? { connection: 'close' } : undefined];
  }

  /** The token, then the size: a refusal, or undefined when the body is to be read. */
  function check(r, authorization, contentLength) {
    if (typeof authorization !== 'string' || !timingSafeEqual(hash('sha256', authorization, 'buffer'), expected)) return refuse(r, 401, 'unauthorized');
    if (Number(contentLength ?? 0) > maxBytes) return refuse(r, 413, 'payload_too_large');
    return undefined;
  }

  /** The read body: 400, or the event and its row queued, answered once they are committed. */
  function accept(r, text) {
    try {
      JSON.parse(text || '{}');
    } catch {
      return Promise.resolve(refuse(r, 400, 'invalid_json'));
    }
    const eventId = `${prefix}-${(++seq).toString(36).padStart(8, '0')}`;
    queued.push(['event', eventId, text, Date.now()]);
    requestRow(r, 200, eventId);
    const answered = new Promise((resolve) => waiting.push((failed) => resolve(failed ? [500, '{"ok":false}'] : [200, `{"ok":true,"eventId":"${eventId}"}`])));
    commit();
    return answered;
  }

  const server = framework === 'koa' ? koaServer() : http.createServer((req, res) => {
    const r = describe(req.method, req.url);
    const answer = ([status, body, headers]) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body);
      observe(r, status);
    };
    if (req.method === 'GET' && r.path === '/metrics') return void registry.metrics().then((text) => answer([200, text, { 'content-type': registry.contentType }]));
    if (req.method === 'GET' && r.path === '/healthz') return answer([200, '{"ok":true}']);
    const refused = check(r, req.headers.authorization, req.headers['content-length']);
    if (refused) return answer(refused);
    const chunks = [];
    let size = 0;
    req.on('data', (c) => { size += c.length; chunks.push(c); });
    req.on('end', () => void accept(r, Buffer.concat(chunks, size).toString('utf8')).then(answer));
  });
  server.listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));

  /** The same work as a Koa app would be written: a logging middleware, a router, a handler that awaits its commit. */
  function koaServer() {
    const app = new Koa();
    const router = new Router();
    app.use(async (ctx, next) => {
      ctx.state.r = describe(ctx.method, ctx.url);
      await next();
      observe(ctx.state.r, ctx.status);
    });
    const reply = (ctx, [status, body, headers]) => {
      ctx.status = status;
      if (headers) ctx.set(headers);
      ctx.type = ctx.type || 'application/json';
      ctx.body = body;
    };
    router.get('/metrics', async (ctx) => reply(ctx, [200, await registry.metrics(), { 'content-type': registry.contentType }]));
    router.get('/healthz', (ctx) => reply(ctx, [200, '{"ok":true}']));
    app.use(router.routes());
    app.use(async (ctx) => {
      const r = ctx.state.r;
      const refused = check(r, ctx.get('authorization') || undefined, ctx.get('content-length'));
      if (refused) return reply(ctx, refused);
      const chunks = [];
      let size = 0;
      await new Promise((resolve, reject) => ctx.req.on('data', (c) => { size += c.length; chunks.push(c); }).on('end', resolve).on('error', reject));
      reply(ctx, await accept(r, Buffer.concat(chunks, size).toString('utf8')));
    });
    return http.createServer(app.callback());
  }
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
