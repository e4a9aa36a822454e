import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runCli } from '../../support/cli.js';
import { ADMIN_TOKEN, call, tmpDir } from '../../support/gateway.js';
import { startInProcess } from '../../support/in-process.js';

const run = (args: string[]) => runCli(args);

/** A 200 KB wake would fill the terminal; --json is the events endpoint's shape, field for field. */
describe('cli: events cuts long texts unless --full; --json is the endpoint\'s shape', function () {
  this.timeout(60000);

  it('a long text: its first 200 characters and how many more; --full and --json: all of it', async () => {
    const dir = tmpDir();
    const gw = await startInProcess({ hooks: { token: 'events-long-token', maxTextLength: 200_000 } }, dir);
    const configFile = path.join(dir, 'hookrelay.json');
    fs.writeFileSync(configFile, JSON.stringify({ dataDir: path.join(dir, 'data'), hooks: { token: 'events-long-token' } }));
    const long = `${'a'.repeat(199)}😀${'b'.repeat(99_799)}`; // 100 000 UTF-16 units, a pair across the cut
    try {
      for (const text of ['short one', long]) {
        expect((await call(`${gw.hooks}/wake`, { token: 'events-long-token', json: { text, mode: 'next-heartbeat' } })).status).to.equal(200);
      }
      const [human, full, json, help] = await Promise.all([
        run(['events', '--config', configFile]),
        run(['events', '--full', '--config', configFile]),
        run(['events', '--json', '--config', configFile]),
        run(['events', '--help']),
      ]);
      const [head, ...lines] = human.stdout.trim().split('\n');
      expect(head).to.match(/^SEQ +TIME +KIND +SOURCE +TEXT$/);
      expect(lines[0]).to.match(/^#1 +\S+ +wake +wake +short one$/);
      expect(lines[1]).to.match(new RegExp(`^#2 +\\S+ +wake +wake +a{199}… \\(99801 more characters; --full shows all\\)$`));
      expect(full.stdout.trim().split('\n')[2]!.endsWith(`wake    ${long}`)).to.equal(true);

      const api = await call(`${gw.hooks}/events`, { token: ADMIN_TOKEN });
      expect(json.stdout.trim().split('\n').map((l) => JSON.parse(l))).to.deep.equal(api.data.events);
      expect(help.stdout.replace(/\s+/g, ' ')).to.include('--full').and.include('{seq, id, kind, text, source, at}');
    } finally {
      await gw.stop();
    }
  });
});
