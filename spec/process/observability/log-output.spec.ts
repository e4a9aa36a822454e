import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ADMIN_TOKEN, BIN, ROOT, freePort, tmpDir, until } from '../../support/gateway.js';

const TOKEN = 'log-output-token-0123456789';
const BUFFER = 65536;

/**
 * `hookrelay serve` whose stderr is a named pipe (64 KiB in the kernel) that this spec reads
 * only when told to: a log reader that stops draining, like a stalled journald.
 */
interface Piped {
  proc: ChildProcess;
  base: string;
  exited: Promise<number | null>;
  /** Everything read from the pipe so far. */
  text(): string;
  /** Start or stop draining the pipe. */
  reading(on: boolean): void;
  /** Fills what is left of the pipe's kernel buffer (with JSON lines of our own). */
  fillPipe(): void;
  /** The stderr lines read so far, parsed (the filler lines left out). */
  lines(): Record<string, any>[];
}

async function startPiped(): Promise<Piped> {
  const dir = tmpDir('hookrelay-log-output-');
  const fifo = path.join(dir, 'stderr.fifo');
  expect(spawnSync('mkfifo', [fifo]).status, 'mkfifo').to.equal(0);
  const readFd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  const writeFd = fs.openSync(fifo, 'w');
  const fillFd = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  const port = await freePort();
  const config = {
    server: { host: '127.0.0.1', port, adminToken: ADMIN_TOKEN },
    dataDir: path.join(dir, 'data'),
    hooks: { token: TOKEN },
    agent: { baseUrl: 'http://127.0.0.1:9/v1' },
    heartbeat: { everySeconds: 3600 },
    log: { level: 'info', bufferBytes: BUFFER },
  };
  fs.writeFileSync(path.join(dir, 'hookrelay.json'), JSON.stringify(config));
  const proc = spawn(BIN, ['serve', '--config', path.join(dir, 'hookrelay.json')], { cwd: ROOT, stdio: ['ignore', 'ignore', writeFd] });
  fs.closeSync(writeFd);
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  let text = '';
  const chunk = Buffer.alloc(65536);
  const drain = () => {
    for (;;) {
      let n = 0;
      try {
        n = fs.readSync(readFd, chunk, 0, chunk.length, null);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') return;
        throw e;
      }
      if (n === 0) return;
      text += chunk.toString('utf8', 0, n);
    }
  };
  let timer: NodeJS.Timeout | undefined = setInterval(drain, 5);
  proc.on('exit', () => {
    drain();
    fs.closeSync(fillFd);
  });
  const base = `http://127.0.0.1:${port}`;
  await until(() => `hookrelay to become healthy:\n${text.slice(-2000)}`, () => fetch(`${base}/healthz`).then((r) => r.ok, () => false), 20000);
  const filler = `${JSON.stringify({ filler: 'x'.repeat(1000) })}\n`;
  return {
    proc,
    base,
    exited,
    text: () => text,
    reading(on) {
      if (timer) clearInterval(timer);
      timer = on ? setInterval(drain, 5) : undefined;
      if (on) drain();
    },
    fillPipe() {
      for (;;) {
        try {
          fs.writeSync(fillFd, filler);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'EAGAIN') return;
          throw e;
        }
      }
    },
    // Complete lines only: a read may end inside a line the gateway is still writing.
    lines: () => text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter((l) => l && !l.includes('"filler"')).map((l) => JSON.parse(l)),
  };
}

const wake = (base: string, text: string) =>
  fetch(`${base}/hooks/wake`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text, mode: 'next-heartbeat' }),
    // A gateway held up by its log would never answer: fail in seconds, not at mocha's timeout.
    signal: AbortSignal.timeout(5000),
  });

async function droppedLines(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal: AbortSignal.timeout(5000) })).text();
  return Number(/^hookrelay_log_dropped_total (\d+)$/m.exec(text)?.[1]);
}

/** In batches of `at` at a time, `n` calls of `fn`. */
async function batches<T>(n: number, at: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += at) out.push(...(await Promise.all(Array.from({ length: Math.min(at, n - i) }, (_, k) => fn(i + k)))));
  return out;
}

describe('log output: a reader that stops reading stderr never holds up the gateway', function () {
  this.timeout(60000);
  let gw: Piped | undefined;
  afterEach(async () => {
    if (gw && gw.proc.exitCode === null) {
      gw.proc.kill('SIGKILL');
      await gw.exited;
    }
    gw = undefined;
  });

  it('with the pipe full, 200 /wake are answered at once; the lines past log.bufferBytes are dropped and counted in /metrics; once the reader resumes, a warning says how many', async () => {
    gw = await startPiped();
    const g = gw;
    g.reading(false);
    g.fillPipe();
    const t0 = performance.now();
    const answers = await batches(200, 20, (i) => wake(g.base, `full pipe ${i}`).then((r) => r.status));
    expect(answers.every((s) => s === 200), 'every /wake answered 200').to.equal(true);
    expect(performance.now() - t0, 'ms for 200 /wake').to.be.below(5000);

    // Past the buffer, lines are dropped — and the gateway still answers at once.
    const dropped = await until('log lines dropped', async () => {
      await batches(100, 20, () => fetch(`${g.base}/healthz`, { signal: AbortSignal.timeout(5000) }));
      const n = await droppedLines(g.base);
      return n > 0 ? n : undefined;
    }, 20000, 0);
    expect(dropped).to.be.greaterThan(0);
    expect(g.lines().some((l) => l.msg?.startsWith('log lines dropped')), 'no warning while the reader is stalled').to.equal(false);

    g.reading(true);
    const warning = await until('the drop warning', () => g.lines().find((l) => l.msg?.startsWith('log lines dropped')), 10000, 20);
    expect(warning).to.include({ level: 40 });
    // Every line dropped up to now is in the warning's count (this scrape's own line is not dropped).
    expect(warning.dropped).to.equal(await droppedLines(g.base));
    expect(warning.dropped).to.be.at.least(dropped);
    // What was written is whole JSON lines: the 200 accepted /wake among them, in order.
    const wakes = g.lines().filter((l) => l.msg === 'request' && l.route === 'wake');
    expect(wakes).to.have.length(200);
  });

  it('SIGTERM: every line already logged is written before the process exits', async () => {
    gw = await startPiped();
    const ids = await batches(100, 25, async (i) => (await wake(gw!.base, `before stop ${i}`)).headers.get('x-request-id'));
    gw.proc.kill('SIGTERM');
    expect(await gw.exited).to.equal(0);
    await until('the last line read', () => gw!.lines().some((l) => l.msg === 'stopped'), 5000, 20);
    const logged = new Set(gw.lines().filter((l) => l.msg === 'request').map((l) => l.reqId));
    expect(ids.filter((id) => !logged.has(id)), 'requests without their access line').to.deep.equal([]);
  });

  it('SIGTERM with the reader stalled: the gateway still stops (it gives the rest up after a second)', async () => {
    gw = await startPiped();
    const g = gw;
    g.reading(false);
    g.fillPipe();
    await batches(100, 20, (i) => wake(g.base, `stalled ${i}`));
    const t0 = performance.now();
    g.proc.kill('SIGTERM');
    expect(await g.exited).to.equal(0);
    expect(performance.now() - t0, 'ms to exit').to.be.below(10000);
  });
});
