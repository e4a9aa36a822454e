/**
 * What a large body costs (docs/performance.md "Large bodies"): the gateway's CPU per request,
 * read from /proc, for JSON bodies of a few bytes up to `hooks.maxBodyBytes` (256 KiB) through
 * a mapping with one Handlebars template, at a few requests in flight.
 *
 *   npx tsx spec/bench/large-body.ts [--requests 400] [--cpu-prof DIR]
 *
 * With --cpu-prof, the gateway writes a V8 CPU profile of its main thread to DIR on exit.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BIN, ROOT, freePort, sleep, tmpDir } from '../support/gateway.js';
import { cpuMs } from './proc.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '400' }, 'cpu-prof': { type: 'string' } } });
const REQUESTS = Number(values.requests);
const IN_FLIGHT = 16;
const SIZES_KIB = [0, 16, 32, 64, 128, 256];
const TOKEN = 'large-body-bench-token-0123456789';

/** A CI run's payload: a few fields the template reads, and log lines up to `bytes`. */
function payload(bytes: number): string {
  const head = { build: { id: 42, status: 'failed' }, repository: { full_name: 'acme/api' } };
  const lines: Record<string, unknown>[] = [];
  for (let i = 0, size = JSON.stringify(head).length + 10; size < bytes - 200; i++) {
    lines.push({ n: i, at: '2026-11-29T12:00:00Z', level: i % 5 ? 'info' : 'warn', msg: `step ${i}: compiled module ${i % 97} in ${i % 13} ms` });
    size += JSON.stringify(lines[i]).length + 1;
  }
  return JSON.stringify(lines.length === 0 ? head : { ...head, lines });
}

async function main(): Promise<void> {
  const dir = tmpDir('hookrelay-large-body-');
  const port = await freePort();
  const config = {
    server: { host: '127.0.0.1', port },
    dataDir: path.join(dir, 'data'),
    hooks: { token: TOKEN, mappings: [{ id: 'ci', match: { path: 'ci' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'Build {{build.id}} of {{repository.full_name}}: {{build.status}}' }] },
    agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
    heartbeat: { everySeconds: 3600 },
  };
  fs.writeFileSync(path.join(dir, 'hookrelay.json'), JSON.stringify(config));
  const flags = /^#!.*\bnode\b(.*)$/m.exec(fs.readFileSync(BIN, 'utf8').split('\n')[0]!)?.[1]!.trim().split(/\s+/) ?? [];
  const prof = values['cpu-prof'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`];
  const proc = spawn(process.execPath, [...prof, ...flags, BIN, 'serve', '--config', path.join(dir, 'hookrelay.json')], { cwd: ROOT, stdio: ['ignore', 'ignore', process.env.LARGE_BODY_LOG ? fs.openSync(process.env.LARGE_BODY_LOG, 'w') : 'ignore'] });
  const exited = new Promise((r) => proc.on('exit', r));
  try {
    for (let ready = false; !ready; await sleep(20)) {
      if (proc.exitCode !== null) throw new Error('the gateway did not start');
      ready = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    }
    const url = `http://127.0.0.1:${port}/hooks/ci`;
    const send = async (body: string, n: number) => {
      const post = () => fetch(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body });
      const one = async () => {
        // A kept-alive connection the gateway closed as idle just as it was reused (a race on a
        // busy machine) is counted and the request sent again.
        const r = await post().catch(() => (closed++, post()));
        if (!r.ok) throw new Error(`${r.status} ${await r.text()}`);
        await r.arrayBuffer();
      };
      let left = n;
      await Promise.all(Array.from({ length: IN_FLIGHT }, async () => { while (left-- > 0) await one(); }));
    };
    let small = 0;
    let closed = 0;
    // Made before any is sent: a pause between sizes would leave kept-alive connections idle.
    const bodies = SIZES_KIB.map((kib) => [kib, payload(kib * 1024)] as const);
    for (const [kib, body] of bodies) {
      await send(body, Math.max(20, REQUESTS / 10));
      const before = cpuMs(proc.pid!);
      await send(body, REQUESTS);
      const us = ((cpuMs(proc.pid!) - before) * 1000) / REQUESTS;
      if (kib === 0) small = us;
      const extra = kib === 0 ? '' : `, ${((us - small) / kib).toFixed(1)} µs per KiB over the small one (${(us / small).toFixed(1)}×)`;
      console.log(`${String(Buffer.byteLength(body)).padStart(7)} bytes: ${Math.round(us)} µs CPU per request${extra}`);
    }
    if (closed > 0) console.log(`${closed} requests sent again: their kept-alive connection had just closed`);
  } finally {
    proc.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
