import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { ADMIN_TOKEN, call, freePort, startGateway, tmpDir } from '../../support/gateway.js';

const run = (args: string[]) => runCli(args);

// Issue 32: `hookrelay events` printed whole texts (a 200 KB wake filled the terminal), and its
// --json printed an internal `unsafe` field that the events endpoint does not have.
describe('cli: events cuts long texts unless --full; --json is the endpoint\'s shape', function () {
  this.timeout(60000);

  it('a long text: its first 200 characters and how many more; --full and --json: all of it', async () => {
    const dir = tmpDir();
    const gw = await startGateway({ server: { port: await freePort() }, dataDir: './data', hooks: { token: 'events-long-token', maxTextLength: 200_000 }, heartbeat: { everySeconds: 3600 } }, { dir });
    const long = `${'a'.repeat(199)}😀${'b'.repeat(99_799)}`; // 100 000 UTF-16 units, a pair across the cut
    try {
      for (const text of ['short one', long]) {
        expect((await call(`${gw.hooks}/wake`, { token: 'events-long-token', json: { text, mode: 'next-heartbeat' } })).status).to.equal(200);
      }
      const [human, full, json, help] = await Promise.all([
        run(['events', '--config', gw.configFile]),
        run(['events', '--full', '--config', gw.configFile]),
        run(['events', '--json', '--config', gw.configFile]),
        run(['events', '--help']),
      ]);
      const lines = human.stdout.trim().split('\n');
      expect(lines[0]).to.match(/^#1 \S+ wake wake: short one$/);
      expect(lines[1]).to.match(new RegExp(`^#2 \\S+ wake wake: a{199}… \\(99801 more characters; --full shows all\\)$`));
      expect(full.stdout.trim().split('\n')[1]!.endsWith(`wake: ${long}`)).to.equal(true);

      const api = await call(`${gw.hooks}/events`, { token: ADMIN_TOKEN });
      expect(json.stdout.trim().split('\n').map((l) => JSON.parse(l))).to.deep.equal(api.data.events);
      expect(help.stdout.replace(/\s+/g, ' ')).to.include('--full').and.include('{seq, id, kind, text, source, at}');
    } finally {
      await gw.stop();
    }
  });
});
