import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { startFakeProvider, type FakeProvider } from '../../support/fake-providers.js';
import { ADMIN_TOKEN, call, freePort, runOf, startGateway, tmpDir, until, type Gateway } from '../../support/gateway.js';
import { startCluster, withDatabase, type Cluster } from '../../support/postgres.js';

// CONTRACT.md §8: what the store cannot take is never left half done. A run, heartbeat turn or
// delivery whose closing write fails is written again until it lands, without a restart; /healthz
// and the senders' 503 name the cause meanwhile, and the log says it once a few seconds with a count.

const TOKEN = 'store-outage-token';
/** The model holds each reply this long: time to make the store fail before the run's end is written. */
const HOLD_MS = 3000;

const wake = (gw: Pick<Gateway, 'hooks'>, text: string) => call(`${gw.hooks}/wake`, { token: TOKEN, json: { text, mode: 'next-heartbeat' } });
const healthz = (gw: Pick<Gateway, 'base'>) => call(`${gw.base}/healthz`);

/** The log lines at error level or above from offset `from` of the output. */
const errorLines = (gw: Gateway, from: number) => gw.output().slice(from).split('\n').filter((l) => /"level":(50|60)\b/.test(l));

/** Mounts a tmpfs of `size` on `dir`; where mounting is not possible (not root, no mount), why not. */
function mountTmpfs(dir: string, size: string): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    return undefined;
  } catch (err) {
    return String((err as { stderr?: Buffer }).stderr ?? '').trim() || (err as Error).message;
  }
}

/** Fills the disk of `dir` with `filler`, page by page, until it has no space left. */
function fillDisk(filler: string): void {
  const fd = fs.openSync(filler, 'a');
  const page = Buffer.alloc(4096, 120);
  try {
    for (;;) fs.writeSync(fd, page);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    fs.closeSync(fd);
  }
}

describe('store outages: runs, heartbeat turns and deliveries end once the store is back, without a restart (real servers)', function () {
  this.timeout(60_000);
  let model: FakeModel | undefined;
  let fake: FakeProvider | undefined;
  let gw: Gateway | undefined;
  let mounted: string | undefined;
  let cluster: Cluster | undefined;

  afterEach(async () => {
    await gw?.kill();
    gw = undefined;
    await model?.close();
    await fake?.close();
    model = fake = undefined;
    if (mounted) execFileSync('umount', ['-l', mounted]);
    mounted = undefined;
    await cluster?.stop().catch(() => {});
    cluster = undefined;
  });

  /** A gateway on the fake model and Telegram with its store `at`: one run at a time, heartbeats only when triggered, `more` config added. */
  async function start(dir: string, at: { dataDir: string; store?: object }, more: object = {}): Promise<Gateway> {
    return startGateway({
      server: { host: '127.0.0.1', port: await freePort() },
      ...at,
      hooks: { token: TOKEN },
      agent: { baseUrl: model!.baseUrl, model: 'fake', maxConcurrent: 1 },
      providers: { telegram: fake!.config },
      heartbeat: { everySeconds: 3600 },
      ...more,
    }, { dir });
  }

  /** A data directory on a tmpfs of its own, `filler` the file that fills it; skips `test` where none can be mounted. */
  function smallDisk(test: Mocha.Context): { dir: string; dataDir: string; filler: string } {
    const dir = tmpDir();
    const dataDir = path.join(dir, 'data');
    fs.mkdirSync(dataDir);
    const cannot = mountTmpfs(dataDir, '8m');
    if (cannot !== undefined) {
      // Only a disk of its own can be filled up: mounting a tmpfs needs root (CI runs as root).
      test.test!.title += ` — skipped: cannot mount a tmpfs for the data directory (${cannot})`;
      test.skip();
    }
    mounted = dataDir;
    return { dir, dataDir, filler: path.join(dataDir, 'filler') };
  }

  it('a full data-directory disk (tmpfs): /healthz 503 naming it, senders told the same, one log line a few seconds with a count; the held run and its delivery end once space is back', async function () {
    const { dir, dataDir, filler } = smallDisk(this);
    model = await startFakeModel([{ match: 'hold', reply: 'the held reply', delayMs: HOLD_MS }]);
    fake = await startFakeProvider('telegram');
    gw = await start(dir, { dataDir });

    // A run whose model answers while the disk is full: its end cannot be written then.
    const a = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'hold this', deliver: true, channel: 'telegram', to: fake.to } });
    expect(a.status, a.text).to.equal(202);
    const queued = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'then this', deliver: false } });
    expect(queued.status, queued.text).to.equal(202);
    await model.waitForRequests(1);
    const from = gw.output().length;
    fillDisk(filler);
    const refused = await until('a write refused for lack of space', async () => {
      const r = await wake(gw!, `fill ${'x'.repeat(8000)}`);
      return r.status === 503 ? r : undefined;
    });
    expect(refused.data.error.code).to.equal('unavailable');
    expect(refused.data.error.message, 'the sender is told the cause').to.match(/no space left/i);
    const down = await healthz(gw);
    expect(down.status, down.text).to.equal(503);
    expect(down.data).to.deep.equal({ ok: false, error: { code: 'unavailable', message: refused.data.error.message } });

    // Many senders meanwhile: the log says it once a few seconds, with a count, not per request.
    for (let i = 0; i < 100; i++) expect((await wake(gw, `while full ${i}`)).status).to.equal(503);
    await until('the model to have answered', () => model!.requests[0]!.endedAt !== undefined);
    await until(() => `the run's end to fail for lack of space:\n${gw!.output().slice(from).slice(-3000)}`,
      () => /run could not be completed|run's end waits for the store/.test(gw!.output().slice(from)));
    expect((await runOf(gw, a.data.runId)).status, 'nothing landed while the disk was full').to.equal('running');
    // Well over a hundred failed commits by the time the log repeats itself, with a count.
    await until(() => `a log line counting the failures:\n${errorLines(gw!, from).join('\n')}`,
      () => errorLines(gw!, from).some((l) => /"failures":([2-9]|\d\d+)/.test(l)), 20_000);
    const lines = errorLines(gw, from);
    expect(lines.length, `error lines while full:\n${lines.join('\n')}`).to.be.at.most(4);

    // Space is back: the run ends with the model's reply, its delivery goes out, and the run
    // queued behind it only starts once the first has ended (agent.maxConcurrent: 1).
    let running = 0;
    fs.rmSync(filler);
    let seen: unknown;
    const ended = await until(() => `the held run to end: ${JSON.stringify(seen)}`, async () => {
      const runs = (await call(`${gw!.hooks}/runs?status=running`, { token: ADMIN_TOKEN })).data.runs;
      running = Math.max(running, runs.length);
      const run = (seen = await runOf(gw!, a.data.runId));
      return run.delivery?.status === 'delivered' ? run : undefined;
    }, 30_000);
    expect(ended).to.include({ status: 'succeeded', reply: 'the held reply', deliveredTo: `telegram:${fake.to}` });
    expect(fake.texts).to.deep.equal(['the held reply']);
    expect(running, 'at most agent.maxConcurrent running').to.be.at.most(1);
    await until('the queued run to end', async () => (await runOf(gw!, queued.data.runId)).status === 'succeeded');
    await until('/healthz 200 again', async () => (await healthz(gw!)).status === 200);

    // A delivery whose acknowledgement cannot be written: it is written once space is back.
    const held = { first: true };
    fake.respond = () => (held.first ? ((held.first = false), { status: 200, body: { ok: true, result: { message_id: 7 } }, delayMs: HOLD_MS }) : undefined);
    const b = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'and deliver this', deliver: true, channel: 'telegram', to: fake.to } });
    expect(b.status, b.text).to.equal(202);
    await fake.waitForMessages(2);
    const from2 = gw.output().length;
    fillDisk(filler);
    await until('a write refused for lack of space', async () => (await wake(gw!, `fill ${'x'.repeat(8000)}`)).status === 503);
    await until(() => `the delivery's bookkeeping to fail:\n${gw!.output().slice(from2).slice(-3000)}`,
      () => /delivery bookkeeping failed|delivery's progress waits for the store/.test(gw!.output().slice(from2)));
    expect((await runOf(gw, b.data.runId)).delivery.status).to.equal('pending');
    fs.rmSync(filler);
    const delivered = await until(() => `the delivery to settle: ${JSON.stringify(seen)}`, async () => {
      const run = (seen = await runOf(gw!, b.data.runId));
      return run.delivery?.status === 'delivered' ? run : undefined;
    }, 30_000);
    expect(delivered).to.include({ status: 'succeeded', reply: 'ok', deliveredTo: `telegram:${fake.to}` });
    expect(fake.texts, 'sent once').to.deep.equal(['the held reply', 'ok']);
    expect((await healthz(gw)).status).to.equal(200);
  });
  it('a full disk while a heartbeat turn ends (tmpfs): its reply is stored and delivered once space is back, and the model is not asked again about the same events', async function () {
    const { dir, dataDir, filler } = smallDisk(this);
    const later = 'after the outage';
    // The later wake's rule first: a turn asked about both events answers as for the later one.
    model = await startFakeModel([{ match: later, reply: 'welcome back' }, { match: 'hold', reply: 'the held reply', delayMs: HOLD_MS }]);
    fake = await startFakeProvider('telegram');
    gw = await start(dir, { dataDir }, { session: { provider: 'telegram', to: fake.to } });
    const held = 'hold: the nightly deploy is stuck';

    // A heartbeat whose model answers while the disk is full: its turn cannot be written then.
    const w = await call(`${gw.hooks}/wake`, { token: TOKEN, json: { text: held, mode: 'now' } });
    expect(w.status, w.text).to.equal(200);
    await model.waitForRequests(1);
    const from = gw.output().length;
    fillDisk(filler);
    await until('a write refused for lack of space', async () => (await wake(gw!, `fill ${'x'.repeat(8000)}`)).status === 503);
    await until('the model to have answered', () => model!.requests[0]!.endedAt !== undefined);
    await until(() => `the heartbeat turn's write to fail for lack of space:\n${gw!.output().slice(from).slice(-3000)}`,
      () => /heartbeat turn failed|heartbeat turn's reply waits for the store/.test(gw!.output().slice(from)));

    // Space is back; a later wake asks for a heartbeat of its own.
    fs.rmSync(filler);
    await until('a wake accepted again', async () => (await call(`${gw!.hooks}/wake`, { token: TOKEN, json: { text: later, mode: 'now' } })).status === 200, 30_000);
    let replies: any[] = [];
    await until(() => `the later wake's reply to be stored and every reply sent: ${JSON.stringify(replies)} sent ${JSON.stringify(fake!.texts)}`, async () => {
      const r = await call(`${gw!.hooks}/events`, { token: ADMIN_TOKEN });
      replies = r.data.events.filter((e: any) => e.kind === 'reply');
      return replies.some((e) => e.text === 'welcome back') && fake!.texts.length === replies.length;
    }, 30_000);
    const askedAbout = model.requests.filter((r) => r.user.includes(held));
    expect(askedAbout.length, 'the model was asked once about the held event').to.equal(1);
    expect(replies.map((e) => e.text), 'each turn stored its reply').to.deep.equal(['the held reply', 'welcome back']);
    expect(fake.texts, 'each sent once').to.deep.equal(['the held reply', 'welcome back']);
  });
  it('PostgreSQL restarted (fast) mid-run: /healthz 503 naming it meanwhile; the run and its delivery end once it is back, without a restart', async () => {
    cluster = await startCluster(); // a cluster of its own: this one is stopped and started
    model = await startFakeModel([{ match: 'hold', reply: 'the held reply', delayMs: HOLD_MS }]);
    fake = await startFakeProvider('telegram');
    const dir = tmpDir('hookrelay-pg-');
    gw = await start(dir, { dataDir: path.join(dir, 'data'), store: { kind: 'postgres', url: withDatabase(cluster.url, 'postgres') } });

    const a = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'hold this', deliver: true, channel: 'telegram', to: fake.to } });
    expect(a.status, a.text).to.equal(202);
    await model.waitForRequests(1);
    const from = gw.output().length;
    await cluster.stop();
    const refused = await until('a write refused while PostgreSQL is down', async () => {
      const r = await wake(gw!, 'while down');
      return r.status === 503 ? r : undefined;
    });
    expect(refused.data.error.message, 'the sender is told the cause').to.match(/PostgreSQL/);
    const down = await healthz(gw);
    expect(down.status, down.text).to.equal(503);
    expect(down.data).to.deep.equal({ ok: false, error: { code: 'unavailable', message: refused.data.error.message } });
    await until(() => `the run's end to fail while PostgreSQL is down:\n${gw!.output().slice(from).slice(-3000)}`,
      () => /run could not be completed|run's end waits for the store/.test(gw!.output().slice(from)));
    await cluster.start();
    let seen: unknown;
    const ended = await until(() => `the held run to end: ${JSON.stringify(seen)}`, async () => {
      const run = (seen = await runOf(gw!, a.data.runId));
      return run?.delivery?.status === 'delivered' ? run : undefined;
    }, 30_000);
    expect(ended).to.include({ status: 'succeeded', reply: 'the held reply', deliveredTo: `telegram:${fake.to}` });
    await until('/healthz 200 again', async () => (await healthz(gw!)).status === 200);

    // A delivery whose acknowledgement cannot be written while PostgreSQL restarts.
    let first = true;
    fake.respond = () => (first ? ((first = false), { status: 200, body: { ok: true, result: { message_id: 7 } }, delayMs: HOLD_MS }) : undefined);
    const b = await call(`${gw.hooks}/agent`, { token: TOKEN, json: { message: 'and deliver this', deliver: true, channel: 'telegram', to: fake.to } });
    expect(b.status, b.text).to.equal(202);
    await fake.waitForMessages(2);
    const from2 = gw.output().length;
    await cluster.stop();
    await until(() => `the delivery's bookkeeping to fail:\n${gw!.output().slice(from2).slice(-3000)}`,
      () => /delivery bookkeeping failed|delivery's progress waits for the store/.test(gw!.output().slice(from2)));
    await cluster.start();
    const delivered = await until(() => `the delivery to settle: ${JSON.stringify(seen)}`, async () => {
      const run = (seen = await runOf(gw!, b.data.runId));
      return run?.delivery?.status === 'delivered' ? run : undefined;
    }, 30_000);
    expect(delivered).to.include({ status: 'succeeded', reply: 'ok', deliveredTo: `telegram:${fake.to}` });
    expect(fake.texts, 'each sent once').to.deep.equal(['the held reply', 'ok']);
  });
});
