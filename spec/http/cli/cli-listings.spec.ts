import { expect } from 'chai';
import { call, tmpDir, until } from '../../support/gateway.js';
import { runCli, writeConfig } from '../../support/cli.js';
import { startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';

const ESC = '\x1b[';

/** The listing commands print for people: column headers, a line when there is nothing, colour on a terminal only (as git and kubectl do). */
describe('cli: listings for people (requests, runs, events)', function () {
  this.timeout(60000);
  let gw: InProcess;
  let config: string;
  before(async () => {
    const dir = tmpDir();
    gw = await startInProcess({ hooks: { mappings: [{ id: 'note', match: { path: 'note' }, action: 'wake', textTemplate: 'note {{n}}' }] } }, dir);
    config = writeConfig(dir, { dataDir: `${dir}/data` });
  });
  after(async () => { await gw?.stop(); });

  /** `run` with stdout a terminal (as a person's shell gives it), then as it was. */
  async function onTerminal<T>(run: () => Promise<T>): Promise<T> {
    const was = Object.getOwnPropertyDescriptor(process.stdout, 'isTTY');
    Object.defineProperty(process.stdout, 'isTTY', { value: true, configurable: true });
    try {
      return await run();
    } finally {
      if (was) Object.defineProperty(process.stdout, 'isTTY', was);
      else delete (process.stdout as { isTTY?: boolean }).isTTY;
    }
  }

  it('an empty list: one line saying so on stderr, nothing on stdout, exit 0', async () => {
    for (const [args, said] of [
      [['requests'], 'No requests in the request log.'],
      [['runs'], 'No runs.'],
      [['runs', '--status', 'failed'], 'No runs with status failed.'],
      [['events'], 'No events.'],
    ] as const) {
      const r = await runCli([...args, '--config', config]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout, args.join(' ')).to.equal('');
      expect(r.stderr).to.equal(`${said}\n`);
    }
    const json = await runCli(['requests', '--json', '--config', config]);
    expect([json.stdout, json.stderr]).to.deep.equal(['', '']);
  });

  it('rows under aligned column headers; piped output holds no escape codes; --json is one object a line', async () => {
    expect((await call(`${gw.hooks}/note`, { token: TOKEN, json: { n: 1 } })).status).to.equal(200);
    expect((await call(`${gw.hooks}/nope`, { token: TOKEN, json: {} })).status).to.equal(404);
    // The 404's row is written a moment after its answer.
    const r = await until('both rows', async () => {
      const got = await runCli(['requests', '--config', config]);
      return got.stdout.trimEnd().split('\n').length === 3 ? got : undefined;
    });
    const [head, ...rows] = r.stdout.trimEnd().split('\n');
    expect(head).to.match(/^SEQ +TIME +METHOD +ROUTE +STATUS +SENDER +NOTES$/);
    expect(rows).to.have.length(2);
    // Each column starts where its header does.
    for (const name of ['TIME', 'METHOD', 'ROUTE', 'STATUS']) {
      const at = head!.indexOf(name);
      for (const row of rows) expect(row[at - 1], `${name} in ${row}`).to.equal(' ').and.not.equal(row[at]);
    }
    expect(rows[0]).to.match(/^#\d+ +\S+Z +POST +unmatched +404 +- +no_mapping$/);
    expect(rows[1]).to.match(/^#\d+ +\S+Z +POST +mapping:note +200 +-$/);
    expect(r.stdout).to.not.include(ESC);

    const events = await runCli(['events', '--config', config]);
    expect(events.stdout.split('\n')[0]).to.match(/^SEQ +TIME +KIND +SOURCE +TEXT$/);
    expect(events.stdout).to.match(/^#1 +\S+Z +wake +mapping:note +note 1$/m);
    const json = await runCli(['requests', '--json', '--config', config]);
    expect(json.stdout.trim().split('\n').map((l) => JSON.parse(l).status)).to.deep.equal([404, 200]);
  });

  it('colour on a terminal (headers bold, a status in its class\'s colour), none with NO_COLOR', async () => {
    const coloured = await onTerminal(() => runCli(['requests', '--config', config], { NO_COLOR: undefined, TERM: 'xterm' }));
    expect(coloured.stdout).to.include(`${ESC}1mSEQ`).and.include(`${ESC}32m200`).and.include(`${ESC}33m404`);
    const plain = await onTerminal(() => runCli(['requests', '--config', config], { NO_COLOR: '1', TERM: 'xterm' }));
    expect(plain.stdout).to.not.include(ESC);
    expect(plain.stdout.replace(/ +/g, ' ')).to.equal(coloured.stdout.replace(/\x1b\[\d+m/g, '').replace(/ +/g, ' '));
  });
});
