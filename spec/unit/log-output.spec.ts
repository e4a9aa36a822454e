import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT, tmpDir } from '../support/gateway.js';

/** A process that logs `n` lines through createLogger's stderr output, then ends as `how` says. */
function run(n: number, how: 'throw' | 'exit'): { status: number | null; lines: Record<string, any>[] } {
  const script = `
    const { createLogger } = await import('./src/log.ts');
    const log = createLogger('info');
    for (let i = 0; i < ${n}; i++) log.info({ i }, 'line');
    ${how === 'throw' ? "throw new Error('crash')" : 'process.exit(3)'};
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status, lines: r.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)) };
}

describe('log output: lines logged before the process ends are written', function () {
  this.timeout(30000);
  for (const how of ['throw', 'exit'] as const) {
    it(`${how === 'throw' ? 'an uncaught exception' : 'process.exit'}: every line, in order, none torn`, () => {
      const r = run(2000, how);
      expect(r.status).to.equal(how === 'throw' ? 1 : 3);
      expect(r.lines.map((l) => l.i)).to.deep.equal(Array.from({ length: 2000 }, (_, i) => i));
    });
  }
});

describe('log output: a stderr nobody reads', function () {
  this.timeout(30000);

  it('drops and counts the lines past log.bufferBytes, and a flush gives the rest up so the process ends', async () => {
    // stderr is a named pipe whose reader never reads: its 64 KiB fill, then the buffer.
    const fifo = path.join(tmpDir('hookrelay-log-unread-'), 'stderr.fifo');
    expect(spawnSync('mkfifo', [fifo]).status, 'mkfifo').to.equal(0);
    const readFd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    const writeFd = fs.openSync(fifo, 'w');
    const script = `
      const { createLogger, flushLog, logDropped } = await import('./src/log.ts');
      const log = createLogger('info', undefined, { bufferBytes: 65536 });
      for (let i = 0; i < 5000; i++) log.info({ i, pad: 'x'.repeat(200) }, 'line');
      await flushLog(log);
      process.stdout.write(String(logDropped(log)));
      process.exit(0);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', writeFd] });
    fs.closeSync(writeFd);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    const chunk = Buffer.alloc(1 << 17);
    const n = fs.readSync(readFd, chunk, 0, chunk.length, null);
    fs.closeSync(readFd);
    expect(code).to.equal(0);
    const dropped = Number(out);
    expect(dropped).to.be.greaterThan(0).and.below(5000);
    const text = chunk.toString('utf8', 0, n);
    const written = text.slice(0, text.lastIndexOf('\n')).split('\n').map((l) => JSON.parse(l).i as number);
    expect(written.length).to.be.greaterThan(0);
    expect(written, 'in order').to.deep.equal([...written].sort((a, b) => a - b));
  });
});
