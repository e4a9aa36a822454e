import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ROOT } from '../../support/gateway.js';
import { builtChecker, itAnswersAlike } from '../../support/prebuilt-checkers.js';
import { configSchema } from '../../../src/config/schema.js';
import { createShapeAjv, SHAPE_CHECKER } from '../../../src/config/shape.js';

// The bin checks a config's shape with the checker the build compiled ahead (ajv's standalone
// code in dist/, built before the specs run); the specs that load src/ compile it at load.
// Both must fill the same defaults and report the same errors.
describe('config: the build compiles the config shape checker ahead, to the same checker', () => {
  const built = builtChecker(SHAPE_CHECKER);
  const compiled = createShapeAjv().compile(configSchema);

  const configs: [string, unknown][] = [
    ['the example config', parse(fs.readFileSync(path.join(ROOT, 'hookrelay.example.yaml'), 'utf8'))],
    ['an empty config (every default)', {}],
    ['unknown keys, wrong types and values, a mapping of the wrong kind', {
      server: { port: '80x', bogus: 1 }, store: { kind: 'mysql' }, log: { level: 7 },
      hooks: { token: 5, mappings: [{ id: 3, action: 'nope', match: 'x' }, { action: 'agent', verify: { scheme: 'github', secret: '' } }] },
    }],
    ['coerced scalars (what ${VAR} expands to)', { server: { port: '8788' }, hooks: { maxBodyBytes: '1000' } }],
    ['not a map', 'text'],
    ['the e-mail preset, as load.ts checks a preset', { hooks: { mappings: parse(fs.readFileSync(path.join(ROOT, 'presets', 'email.yaml'), 'utf8')) } }],
  ];
  itAnswersAlike(built, compiled, configs);
});
