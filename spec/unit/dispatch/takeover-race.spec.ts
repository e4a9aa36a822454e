import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configFromObject } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/types.js';
import { createRuntime, type Runtime } from '../../../src/dispatch/runtime.js';
import { createLogger } from '../../../src/log.js';
import { silentLogger } from '../../support/silent-logger.js';
import { PostgresStore } from '../../../src/store/postgres.js';
import type { Store } from '../../../src/store/store.js';
import { until } from '../../support/gateway.js';
import { expireInstance, freshDatabase } from '../../support/postgres.js';
import { PG_SPEC_OPTIONS } from '../../support/store-options.js';

/**
 * Several instances on one PostgreSQL database (CONTRACT.md §10): a survivor takes over the
 * runs of an instance whose lease ran out. When that instance ends its run itself meanwhile
 * (it was slow, not gone), the survivor finds the run already ended: nothing is left to do,
 * and that is no error — while a real failure still is one.
 */
describe('dispatch: a taken-over run that its own instance ended meanwhile', function () {
  this.timeout(30_000);
  let dir: string;
  let survivor: PostgresStore | undefined;
  let slow: PostgresStore | undefined;
  let runtime: Runtime | undefined;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookrelay-takeover-race-'));
  });
  after(async () => {
    await runtime?.stop();
    await survivor?.close();
    await slow?.close().catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is let go quietly (no error line, not retried), and the instance\'s own end stands', async () => {
    const url = await freshDatabase('takeover_race');
    const config = configFromObject({
      dataDir: dir,
      store: { kind: 'postgres', url, leaseSeconds: 3 },
      hooks: { token: 't' },
      agent: { baseUrl: 'http://127.0.0.1:9/v1', model: 'unused' },
      log: { level: 'silent' },
    }, path.join(dir, 'hookrelay.yaml'), {}).config as Config;

    // The slow instance has a run under way.
    slow = await PostgresStore.open({ ...PG_SPEC_OPTIONS, url, poolSize: 2, log: silentLogger, leaseSeconds: 3 });
    const at = new Date().toISOString();
    await slow.accept([], [{ runId: 'r1', sessionKey: 'hook:s', message: 'm', wakeMode: 'next-heartbeat', deliver: false, provider: 'last', source: 'agent', unsafe: false, createdAt: at }]);
    expect(await slow.claimRuns(1, at)).to.have.length(1);

    // The survivor takes the run over; the slow instance ends it before the survivor can.
    survivor = await PostgresStore.open({ ...PG_SPEC_OPTIONS, url, poolSize: 4, log: silentLogger, leaseSeconds: 3 });
    const own = slow;
    let takenOver = 0;
    let sweeps = 0;
    // Its renewals are late: each time the survivor looks, its lease has run out.
    const racing: Store = Object.create(survivor, {
      takeOver: {
        value: async (limit: number) => {
          sweeps++;
          await expireInstance(url, own.instanceId);
          const got = await survivor!.takeOver(limit);
          for (const run of got.runs) {
            takenOver++;
            await own.finishRun(run.runId, { status: 'succeeded', endedAt: new Date().toISOString(), reply: 'its own reply' }, {});
          }
          return got;
        },
      },
    });
    const lines: string[] = [];
    const log = createLogger('info', { write: (s: string) => void lines.push(s) });
    runtime = createRuntime({ config, store: racing, log });
    await runtime.start();
    await until('the run taken over', () => takenOver === 1, 10_000);
    // Two sweeps more (every store.leaseSeconds / 3): a run kept as still to end is tried at each.
    const seen = sweeps;
    await until('two sweeps more', () => sweeps >= seen + 2, 5000);
    await runtime.stop();
    runtime = undefined;
    const errors = lines.filter((l) => /"level":(50|60)\b/.test(l));
    expect(errors, 'no error line').to.deep.equal([]);
    expect(takenOver, 'taken over once').to.equal(1);
    expect(await survivor.getRun('r1')).to.include({ status: 'succeeded', reply: 'its own reply' });
  });
});
