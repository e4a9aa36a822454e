import { expect } from 'chai';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTransformPool, type TransformPool } from '../../../src/engine/transform-pool.js';
import {
  pickExport,
  resolveTransformModule,
  type Resolved,
} from '../../../src/engine/transform-module.js';
import { FIXTURE_TRANSFORMS } from './make-config.js';

function problemOf(resolved: Resolved): string {
  expect(resolved).to.have.property('problem');
  return (resolved as { problem: string }).problem;
}

describe('engine/transform-module', () => {
  // root/transforms is the transformsDir; root/outside holds what it must not reach.
  let root: string;
  let dir: string;

  before(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'hookrelay-transforms-')));
    dir = join(root, 'transforms');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    mkdirSync(join(root, 'outside'));
    writeFileSync(join(dir, 'ok.mjs'), 'export default () => ({ message: "ok" });\n');
    writeFileSync(join(dir, 'sub', 'nested.mjs'), 'export const transform = () => ({ message: "nested" });\n');
    writeFileSync(join(dir, 'data.json'), '{}\n');
    writeFileSync(join(root, 'outside', 'evil.mjs'), 'export default () => ({ message: "evil" });\n');
    symlinkSync(join(root, 'outside', 'evil.mjs'), join(dir, 'escape.mjs'));
    symlinkSync(join(root, 'outside'), join(dir, 'linked-dir'));
    symlinkSync(join(dir, 'sub', 'nested.mjs'), join(dir, 'inside-link.mjs'));
    symlinkSync(join(dir, 'data.json'), join(dir, 'json-link.mjs'));
  });

  after(() => rmSync(root, { recursive: true, force: true }));

  // The rules on the text of the path (relative, no "..", the extension) are the loader's:
  // spec/unit/config/load.spec.ts. What is left needs the file system.
  describe('resolveTransformModule', () => {
    it('accepts files inside the directory, in subfolders, and symlinks that stay inside', async () => {
      expect(await resolveTransformModule('ok.mjs', dir)).to.deep.equal({ file: join(dir, 'ok.mjs') });
      expect(await resolveTransformModule('sub/nested.mjs', dir)).to.deep.equal({ file: join(dir, 'sub', 'nested.mjs') });
      expect(await resolveTransformModule('./ok.mjs', dir)).to.deep.equal({ file: join(dir, 'ok.mjs') });
      expect(await resolveTransformModule('inside-link.mjs', dir)).to.deep.equal({ file: join(dir, 'sub', 'nested.mjs') });
    });

    it('refuses symlinks that leave the directory (files and folders)', async () => {
      expect(problemOf(await resolveTransformModule('escape.mjs', dir))).to.match(/resolves outside hooks.transformsDir/);
      expect(problemOf(await resolveTransformModule('linked-dir/evil.mjs', dir))).to.match(/resolves outside/);
    });

    it('refuses a link whose target has another extension', async () => {
      expect(problemOf(await resolveTransformModule('json-link.mjs', dir))).to.match(/does not end in/);
    });

    it('reports missing files and a missing directory', async () => {
      expect(problemOf(await resolveTransformModule('nope.ts', dir))).to.match(/file not found: nope\.ts/);
      expect(problemOf(await resolveTransformModule('ok.mjs', join(root, 'missing')))).to.match(/does not exist/);
    });
  });

  describe('pickExport', () => {
    const fn = () => null;
    const other = () => undefined;

    it('prefers the named export, then default, then transform', () => {
      expect(pickExport({ default: fn, transform: other, custom: other }, 'custom')).to.deep.equal({ fn: other });
      expect(pickExport({ default: fn, transform: other })).to.deep.equal({ fn });
      expect(pickExport({ transform: other })).to.deep.equal({ fn: other });
    });

    it('looks inside a CommonJS default object', () => {
      expect(pickExport({ default: { transform: fn } })).to.deep.equal({ fn });
    });

    it('names the exports it found when nothing fits', () => {
      const named = pickExport({ default: fn, answer: 42 }, 'answer');
      expect(named).to.have.property('problem').that.matches(/export "answer" is not a function; the module exports: default \(function\), answer \(number\)/);
      const none = pickExport({ answer: 42 });
      expect(none).to.have.property('problem').that.matches(/no function to call.*answer \(number\)/);
    });

    it('never picks inherited functions such as constructor', () => {
      expect(pickExport({ default: {} }, 'constructor')).to.have.property('problem');
    });
  });

  describe('createTransformPool (loading)', () => {
    const pools: TransformPool[] = [];
    const pool = async (d: string, specs: { module: string; export?: string }[]) => {
      const p = await createTransformPool(specs, { transformsDir: d, transformPoolSize: 1, transformTimeoutMs: 1000, transformMaxMemoryMb: 256, maxTextLength: 262_144 });
      pools.push(p);
      return p;
    };
    after(() => Promise.all(pools.map((p) => p.close())));

    it('loads TypeScript, .mts, CommonJS and JavaScript modules', async () => {
      const specs = ['echo.ts', 'named.mts', 'commonjs.cjs', 'steps.mjs'].map((module) => (module === 'steps.mjs' ? { module, export: 'skip' } : { module }));
      const p = await pool(FIXTURE_TRANSFORMS, specs);
      for (const spec of specs) expect(p.load(spec), spec.module).to.have.property('fn').that.is.a('function');
    });

    it('reports load failures and export problems under the right key', async () => {
      const specs = [{ module: 'broken.mjs' }, { module: 'no-function.mjs' }, { module: 'echo.ts', export: 'notAFunction' }, { module: '../echo.ts' }];
      const p = await pool(FIXTURE_TRANSFORMS, specs);
      expect(p.load(specs[0])).to.include({ key: 'module' }).and.have.property('problem').that.matches(/could not load broken\.mjs/);
      expect(p.load(specs[1])).to.include({ key: 'module' });
      expect(p.load(specs[2])).to.include({ key: 'export' });
      expect(p.load(specs[3])).to.include({ key: 'module' });
    });

    it('names the module whose loading kills its worker', async () => {
      writeFileSync(join(dir, 'exits.mjs'), 'process.exit(3);\n');
      const specs = [{ module: 'ok.mjs' }, { module: 'exits.mjs' }];
      const p = await pool(dir, specs);
      expect(p.load(specs[0])).to.have.property('fn');
      expect(p.load(specs[1])).to.deep.equal({ key: 'module', problem: 'its worker exited with code 3 while loading it' });
    });

    it('imports a module once per worker however many mappings use it, and not on the main thread', async () => {
      writeFileSync(join(dir, 'counted.mjs'), 'globalThis.loads = (globalThis.loads ?? 0) + 1;\nexport default () => ({ message: String(globalThis.loads) });\n');
      const specs = [{ module: 'counted.mjs' }, { module: './counted.mjs' }];
      const p = await pool(dir, specs);
      const loaded = p.load(specs[1]) as { fn: (input: unknown) => Promise<unknown> };
      expect(await loaded.fn({})).to.deep.equal({ message: '1' });
      expect((globalThis as Record<string, unknown>).loads).to.equal(undefined);
    });
  });
});
