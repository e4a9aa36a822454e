import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ADMIN_TOKEN, BIN, ROOT, call, freePort, startGateway, tmpDir, type Gateway } from '../../support/gateway.js';

// The bin runs the build of src/ in dist/ (scripts/build.mjs); tsx is for users' TypeScript
// transforms only, in the transform workers.

/** Runs `bin args`; exit code and output. */
function run(bin: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(bin, args, { cwd: ROOT, timeout: 30000, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** A copy of the bin in a package folder of its own, with no build. */
function unbuilt(): { root: string; bin: string } {
  const root = tmpDir();
  fs.mkdirSync(path.join(root, 'src'));
  fs.copyFileSync(path.join(ROOT, 'src', 'bin.mjs'), path.join(root, 'src', 'bin.mjs'));
  return { root, bin: path.join(root, 'src', 'bin.mjs') };
}

/**
 * Preloaded into the gateway (NODE_OPTIONS, which its threads and child processes inherit):
 * fails any require of tsx outside a transform worker, the one place that may install it.
 */
function tsxTrap(dir: string): string {
  const file = path.join(dir, 'no-tsx.cjs');
  fs.writeFileSync(file, `
const Module = require('node:module');
if (!/transform-worker\\.mjs$/.test(process.argv[1] ?? '')) {
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    if (/^tsx(\\/|$)/.test(request)) throw new Error('tsx required outside a transform worker: ' + request);
    return resolve.call(this, request, ...rest);
  };
}
`);
  return file;
}

describe('cli: the bin runs the build (dist/), tsx only for TypeScript transforms', function () {
  this.timeout(60000);
  let gw: Gateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it('refuses to run without a build, saying what to run', async () => {
    const { root, bin } = unbuilt();
    const r = await run(bin, ['--help']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.equal(`hookrelay: the build (dist/) is missing: run \`npm run build\` in ${root}\n`);
  });

  it('serve: a TypeScript transform loads in its worker, while the gateway and its writer thread never load tsx', async () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'transforms'));
    fs.writeFileSync(path.join(dir, 'transforms', 'typed.ts'), 'export default (input: { payload: { x: number } }): { text: string } => ({ text: `typed ${input.payload.x}` });\n');
    const config = {
      server: { port: await freePort() },
      hooks: { token: 'build-token', transformsDir: './transforms', mappings: [{ id: 'typed', match: { path: 'typed' }, action: 'wake', textTemplate: 'unused', transform: { module: 'typed.ts' } }] },
    };
    gw = await startGateway(config, { dir, env: { NODE_OPTIONS: `--require ${tsxTrap(dir)}` } });
    const r = await call(`${gw.hooks}/typed`, { token: 'build-token', json: { x: 7 } });
    expect(r.status, r.text).to.equal(200);
    const events = await call(`${gw.hooks}/events`, { token: ADMIN_TOKEN });
    expect(events.data.events.map((e: { text: string }) => e.text)).to.deep.equal(['typed 7']);
    expect(gw.output()).not.to.include('tsx required');
  });

  it('test: the dry run loads a TypeScript transform, without tsx in the CLI', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'hookrelay.json');
    fs.writeFileSync(file, JSON.stringify({
      hooks: { token: 'build-token', transformsDir: path.join(ROOT, 'spec/fixtures/transforms'), mappings: [{ id: 'echo', match: { path: 'echo' }, action: 'agent', transform: { module: 'echo.ts' } }] },
    }));
    fs.writeFileSync(path.join(dir, 'p.json'), '{"x":"hi"}');
    const r = await run(BIN, ['test', 'echo', '--payload', path.join(dir, 'p.json'), '--config', file], { NODE_OPTIONS: `--require ${tsxTrap(dir)}` });
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.include({ mapping: 'echo', action: 'agent', name: 'Echo' });
    expect(JSON.parse(r.stdout).message).to.match(/^echo hi @ echo /);
  });

  it("with --enable-source-maps, the build's stack traces name src/*.ts lines", async () => {
    // dist/config/shape.js is an entry of the build (the build loads it itself); its code is in a chunk.
    const script = `const { compileShape } = await import(${JSON.stringify(path.join(ROOT, 'dist/config/shape.js'))});
      try { compileShape({ compile() { throw new Error('boom'); } }); } catch (err) { console.log(err.stack); }`;
    const stack = (flags: string[]) => new Promise<string>((resolve, reject) => execFile(process.execPath, [...flags, '--input-type=module', '-e', script], { cwd: ROOT },
      (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout))));
    expect(await stack(['--enable-source-maps'])).to.match(/at compileShape \(.*\/src\/config\/shape\.ts:\d+:\d+\)/);
    expect(await stack([])).to.match(/at compileShape \(.*\/dist\/chunks\/[^)]*\.js:\d+:\d+\)/);
  });
});
