import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configFromObject } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/types.js';
import { createRuntime, type Runtime } from '../../../src/dispatch/runtime.js';
import { silentLogger } from '../../support/silent-logger.js';
import { PostgresStore } from '../../../src/store/postgres.js';
import { until } from '../../support/gateway.js';
import { expireInstance, freshDatabase } from '../../support/postgres.js';
import { startFakeTelegram, type FakeTelegram } from '../../support/fake-telegram.js';
import { PG_SPEC_OPTIONS } from '../../support/store-options.js';

/**
 * Several instances on one PostgreSQL database (CONTRACT.md §10): the deliveries an instance
 * had leased when it died are sent by a survivor once that instance's lease has expired, not
 * once the delivery lease (minutes) has: the survivor's recovery releases them and wakes its
 * own outbox, which nothing else would (no run of its own finished, nothing was enqueued).
 */
describe('dispatch: a survivor sends the deliveries a gone instance had leased', function () {
  this.timeout(30_000);
  let dir: string;
  let tg: FakeTelegram;
  let survivor: PostgresStore;
  let gone: PostgresStore;
  let runtime: Runtime | undefined;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookrelay-takeover-'));
    tg = await startFakeTelegram();
  });
  after(async () => {
    await runtime?.stop();
    await survivor?.close();
    await gone?.close().catch(() => {});
    await tg?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('within about a third of store.leaseSeconds after the lease of the instance that held it ran out', async () => {
    const url = await freshDatabase('takeover');
    const config = configFromObject({
      dataDir: dir,
      store: { kind: 'postgres', url, leaseSeconds: 3 },
      hooks: { token: 't' },
      agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'unused' },
      session: { provider: 'telegram', to: '123' },
      providers: { telegram: { botToken: '42:TOKEN', apiBase: tg.apiBase } },
      log: { level: 'silent' },
    }, path.join(dir, 'hookrelay.yaml'), {}).config as Config;

    // The survivor is up first, idle: its outbox has looked once and found nothing due.
    survivor = await PostgresStore.open({ ...PG_SPEC_OPTIONS, url, poolSize: 4, log: silentLogger, leaseSeconds: 3 });
    runtime = createRuntime({ config, store: survivor, log: silentLogger });
    await runtime.start();

    // The other instance runs a turn and leases its reply's delivery, as its outbox does just
    // before sending; then it dies (its instance lease runs out, here at once).
    gone = await PostgresStore.open({ ...PG_SPEC_OPTIONS, url, poolSize: 2, log: silentLogger, leaseSeconds: 3 });
    const at = new Date().toISOString();
    await gone.accept([], [{ runId: 'r1', sessionKey: 'hook:s', message: 'm', wakeMode: 'next-heartbeat', deliver: true, provider: 'telegram', to: '555', source: 'agent', unsafe: false, createdAt: at }]);
    await gone.claimRuns(1, at);
    await gone.finishRun('r1', { status: 'succeeded', endedAt: at, reply: 'the answer' }, { delivery: { kind: 'run', provider: 'telegram', to: '555', parts: ['the answer'], createdAt: at } });
    const leased = await gone.claimDeliveries(new Date().toISOString(), 10, new Date(Date.now() + 10 * 60_000).toISOString());
    expect(leased.deliveries, 'the gone instance holds the delivery').to.have.length(1);
    await expireInstance(url, gone.instanceId);

    // The survivor's recovery runs every second here (leaseSeconds / 3).
    const [sent] = await tg.waitForMessages(1, 5000);
    expect(sent!.body).to.include({ chat_id: '555', text: 'the answer' });
    const settled = await until('the delivery settled', async () => {
      const r = await survivor.getRun('r1');
      return r?.delivery?.status === 'pending' ? undefined : r;
    }, 2000, 20);
    expect(settled.delivery).to.include({ status: 'delivered', attempts: 2 });
    expect(settled.deliveredTo).to.equal('telegram:555');
  });
});
