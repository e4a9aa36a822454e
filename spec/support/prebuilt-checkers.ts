import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from 'chai';
import type { ValidateFunction } from 'ajv';
import { ROOT } from './gateway.js';

/** A checker the build compiled (`dist/<file>`, built before the specs run), as the bin loads it. */
export function builtChecker(file: string): ValidateFunction {
  return createRequire(path.join(ROOT, 'dist/'))(`./${file}`) as ValidateFunction;
}

/**
 * One spec per case: the build's checker and the one compiled from the sources give the same
 * answer, fill in the same defaults and report the same errors (config/shape.ts `prebuiltChecker`).
 */
export function itAnswersAlike(built: ValidateFunction, compiled: ValidateFunction, cases: readonly (readonly [string, unknown])[], prefix = ''): void {
  for (const [what, input] of cases) {
    it(`${prefix}${what}`, () => {
      const [a, b] = [structuredClone(input), structuredClone(input)];
      expect(built(a)).to.equal(compiled(b));
      expect(a, 'the defaults filled in').to.deep.equal(b);
      expect(built.errors ?? null).to.deep.equal(compiled.errors ?? null);
    });
  }
}
