import { expect } from 'chai';
import { freePort, startGateway, tmpDir, until, type Gateway } from '../support/gateway.js';
import { freshDatabase } from '../support/postgres.js';

/** Several instances on one database (docs/several-instances.md): each says which it joins; each log line names it. */
describe('multi: a second serve on the same config with PostgreSQL joins, saying so; every log line names its instance', function () {
  this.timeout(60_000);
  const gws: Gateway[] = [];
  after(async () => {
    for (const g of gws) await g.stop();
  });

  /** The JSON log lines of a gateway's output. */
  const logLines = (g: Gateway) => g.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

  it('the first is the only live instance, the second joins it by id; each line carries the instance', async () => {
    const url = await freshDatabase('instance_ids');
    const dir = tmpDir();
    // The same config (dataDir, store, token) — only the port differs, as with `serve --port`.
    const config = async () => ({
      server: { host: '127.0.0.1', port: await freePort() },
      dataDir: './data',
      store: { kind: 'postgres', url },
      hooks: { token: 'instance-ids-token' },
      heartbeat: { everySeconds: 3600 },
    });
    gws.push(await startGateway(await config(), { dir, env: { HOOKRELAY_LOG_LEVEL: 'info' } }));
    gws.push(await startGateway(await config(), { dir, env: { HOOKRELAY_LOG_LEVEL: 'info' } }));
    const [a, b] = gws as [Gateway, Gateway];
    const idOf = (g: Gateway) => /; instance (\S+) on PostgreSQL/.exec(g.output())?.[1];
    const [idA, idB] = [idOf(a), idOf(b)];
    expect(idA, a.output()).to.match(/^[0-9a-f-]{36}$/);
    expect(idB, b.output()).to.match(/^[0-9a-f-]{36}$/).and.not.equal(idA);

    await Promise.all([a.logged('the only live instance on this database'), b.logged('"msg":"joining ')]);
    expect(logLines(a).find((l) => l.msg === 'the only live instance on this database'), a.output()).to.include({ instance: idA });
    const joined = logLines(b).find((l) => String(l.msg).startsWith('joining '));
    expect(joined, b.output()).to.deep.include({ instance: idB, others: [idA] });
    expect(joined!.msg).to.equal(`joining 1 other live instance on this database: ids ${idA} (they share the work: docs/several-instances.md)`);

    // Every line from the config on: store, runtime, leadership, listening, each request.
    await fetch(`${b.base}/healthz`);
    for (const [g, id] of [[a, idA], [b, idB]] as const) {
      await until('the listening line', () => logLines(g).some((l) => l.msg === 'listening'));
      const lines = logLines(g).filter((l) => !String(l.msg).startsWith('generated the'));
      expect(lines.map((l) => l.msg)).to.include.members(['config loaded', 'listening']);
      for (const l of lines) expect(l, JSON.stringify(l)).to.have.property('instance', id);
    }
  });
});
