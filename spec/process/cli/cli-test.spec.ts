import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { BIN, ROOT, tmpDir } from '../../support/gateway.js';
import { emailBatch } from '../../support/email-batch.js';

/** The bin itself: for the dry runs whose load is the point. */
function spawnRun(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BIN, [...args], { cwd: ROOT, timeout: 30000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('cli: hookrelay test (the mapping author\'s dry run)', function () {
  this.timeout(60000);
  const dir = tmpDir();
  const file = path.join(dir, 'hookrelay.json');
  fs.writeFileSync(file, JSON.stringify({ dataDir: path.join(dir, 'data'), hooks: { token: 't', presets: ['email'] } }));
  const write = (name: string, text: string) => { const p = path.join(dir, name); fs.writeFileSync(p, text); return p; };

  // CONTRACT.md §7: "a 200-message batch is taken whole, every time, under load". Four dry runs
  // at once on this machine's cores are the load.
  it('a 200-message e-mail batch is taken whole, every time: four dry runs at once', async () => {
    const batch = write('batch.json', JSON.stringify(emailBatch(200, 'cli')));
    const runs = await Promise.all([1, 2, 3, 4].map(() => spawnRun(['test', 'email', '--payload', batch, '--config', file])));
    for (const r of runs) {
      expect(r.code, r.stderr).to.equal(0);
      const out = JSON.parse(r.stdout);
      expect(out).to.include({ mapping: 'email', status: 202 });
      expect(out.actions).to.have.length(200);
    }
  });
});
