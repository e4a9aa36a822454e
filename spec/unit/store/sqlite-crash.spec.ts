import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../support/silent-logger.js';
import { SqliteStore } from '../../../src/store/sqlite.js';
import { STORE_SPEC_OPTIONS } from '../../support/store-options.js';

const STORE_URL = new URL('../../../src/store/sqlite.ts', import.meta.url).href;
const SILENT_LOGGER_URL = new URL('../../support/silent-logger.ts', import.meta.url).href;

/**
 * A child process that opens the store and accepts (event, run) pairs in waves of 20
 * concurrent calls, forever, printing `ack <n>` as each call resolves. The parent kills
 * it with SIGKILL mid-stream: whatever was acknowledged must be there on reopen.
 */
const WRITER = `
const { SqliteStore } = await import(process.env.STORE_URL);
const { silentLogger } = await import(process.env.SILENT_LOGGER_URL);
const store = await SqliteStore.open({ ...JSON.parse(process.env.STORE_OPTIONS), dataDir: process.env.DATA_DIR, durability: process.env.DURABILITY, log: silentLogger });
const at = new Date().toISOString();
let n = 0;
for (;;) {
  await Promise.all(Array.from({ length: 20 }, async () => {
    const i = n++;
    await store.accept(
      [{ id: 'e' + i, kind: 'wake', text: 'text ' + i, source: 'wake', at, unsafe: false }],
      [{ runId: 'r' + i, sessionKey: 'hook:' + i, message: 'm', wakeMode: 'now', deliver: false, provider: 'last', source: 'agent', unsafe: false, createdAt: at }],
    );
    process.stdout.write('ack ' + i + '\\n');
  }));
}
`;

/** Opens a store, writes once, and neither closes it nor exits: the process must end by itself. */
const FORGETFUL = `
const { SqliteStore } = await import(process.env.STORE_URL);
const { silentLogger } = await import(process.env.SILENT_LOGGER_URL);
const store = await SqliteStore.open({ ...JSON.parse(process.env.STORE_OPTIONS), dataDir: process.env.DATA_DIR, durability: process.env.DURABILITY, log: silentLogger });
await store.accept([{ id: 'only', kind: 'wake', text: 't', source: 'wake', at: new Date().toISOString(), unsafe: false }], []);
process.stdout.write('ack\\n');
`;

function child(code: string, dataDir: string, durability: string) {
  return spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    env: { ...process.env, STORE_URL, SILENT_LOGGER_URL, DATA_DIR: dataDir, DURABILITY: durability, STORE_OPTIONS: JSON.stringify(STORE_SPEC_OPTIONS) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('store/sqlite: durability across a SIGKILL', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookrelay-crash-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const durability of ['fsync', 'os'] as const) {
    it(`keeps every acknowledged accept when the process is SIGKILLed mid-stream (${durability})`, async () => {
      const proc = child(WRITER, dir, durability);
      const acked: number[] = [];
      let stderr = '';
      proc.stderr.on('data', (d) => (stderr += d));
      const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.on('exit', (_code, signal) => resolve(signal)));
      let buf = '';
      await new Promise<void>((resolve, reject) => {
        proc.on('exit', () => reject(new Error(`writer exited before the kill: ${stderr}`)));
        proc.stdout.on('data', (d: Buffer) => {
          buf += d.toString();
          const lines = buf.split('\n');
          buf = lines.pop()!;
          for (const l of lines) acked.push(Number(l.slice(4)));
          if (acked.length >= 600 && !proc.killed) {
            proc.kill('SIGKILL'); // acks arriving after this line were never read: not counted
            resolve();
          }
        });
      });
      const counted = acked.slice();
      expect(await exited).to.equal('SIGKILL');

      const store = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability, log: silentLogger });
      try {
        const events = new Set((await store.listEvents(0, 1_000_000)).map((e) => e.id));
        const missing = counted.filter((i) => !events.has(`e${i}`));
        expect(missing, 'acknowledged events lost').to.deep.equal([]);
        for (const i of counted.slice(-50)) expect(await store.getRun(`r${i}`), `run r${i}`).to.include({ status: 'queued' });
        // The process was killed while writing: the store opens cleanly and takes new writes.
        await store.accept([{ id: 'after', kind: 'wake', text: 't', source: 'wake', at: new Date().toISOString(), unsafe: false }], []);
      } finally {
        await store.close();
      }
    });
  }

  it('lets a process that never closes its store exit once its writes are done', async () => {
    const proc = child(FORGETFUL, dir, 'fsync');
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(new Error('the process did not exit: the idle writer thread kept it alive'));
      }, 15_000);
      proc.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(code).to.equal(0);
    expect(out).to.equal('ack\n');
    const store = await SqliteStore.open({ ...STORE_SPEC_OPTIONS, dataDir: dir, durability: 'fsync', log: silentLogger });
    expect((await store.listEvents(0, 10)).map((e) => e.id)).to.deep.equal(['only']);
    await store.close();
  });
});
