import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { compileConfig } from '../../src/compile-config.js';
import { readConfigFile } from '../../src/config/read.js';
import type { LoadedConfig } from '../../src/config/types.js';
import type { Engine } from '../../src/engine/engine.js';
import { silentLogger } from '../support/silent-logger.js';
import { createReloader } from '../../src/reload.js';
import { tmpDir } from '../support/gateway.js';

/** A config file whose mappings are wakes on `a`, `b`, …, one per line of YAML, so that it can be cut between two. */
function yamlWith(names: string[]): string {
  const mappings = names.map((n) => `    - { id: ${n}, match: { path: ${n} }, action: wake, textTemplate: "${n}" }\n`).join('');
  return `hooks:\n  token: reload-unit-token\n  mappings:\n${mappings}`;
}

/** Reload (CONTRACT.md §8): a changed file is read once it is stable, two reads 100 ms apart agreeing. */
describe('reload: a config file is taken only once two reads agree', function () {
  const engines: Engine[] = [];
  after(async () => {
    await Promise.all(engines.map((e) => e.close()));
  });

  it('a save cut off between two mappings (the half is a valid config) is never taken: the whole file is', async () => {
    const file = path.join(tmpDir('hookrelay-reload-unit-'), 'hookrelay.yaml');
    fs.writeFileSync(file, yamlWith(['a']));
    const first = await compileConfig(readConfigFile(file), file, {});
    engines.push(first.engine);

    const whole = yamlWith(['a', 'b', 'c']);
    const half = whole.slice(0, whole.indexOf('    - { id: c'));
    // The editor's save, cut off after mapping b; the rest lands while the reloader waits.
    fs.writeFileSync(file, half);
    const waits: number[] = [];
    const served: string[][] = [];
    const reloader = createReloader({
      loaded: first.loaded,
      log: silentLogger,
      env: {},
      wait: async (ms) => {
        waits.push(ms);
        if (waits.length === 1) fs.appendFileSync(file, whole.slice(half.length));
      },
      swap: async (next: LoadedConfig, engine: Engine) => {
        engines.push(engine);
        served.push(next.config.hooks.mappings.map((m) => m.id!));
      },
    });
    expect(await reloader.reload()).to.equal(true);
    expect(served).to.deep.equal([['a', 'b', 'c']]);
    expect(waits, 'two reads 100 ms apart, again until they agree').to.deep.equal([100, 100]);
    await reloader.close();
  });
});
