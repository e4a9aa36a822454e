import { expect } from 'chai';
import { createSchemaCompiler } from '../../../src/engine/payload-schema.js';

describe('payload schemas: patterns on the linear-time engine', () => {
  const compile = createSchemaCompiler();
  const stringMatching = (pattern: string) => compile({ type: 'object', properties: { a: { type: 'string', pattern } } });

  it('checks an ordinary pattern both ways', () => {
    const check = stringMatching('^[a-z]+-[0-9]+$');
    expect(() => check({ a: 'build-42' })).not.to.throw();
    expect(() => check({ a: 'Build 42' })).to.throw('payload/a: must match pattern "^[a-z]+-[0-9]+$"');
  });

  it('answers a payload built to make a nested repetition backtrack in linear time', () => {
    // On a backtracking engine this subject takes 2^60 steps; here it is one pass.
    const check = stringMatching('^(a|aa)+$');
    const started = process.hrtime.bigint();
    expect(() => check({ a: `${'a'.repeat(60)}b` })).to.throw('must match pattern');
    expect(Number(process.hrtime.bigint() - started) / 1e6).to.be.below(1000);
  });

  it('refuses at load, naming the pattern and why, what the linear-time engine cannot run', () => {
    expect(() => stringMatching('^(a)\\1$')).to.throw(/pattern \/\^\(a\)\\1\$\/ cannot run in linear time: backreferences and lookaround/);
    expect(() => stringMatching('^(?=a)')).to.throw(/backreferences and lookaround/);
    expect(() => stringMatching('x{1,100000}')).to.throw(/counted repetitions are limited/);
  });

  it('refuses unicode escapes rather than reading \\p{L} as the letters p{L}', () => {
    expect(() => stringMatching('^\\p{L}+$')).to.throw(/unicode escapes .* need unicode mode/);
    expect(() => compile({ type: 'object', patternProperties: { '^\\u{1F600}': {} } })).to.throw(/unicode escapes/);
    // An escaped backslash before p is a literal backslash and a p: allowed.
    expect(() => stringMatching('^\\\\p{L}$')).not.to.throw();
  });
});
