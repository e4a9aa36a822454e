import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { ROOT } from '../support/gateway.js';

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
