import { expect } from 'chai';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTransformLoader,
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

  describe('resolveTransformModule', () => {
    it('accepts files inside the directory, in subfolders, and symlinks that stay inside', async () => {
      expect(await resolveTransformModule('ok.mjs', dir)).to.deep.equal({ file: join(dir, 'ok.mjs') });
      expect(await resolveTransformModule('sub/nested.mjs', dir)).to.deep.equal({ file: join(dir, 'sub', 'nested.mjs') });
      expect(await resolveTransformModule('./ok.mjs', dir)).to.deep.equal({ file: join(dir, 'ok.mjs') });
      expect(await resolveTransformModule('inside-link.mjs', dir)).to.deep.equal({ file: join(dir, 'sub', 'nested.mjs') });
    });

    it('refuses .. segments, even when they would land inside', async () => {
      expect(problemOf(await resolveTransformModule('../outside/evil.mjs', dir))).to.match(/must not contain "\.\." segments/);
      expect(problemOf(await resolveTransformModule('sub/../ok.mjs', dir))).to.match(/"\.\."/);
      expect(problemOf(await resolveTransformModule('sub\\..\\ok.mjs', dir))).to.match(/"\.\."/);
    });

    it('refuses absolute paths', async () => {
      expect(problemOf(await resolveTransformModule(join(dir, 'ok.mjs'), dir))).to.match(/relative to hooks.transformsDir/);
      expect(problemOf(await resolveTransformModule('C:\\transforms\\ok.mjs', dir))).to.match(/not an absolute path/);
    });

    it('refuses other extensions', async () => {
      expect(problemOf(await resolveTransformModule('data.json', dir))).to.match(/must end in \.ts, \.mts, \.js, \.mjs or \.cjs|must end in/);
      expect(problemOf(await resolveTransformModule('ok', dir))).to.match(/must end in/);
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
      expect(problemOf(await resolveTransformModule('', dir))).to.match(/must name a file/);
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

  describe('createTransformLoader', () => {
    it('loads TypeScript, .mts, CommonJS and JavaScript modules', async () => {
      const load = createTransformLoader(FIXTURE_TRANSFORMS);
      for (const module of ['echo.ts', 'named.mts', 'commonjs.cjs', 'steps.mjs']) {
        const spec = module === 'steps.mjs' ? { module, export: 'skip' } : { module };
        const loaded = await load(spec);
        expect(loaded, module).to.have.property('fn').that.is.a('function');
      }
    });

    it('reports load failures and export problems under the right key', async () => {
      const load = createTransformLoader(FIXTURE_TRANSFORMS);
      expect(await load({ module: 'broken.mjs' })).to.include({ key: 'module' }).and.have.property('problem').that.matches(/could not load broken\.mjs/);
      expect(await load({ module: 'no-function.mjs' })).to.include({ key: 'module' });
      expect(await load({ module: 'echo.ts', export: 'notAFunction' })).to.include({ key: 'export' });
      expect(await load({ module: '../echo.ts' })).to.include({ key: 'module' });
    });

    it('imports a module once however many mappings use it', async () => {
      writeFileSync(join(dir, 'counted.mjs'), 'globalThis.__hookrelayLoads = (globalThis.__hookrelayLoads ?? 0) + 1;\nexport default () => null;\n');
      const load = createTransformLoader(dir);
      await Promise.all([load({ module: 'counted.mjs' }), load({ module: './counted.mjs' })]);
      expect((globalThis as Record<string, unknown>).__hookrelayLoads).to.equal(1);
    });
  });
});
