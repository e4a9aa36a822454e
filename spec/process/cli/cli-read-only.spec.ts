import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { BIN, ROOT, call, freePort, startGateway, tmpDir } from '../../support/gateway.js';

/** Runs the bin; stdout as raw bytes (what reaches the terminal). */
function run(args: string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BIN, [...args], { cwd: ROOT, encoding: 'buffer', timeout: 30000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr: stderr.toString('utf8') });
    });
  });
}

/** The CLI's `main` in this process; stdout as the bytes the bin would write. */
async function runInProcess(args: string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  const r = await runCli(args);
  return { ...r, stdout: Buffer.from(r.stdout, 'utf8') };
}

const RAW = ['\x1b', '\r', '\u202e', '\u2028', '\x9b'];

/** Fails when any terminal-controlling character is in the output's bytes. */
function expectNoRawControls(out: Buffer, what: string): void {
  const text = out.toString('utf8');
  for (const ch of RAW) expect(text.includes(ch), `${what} holds a raw U+${ch.charCodeAt(0).toString(16).padStart(4, '0')}`).to.equal(false);
  expect(text.replace(/\n/g, '')).to.not.match(/[\p{Cc}]/u);
}

describe('cli: events and runs only read the store', function () {
  this.timeout(60000);

  it('on a folder without a store: exit 1 saying so, and nothing is created', async () => {
    const dir = tmpDir();
    const dataDir = path.join(dir, 'absent', 'data');
    const config = path.join(dir, 'hookrelay.json');
    fs.writeFileSync(config, JSON.stringify({ dataDir, hooks: { token: 't' } }));
    const cmds = [['events'], ['runs'], ['runs', 'some-id']];
    const results = await Promise.all(cmds.map((cmd) => run([...cmd, '--config', config])));
    results.forEach((r, i) => {
      expect(r.code, cmds[i]!.join(' ')).to.equal(1);
      expect(r.stderr).to.include(`no store yet at ${dataDir}`).and.include('hookrelay serve');
    });
    expect(fs.existsSync(path.join(dir, 'absent')), 'the folder stays absent').to.equal(false);
  });

  it('on a store of an older schema version: exit 1 asking to run serve once', async () => {
    const dir = tmpDir();
    const dataDir = path.join(dir, 'data');
    fs.mkdirSync(dataDir);
    const db = new Database(path.join(dataDir, 'hookrelay.db'));
    db.pragma('user_version = 1');
    db.close();
    const config = path.join(dir, 'hookrelay.json');
    fs.writeFileSync(config, JSON.stringify({ dataDir, hooks: { token: 't' } }));
    const r = await run(['events', '--config', config]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include('schema v1').and.include('run `hookrelay serve` once to migrate it');
  });

  it('work beside a running server (no lock) and escape stored control characters', async () => {
    const dir = tmpDir();
    const port = await freePort();
    const config = {
      server: { port }, dataDir: path.join(dir, 'data'), hooks: { token: 'tok-ro' },
      agent: { baseUrl: 'http://127.0.0.1:9/v1', timeoutSeconds: 1 }, heartbeat: { everySeconds: 3600 },
    };
    const gw = await startGateway(config, { dir });
    try {
      const text = 'red \x1b[31mALERT\x1b[0m and\rback, \u202eevil\u202c, sep\u2028x, csi\x9b2J';
      const w = await call(`${gw.hooks}/wake`, { token: 'tok-ro', json: { text, mode: 'next-heartbeat' } });
      expect(w.status).to.equal(200);
      const name = 'job \x1b]0;pwned\x07 \u202etxt.exe';
      const a = await call(`${gw.hooks}/agent`, { token: 'tok-ro', json: { message: 'hi', name, deliver: false, wakeMode: 'next-heartbeat' } });
      expect(a.status).to.equal(202);

      const [human, json, runs, runsJson, one] = await Promise.all([
        run(['events', '--config', gw.configFile]),
        runInProcess(['events', '--json', '--config', gw.configFile]),
        runInProcess(['runs', '--config', gw.configFile]),
        runInProcess(['runs', '--json', '--config', gw.configFile]),
        runInProcess(['runs', a.data.runId, '--config', gw.configFile]),
      ]);
      expect(human.code, human.stderr).to.equal(0);
      expectNoRawControls(human.stdout, 'events');
      expect(human.stdout.toString()).to.include('red \\x1b[31mALERT\\x1b[0m and\\rback, \\u202eevil\\u202c, sep\\u2028x, csi\\x9b2J');

      expect(json.code, json.stderr).to.equal(0);
      expectNoRawControls(json.stdout, 'events --json');
      const lines = json.stdout.toString().trim().split('\n');
      expect(lines.map((l) => JSON.parse(l).text)).to.include(text); // still valid JSON, same text
      expect(json.stdout.toString()).to.include('\\u202e').and.include('\\u2028').and.include('\\u009b');

      expect(runs.code, runs.stderr).to.equal(0);
      expectNoRawControls(runs.stdout, 'runs');
      expect(runs.stdout.toString()).to.include(a.data.runId).and.include(' job \\x1b]0;pwned\\x07 \\u202etxt.exe ');

      expect(runsJson.code, runsJson.stderr).to.equal(0);
      expectNoRawControls(runsJson.stdout, 'runs --json');
      expect(runsJson.stdout.toString().trim().split('\n').map((l) => JSON.parse(l).name)).to.include(name);

      expect(one.code, one.stderr).to.equal(0);
      expectNoRawControls(one.stdout, 'runs ID');
      expect(JSON.parse(one.stdout.toString()).name).to.equal(name);

      // The server kept its store all along: it still accepts.
      expect((await call(`${gw.hooks}/wake`, { token: 'tok-ro', json: { text: 'after', mode: 'next-heartbeat' } })).status).to.equal(200);
    } finally {
      await gw.stop();
    }
  });
});
