import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { BIN, freePort, tmpDir, until } from '../../support/gateway.js';

/**
 * `npm start` picks one of four config files, so start-up names the one it loaded; "ready"
 * follows a /healthz answer. stdout and stderr go to one file here, so the order of the lines
 * is the order they were written in.
 */
describe('serve: says which config it loaded, and "ready" only once /healthz answers', function () {
  this.timeout(60000);

  const yaml = (port: number, name: string) =>
    `server: { host: 127.0.0.1, port: ${port} }\ndataDir: ./data-${name}\nhooks: { token: tok-${name}-0123456789 }\nheartbeat: { everySeconds: 3600 }\n`;

  /** Starts serve, waits for the ready line, stops it; its whole output in write order. */
  async function startedOutput(cwd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
    const out = path.join(cwd, `out-${Date.now()}.log`);
    const fd = fs.openSync(out, 'w');
    const proc = spawn(BIN, ['serve', ...args], { cwd, stdio: ['ignore', fd, fd], env: { ...process.env, HOOKRELAY_CONFIG: '', ...env } });
    fs.closeSync(fd);
    const exited = new Promise<void>((r) => proc.on('exit', () => r()));
    const read = () => fs.readFileSync(out, 'utf8');
    try {
      await until(() => `the ready line:\n${read()}`, () => {
        if (proc.exitCode !== null) throw new Error(`serve exited ${proc.exitCode}:\n${read()}`);
        return read().includes('hookrelay listening on');
      });
    } finally {
      proc.kill('SIGTERM');
      await exited;
    }
    return read();
  }

  it('names the file and why it was chosen: --config, $HOOKRELAY_CONFIG, ./hookrelay.yaml, the fallback', async () => {
    const dir = tmpDir();
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    fs.writeFileSync(path.join(dir, 'flag.yaml'), yaml(ports[0]!, 'flag'));
    fs.writeFileSync(path.join(dir, 'env.yaml'), yaml(ports[1]!, 'env'));
    fs.writeFileSync(path.join(dir, 'example.yaml'), yaml(ports[2]!, 'example'));
    const line = (text: string) => text.split('\n').find((l) => l.startsWith('hookrelay: config '));

    expect(line(await startedOutput(dir, ['--config', 'flag.yaml']))).to.equal(`hookrelay: config ${path.join(dir, 'flag.yaml')} (--config)`);
    expect(line(await startedOutput(dir, ['--fallback-config', 'example.yaml'], { HOOKRELAY_CONFIG: 'env.yaml' }))).to.equal(`hookrelay: config ${path.join(dir, 'env.yaml')} ($HOOKRELAY_CONFIG)`);
    expect(line(await startedOutput(dir, ['--fallback-config', 'example.yaml']))).to.equal(
      `hookrelay: config ${path.join(dir, 'example.yaml')} (the fallback: no --config, no $HOOKRELAY_CONFIG and no ./hookrelay.yaml)`);
    fs.renameSync(path.join(dir, 'flag.yaml'), path.join(dir, 'hookrelay.yaml'));
    expect(line(await startedOutput(dir, ['--fallback-config', 'example.yaml']))).to.equal(
      `hookrelay: config ${path.join(dir, 'hookrelay.yaml')} (the default: no --config and no $HOOKRELAY_CONFIG)`);
  });

  it('prints the ready line only after its own /healthz request was answered 200', async () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'hookrelay.yaml'), yaml(await freePort(), 'ready'));
    const lines = (await startedOutput(dir, [])).split('\n');
    expect(lines.some((l) => l.startsWith('hookrelay listening on')), lines.join('\n')).to.equal(true);
    // The log (stderr) is written asynchronously and the ready line (stdout) at once, so their
    // interleaving says nothing: the order is read within the log, where "listening" is the
    // ready line's own record, logged after the check as the line is printed.
    const ready = lines.findIndex((l) => l.includes('"msg":"listening"'));
    const answered = lines.findIndex((l) => l.includes('"path":"/healthz"') && l.includes('"status":200'));
    expect(answered, lines.join('\n')).to.be.greaterThan(-1);
    expect(answered, lines.join('\n')).to.be.lessThan(ready);
  });
});
