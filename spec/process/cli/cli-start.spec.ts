import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { BIN, ROOT, freePort, tmpDir, until } from '../../support/gateway.js';

/**
 * How `npm start` and `serve` find their config and where they listen (README "Quick start"):
 * `$HOOKRELAY_CONFIG`, else `./hookrelay.yaml` when it exists, else the example; `--port` and
 * `--host` win over the file. Each case starts the real bin in a folder of its own.
 */
describe('serve: config lookup and --host/--port', function () {
  this.timeout(30000);

  const yaml = (port: number, marker: string) =>
    `server: { host: 127.0.0.1, port: ${port} }\ndataDir: ./data-${marker}\nhooks: { token: tok-${marker}-0123456789 }\nheartbeat: { everySeconds: 3600 }\n`;

  interface Started { port: number; stop(): Promise<void>; output(): string }

  /** Starts `serve ARGS` in `cwd` and resolves once one of `ports` answers /healthz. */
  async function serve(cwd: string, args: string[], ports: number[], env: Record<string, string> = {}): Promise<Started> {
    const proc = spawn(BIN, ['serve', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOOKRELAY_CONFIG: '', ...env } });
    let log = '';
    proc.stdout!.on('data', (d) => { log += d; });
    proc.stderr!.on('data', (d) => { log += d; });
    const exited = new Promise<void>((r) => proc.on('exit', () => r()));
    const port = await until(() => `serve to become healthy on one of ${ports.join(', ')}:\n${log}`, async () => {
      if (proc.exitCode !== null) throw new Error(`serve exited ${proc.exitCode}:\n${log}`);
      for (const port of ports) {
        if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) return port;
      }
      return undefined;
    }, 20000).catch((err) => {
      proc.kill('SIGKILL');
      throw err;
    });
    return { port, output: () => log, stop: async () => { proc.kill('SIGTERM'); await exited; } };
  }

  /** The token the answering server takes tells which config file it serves. */
  async function tokenAccepted(port: number, token: string): Promise<boolean> {
    const r = await fetch(`http://127.0.0.1:${port}/hooks/wake`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{"text":"which config?","mode":"next-heartbeat"}' });
    return r.status === 200;
  }

  it('npm start passes the example as the fallback config', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.scripts.start).to.match(/ serve --fallback-config hookrelay\.example\.yaml$/);
  });

  it('serves ./hookrelay.yaml over the fallback when it exists, the fallback when it does not', async () => {
    const dir = tmpDir();
    const [own, example] = [await freePort(), await freePort()];
    fs.writeFileSync(path.join(dir, 'example.yaml'), yaml(example, 'example'));

    let s = await serve(dir, ['--fallback-config', 'example.yaml'], [own, example]);
    expect(s.port).to.equal(example);
    expect(await tokenAccepted(example, 'tok-example-0123456789')).to.equal(true);
    await s.stop();

    fs.writeFileSync(path.join(dir, 'hookrelay.yaml'), yaml(own, 'own'));
    s = await serve(dir, ['--fallback-config', 'example.yaml'], [own, example]);
    expect(s.port).to.equal(own);
    expect(await tokenAccepted(own, 'tok-own-0123456789')).to.equal(true);
    await s.stop();
  });

  it('$HOOKRELAY_CONFIG wins over ./hookrelay.yaml and the fallback', async () => {
    const dir = tmpDir();
    const [own, env, example] = [await freePort(), await freePort(), await freePort()];
    fs.writeFileSync(path.join(dir, 'hookrelay.yaml'), yaml(own, 'own'));
    fs.writeFileSync(path.join(dir, 'example.yaml'), yaml(example, 'example'));
    fs.writeFileSync(path.join(dir, 'env.yaml'), yaml(env, 'env'));
    const s = await serve(dir, ['--fallback-config', 'example.yaml'], [own, env, example], { HOOKRELAY_CONFIG: 'env.yaml' });
    expect(s.port).to.equal(env);
    await s.stop();
  });

  it('--port and --host override the file', async () => {
    const dir = tmpDir();
    const [inFile, given] = [await freePort(), await freePort()];
    fs.writeFileSync(path.join(dir, 'hookrelay.yaml'), yaml(inFile, 'own'));
    const s = await serve(dir, ['--port', String(given), '--host', '127.0.0.1'], [inFile, given]);
    expect(s.port).to.equal(given);
    expect(await fetch(`http://127.0.0.1:${inFile}/healthz`).then(() => 'answered', () => 'refused')).to.equal('refused');
    await s.stop();
  });

  /** Runs `serve ARGS` in `dir` on a config without a token, until it exits. */
  const runIn = (dir: string, args: string[]) => new Promise<{ code: number | null; stderr: string }>((resolve) => {
    fs.writeFileSync(path.join(dir, 'hookrelay.yaml'), 'server: { port: 0 }\ndataDir: ./data\n');
    const p = spawn(BIN, ['serve', ...args], { cwd: dir, env: { ...process.env, HOOKRELAY_CONFIG: '' } });
    let stderr = '';
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('exit', (code) => resolve({ code, stderr }));
  });

  it('a bad --port names the option', async () => {
    const badPort = await runIn(tmpDir(), ['--port', '80x']);
    expect(badPort.code).to.equal(1);
    expect(badPort.stderr).to.match(/--port.*must be a port number/);
  });

  it('--host on a public address still needs a configured token', async () => {
    const dir = tmpDir();
    const publicHost = await runIn(dir, ['--host', '0.0.0.0']);
    expect(publicHost.code).to.equal(1);
    expect(publicHost.stderr).to.match(/token/i);
    expect(fs.existsSync(path.join(dir, 'data', 'token'))).to.equal(false);
  });
});
