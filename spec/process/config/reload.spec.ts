import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ADMIN_TOKEN, call, freePort, sleep, startGateway, tmpDir, until as pollUntil, type Gateway } from '../../support/gateway.js';

/** Hot reload (CONTRACT.md §8), over the real bin (spec/http/config/check.spec.ts: the one-pass check, §2). */
describe('reload: SIGHUP and file changes swap in a new config (CONTRACT.md §8)', function () {
  this.timeout(90000);
  let gw: Gateway | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  const TOKEN = 'reload-token';
  const wake = (pathName: string, text: string, extra: Record<string, unknown> = {}) => ({ id: pathName, match: { path: pathName }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: text, ...extra });
  const configOf = (port: number, mappings: unknown[], extra: Record<string, any> = {}) => ({
    server: { port },
    ...extra,
    hooks: { token: TOKEN, transformsDir: './transforms', mappings, ...extra.hooks },
  });
  const write = (file: string, config: unknown) => {
    // Write a copy and rename it over, as editors do: the watch on the directory sees it.
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(config, null, 2));
    fs.renameSync(`${file}.tmp`, file);
  };
  const count = (g: Gateway, line: string) => g.output().split(line).length - 1;
  /** The shared until, 15 s by default, failing with the gateway's last output. */
  const until = (what: string, ok: () => boolean | Promise<boolean>, ms = 15000) =>
    pollUntil(() => `${what}:\n${gw?.output().slice(-3000)}`, ok, ms);
  /** The text of the event a wake answer names. */
  async function eventText(g: Gateway, eventId: string): Promise<string | undefined> {
    const r = await call(`${g.hooks}/events?limit=500`, { token: ADMIN_TOKEN });
    return r.data.events.find((e: { id: string }) => e.id === eventId)?.text;
  }
  async function start(mappings: unknown[], files: Record<string, string> = {}, extra: Record<string, any> = {}): Promise<Gateway> {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'transforms'));
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, 'transforms', name), text);
    const port = await freePort();
    gw = await startGateway(configOf(port, mappings, extra), { dir });
    return gw;
  }

  it('SIGHUP with a valid change: the new mapping answers, the removed one is gone, a restart-only change is kept and named', async () => {
    const g = await start([wake('old', 'old text')], {}, { heartbeat: { everySeconds: 1800 } });
    expect((await call(`${g.hooks}/old`, { token: TOKEN, json: {} })).status).to.equal(200);
    const port = Number(new URL(g.base).port);
    write(g.configFile, configOf(port, [wake('new', 'new text')], { heartbeat: { everySeconds: 60 } }));
    g.proc.kill('SIGHUP');
    await until('the new mapping', async () => (await call(`${g.hooks}/new`, { token: TOKEN, json: {} })).status === 200);
    expect((await call(`${g.hooks}/old`, { token: TOKEN, json: {} })).data.error.code).to.equal('no_mapping');
    expect(await g.logged('config reloaded')).to.match(/"key":"heartbeat.everySeconds".*needs a restart; keeping the running value/);

    // SIGHUP alone (no file event) reloads too.
    await sleep(500);
    const before = count(g, 'config reloaded');
    g.proc.kill('SIGHUP');
    await until('a reload on SIGHUP', () => count(g, 'config reloaded') > before);
    expect(g.proc.exitCode).to.equal(null);
  });

  /** Refused reloads leave the old config running: one gateway for them all, each reading its own refusal. */
  describe('refused', () => {
    let g: Gateway;
    before(async () => {
      const dir = tmpDir();
      fs.mkdirSync(path.join(dir, 'transforms'));
      g = await startGateway(configOf(await freePort(), [wake('keep', 'kept')]), { dir, file: 'hookrelay.yaml' });
    });
    after(() => g.stop());
    /** Saves `text` as the config, sends SIGHUP and resolves with the refusal after it that names `reason`. */
    async function refusal(text: string, reason: string): Promise<string> {
      const seen = g.output().length;
      fs.writeFileSync(`${g.configFile}.tmp`, text);
      fs.renameSync(`${g.configFile}.tmp`, g.configFile);
      g.proc.kill('SIGHUP');
      const refused = () => g.output().slice(seen).split('\n').find((l) => l.includes('config reload refused') && l.includes(reason));
      return pollUntil(() => `the refusal:\n${g.output().slice(-3000)}`, refused, 15000);
    }
    async function keepsServing(): Promise<void> {
      const r = await call(`${g.hooks}/keep`, { token: TOKEN, json: {} });
      expect(r.status, r.text).to.equal(200);
      expect(await eventText(g, r.data.eventId)).to.equal('kept');
    }

    it('SIGHUP with an invalid config: the old one keeps serving; the log lists every problem with its path', async () => {
      const line = await refusal(JSON.stringify(configOf(Number(new URL(g.base).port), [
        { ...wake('a', 'a'), textTemplat: 'typo' },
        wake('b', '{{#if}}'),
        { ...wake('c', 'c'), transform: { module: 'missing.ts' } },
      ])), 'hooks.mappings[0].textTemplat');
      expect(line).to.include('hooks.mappings[0].textTemplat');
      expect(line).to.include('hooks.mappings[1].textTemplate');
      expect(line).to.include('hooks.mappings[2].transform.module');
      expect(line).to.not.include(TOKEN);
      await keepsServing();
      expect((await call(`${g.hooks}/b`, { token: TOKEN, json: {} })).status).to.equal(404);
    });

    // Read as "no settings", such a file would drop every mapping and the token.
    const notAMap: [string, string][] = [['an empty file', ''], ['a file of comments only', '# hooks: moved elsewhere\n# (nothing else)\n'], ['a YAML null (~)', '~\n']];
    for (const [what, text] of notAMap) {
      it(`SIGHUP with ${what}: refused with its reason logged; the old token and mappings keep answering`, async () => {
        const line = await refusal(text, 'the config file holds no settings');
        expect(line).to.include('the config file holds no settings');
        await sleep(500); // the file watch's own reload (debounced) is refused too
        expect(g.output()).not.to.include('config reloaded');
        await keepsServing();
        expect((await call(`${g.hooks}/keep`, { token: null, json: {} })).status).to.equal(401);
      });
    }
  });

  it('a transform module edited on disk: the new code answers, without SIGHUP', async () => {
    const g = await start([{ id: 't', match: { path: 't' }, action: 'wake', wakeMode: 'next-heartbeat', transform: { module: 'pick.ts' } }], {
      'pick.ts': 'export default () => ({ text: "v1" });\n',
    });
    const first = await call(`${g.hooks}/t`, { token: TOKEN, json: {} });
    expect(await eventText(g, first.data.eventId)).to.equal('v1');
    fs.writeFileSync(path.join(path.dirname(g.configFile), 'transforms', 'pick.ts'), 'export default () => ({ text: "v2" });\n');
    await until('the edited transform', async () => {
      const r = await call(`${g.hooks}/t`, { token: TOKEN, json: {} });
      return (await eventText(g, r.data.eventId)) === 'v2';
    });
    await until('the reload line', () => g.output().includes('config reloaded'));
  });

  it('a transform saved by rename with a syntax error is refused; fixed by another rename, the fix is picked up and logged', async () => {
    const g = await start([{ id: 't', match: { path: 't' }, action: 'wake', wakeMode: 'next-heartbeat', transform: { module: 'pick.ts' } }], {
      'pick.ts': 'export default () => ({ text: "v1" });\n',
    });
    const module = path.join(path.dirname(g.configFile), 'transforms', 'pick.ts');
    // As sed -i, vim and JetBrains' safe write save: a new file renamed over the old one.
    const save = (text: string) => {
      fs.writeFileSync(`${module}.tmp`, text);
      fs.renameSync(`${module}.tmp`, module);
    };
    save('export default () => ({ text: "v2" );\n');
    await until('the refusal', () => g.output().includes('config reload refused'));
    expect(count(g, 'config reloaded')).to.equal(0);
    save('export default () => ({ text: "v2" });\n');
    await until('the fix reloaded', () => g.output().includes('config reloaded'));
    const r = await call(`${g.hooks}/t`, { token: TOKEN, json: {} });
    expect(await eventText(g, r.data.eventId)).to.equal('v2');
  });

  it('a request in flight across a reload finishes on the config it started with (its transform pool outlives the swap)', async () => {
    const g = await start([{ id: 's', match: { path: 's' }, action: 'wake', wakeMode: 'next-heartbeat', transform: { module: 'slow.ts' } }], {
      'slow.ts': 'export default async () => { await new Promise((r) => setTimeout(r, 2000)); return { text: "old" }; };\n',
    });
    const inFlight = call(`${g.hooks}/s`, { token: TOKEN, json: {} });
    await sleep(500); // in its transform by now
    fs.writeFileSync(path.join(path.dirname(g.configFile), 'transforms', 'slow.ts'), 'export default () => ({ text: "new" });\n');
    g.proc.kill('SIGHUP');
    await until('the reload', () => g.output().includes('config reloaded'));
    const r = await inFlight;
    expect(r.status, r.text).to.equal(200);
    expect(await eventText(g, r.data.eventId)).to.equal('old');
    const after = await call(`${g.hooks}/s`, { token: TOKEN, json: {} });
    expect(await eventText(g, after.data.eventId)).to.equal('new');
  });

  it('a transform edited and reloaded many times does not pile up workers (old pools end, their processes with them)', async () => {
    const module = (n: number) => `export default () => ({ text: "v${n}" });\n`;
    const g = await start([{ id: 'm', match: { path: 'm' }, action: 'wake', wakeMode: 'next-heartbeat', transform: { module: 'm.ts' } }], { 'm.ts': module(0) });
    const pid = g.proc.pid!;
    const threads = () => Number(/^Threads:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
    // Transform workers are child processes (engine/transform-workers.ts).
    const workers = () => fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter((c) => c.trim() !== '').length;
    const file = path.join(path.dirname(g.configFile), 'transforms', 'm.ts');
    const reloadWith = async (n: number) => {
      const before = count(g, 'config reloaded');
      fs.writeFileSync(file, module(n));
      g.proc.kill('SIGHUP');
      await until(`reload ${n}`, () => count(g, 'config reloaded') > before);
      await sleep(250); // the watcher's reload of the same edit, if it comes, comes now
    };
    await reloadWith(1);
    await sleep(500);
    const baseline = { threads: threads(), workers: workers() };
    expect(baseline.workers).to.be.greaterThan(0);
    // Four more reloads: had any of them left its pool running, the count would show it.
    for (let n = 2; n <= 5; n++) await reloadWith(n);
    await until('old workers to end', () => threads() <= baseline.threads + 2 && workers() <= baseline.workers, 5000);
    // A reload the file watcher began for an earlier edit may still finish after the last SIGHUP's:
    // the newest module is served once every reload has settled.
    await until('the newest module served', async () => {
      const r = await call(`${g.hooks}/m`, { token: TOKEN, json: {} });
      return (await eventText(g, r.data.eventId)) === 'v5';
    }, 10_000);
  });
});
