#!/usr/bin/env node
// What the conformance kit starts as `npx hookrelay …` when run by ../run-kit-two-instances.mjs:
// the repo's real bin, twice, on one PostgreSQL database, behind a round-robin proxy.
//
//   serve --config FILE   rewrites FILE's `store` to PostgreSQL (HOOKRELAY_KIT_PG_URL), starts two
//                         instances on free ports (each its own copy of the config and dataDir),
//                         and answers on FILE's server.port through a reverse proxy that sends
//                         requests to them in turn. SIGTERM/SIGINT: both drain, exit 0.
//   anything else         the real bin, with the same rewritten config.
//
// The proxy adds X-Forwarded-For and the instances trust 127.0.0.1 as a proxy, as behind a real
// balancer. Requests go round-robin, not by client address: spreading them is the point here,
// and the kit crosses no failure budget (docs/several-instances.md, "Failure budgets").
// HOOKRELAY_KIT_COUNTS names a file that gets {"a": n, "b": n}, the requests each served.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = path.join(ROOT, 'src/bin.mjs');
const args = process.argv.slice(2);

const url = process.env.HOOKRELAY_KIT_PG_URL;
if (!url) {
  console.error('HOOKRELAY_KIT_PG_URL is not set: run this through spec/multi/run-kit-two-instances.mjs');
  process.exit(2);
}

const at = args.indexOf('--config');
const configFile = at >= 0 ? path.resolve(args[at + 1]) : undefined;
if (!configFile) {
  console.error('the two-instance shim needs --config FILE (a JSON config, as the kit writes)');
  process.exit(2);
}
const original = JSON.parse(fs.readFileSync(configFile, 'utf8'));
const base = path.dirname(configFile);

/** The kit's config on PostgreSQL, written beside FILE under `name`; its path. */
function writeConfig(name, change = (c) => c) {
  const c = structuredClone(original);
  c.store = { ...(c.store ?? {}), kind: 'postgres', url };
  delete c.store.durability;
  const file = path.join(base, name);
  fs.writeFileSync(file, JSON.stringify(change(c), null, 2));
  return file;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

function pass(file) {
  const rest = [...args];
  rest[at + 1] = file;
  const p = spawn(BIN, [...rest], { stdio: 'inherit' });
  p.on('exit', (code, sig) => process.exit(code ?? (sig ? 1 : 0)));
}

const started = [];

async function startInstance(name) {
  const port = await freePort();
  const file = writeConfig(`hookrelay-${name}.json`, (c) => ({
    ...c,
    server: { ...c.server, port, trustedProxies: [...(c.server?.trustedProxies ?? []), '127.0.0.1'] },
    dataDir: `${c.dataDir ?? path.join(base, '.hookrelay')}-${name}`,
  }));
  const proc = spawn(BIN, ['serve', '--config', file], { stdio: ['ignore', 'inherit', 'inherit'] });
  started.push(proc);
  const exited = new Promise((r) => proc.on('exit', (code) => r(code)));
  const deadline = Date.now() + 40000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`instance ${name} exited ${proc.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200) break;
    } catch { /* not yet */ }
    if (Date.now() > deadline) { proc.kill('SIGKILL'); throw new Error(`instance ${name} did not become healthy`); }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { name, port, proc, exited, served: 0 };
}

// Hop-by-hop headers (RFC 9110 §7.6.1) belong to each connection, not to the message.
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);
function endToEnd(headers) {
  const out = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP.has(k)) out[k] = v;
  return out;
}

async function serve() {
  // One after the other: the first becomes the heartbeat leader, like a rolling start.
  const instances = [await startInstance('a'), await startInstance('b')];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  let next = 0;
  const proxy = http.createServer((req, res) => {
    const to = instances[next++ % instances.length];
    to.served++;
    const headers = endToEnd(req.headers);
    const peer = req.socket.remoteAddress ?? '';
    headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${headers['x-forwarded-for']}, ${peer}` : peer;
    const up = http.request({ host: '127.0.0.1', port: to.port, method: req.method, path: req.url, headers, agent }, (ur) => {
      res.writeHead(ur.statusCode, endToEnd(ur.headers));
      ur.pipe(res);
    });
    // An instance that answers early (413) and closes may reset the rest of the upload: once
    // its answer is under way, that is not an error of the exchange.
    up.on('error', () => {
      if (!res.headersSent) { res.writeHead(502, { 'content-type': 'application/json' }); res.end('{"ok":false,"error":{"code":"bad_gateway"}}'); }
      else res.destroy();
    });
    req.pipe(up);
  });
  const { port } = original.server;
  await new Promise((r, j) => { proxy.once('error', j); proxy.listen(port, original.server.host ?? '127.0.0.1', r); });
  console.log(`two instances on ${url.replace(/:[^:@/]*@/, ':***@')}: a on ${instances[0].port}, b on ${instances[1].port}, proxy on ${port}`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const i of instances) i.proc.kill('SIGTERM');
    const codes = await Promise.all(instances.map((i) => i.exited));
    proxy.close();
    proxy.closeAllConnections();
    agent.destroy();
    const counts = Object.fromEntries(instances.map((i) => [i.name, i.served]));
    console.log(`requests served: ${JSON.stringify(counts)}`);
    if (process.env.HOOKRELAY_KIT_COUNTS) fs.writeFileSync(process.env.HOOKRELAY_KIT_COUNTS, JSON.stringify(counts));
    process.exit(codes.every((c) => c === 0) ? 0 : 1);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  for (const i of instances) i.exited.then((code) => { if (!stopping) { console.error(`instance ${i.name} exited ${code}`); stop(); } });
}

if (args[0] === 'serve') {
  serve().catch((e) => {
    console.error(e.message);
    for (const p of started) p.kill('SIGKILL');
    process.exit(1);
  });
}
else pass(writeConfig('hookrelay-pg.json'));
