import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { BIN, ROOT, freePort, startGateway, tmpDir, until, type Gateway } from '../../support/gateway.js';

/** Runs the bin; exit code and output. */
function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BIN, [...args], { cwd: ROOT, timeout: 30000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

// Check, serve and a refused reload name a TypeScript transform's syntax error by file (relative
// to hooks.transformsDir), line and column (from 1), with esbuild's own message.
const BROKEN = 'export default function (input: any) {\n  return { message: input.body.text +  };\n}\n';
const WHERE = 'hooks.mappings[0].transform.module: could not load sub/broken.ts: sub/broken.ts:2:40: Unexpected "}"';

describe('cli: a syntax error in a TypeScript transform names file, line and column', function () {
  this.timeout(60000);
  let gw: Gateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  function setup(port: number, broken: boolean): { dir: string; config: Record<string, unknown> } {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'transforms', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'transforms', 'sub', 'broken.ts'), broken ? BROKEN : 'export default () => ({ message: "ok" });\n');
    const config = {
      server: { port },
      hooks: { token: 'syntax-token', transformsDir: './transforms', mappings: [{ id: 't', match: { path: 't' }, action: 'agent', transform: { module: 'sub/broken.ts' } }] },
    };
    fs.writeFileSync(path.join(dir, 'hookrelay.json'), JSON.stringify(config));
    return { dir, config };
  }

  it('check and serve: exit 1 with the message, file, line and column', async () => {
    const { dir } = setup(await freePort(), true);
    const file = path.join(dir, 'hookrelay.json');
    const [check, serve] = await Promise.all([run(['check', '--config', file]), run(['serve', '--config', file])]);
    for (const r of [check, serve]) {
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include(WHERE);
      expect(r.stderr).not.to.include('Transform failed');
    }
  });

  it('a refused reload logs the same', async () => {
    const port = await freePort();
    const { dir, config } = setup(port, false);
    gw = await startGateway(config, { dir });
    fs.writeFileSync(path.join(dir, 'transforms', 'sub', 'broken.ts'), BROKEN);
    gw.proc.kill('SIGHUP');
    const g = gw;
    const line = await until(() => `the refusal:\n${g.output().slice(-2000)}`, () => g.output().split('\n').find((l) => l.includes('config reload refused')));
    expect(line).to.include(WHERE.replace(/"/g, '\\"'));
  });
});
