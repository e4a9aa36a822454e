import { expect } from 'chai';
import { compileHandlebars } from '../../../src/engine/handlebars.js';
import { scanFlat } from '../../../src/engine/handlebars-flat.js';

/*
 * Flat templates rendered directly (src/engine/handlebars-flat.ts) against Handlebars itself:
 * the same template followed by an empty block is not flat, so only Handlebars renders it,
 * under the same budget. Outputs are compared as text, or as the error's message.
 */

const THROUGH_HANDLEBARS = '{{#if true}}{{/if}}';

function outcome(render: () => string): { text: string } | { error: string } {
  try {
    return { text: render() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

function both(source: string, context: unknown) {
  const flat = compileHandlebars(source);
  const handlebars = compileHandlebars(source + THROUGH_HANDLEBARS);
  return { flat: outcome(() => flat(context as Record<string, unknown>)), handlebars: outcome(() => handlebars(context as Record<string, unknown>)) };
}

describe('engine/handlebars-flat: text-and-path templates rendered directly, as Handlebars renders them', () => {
  it('the scenarios\' templates and the edge cases of a lookup give Handlebars\' output', () => {
    const push = { ref: 'refs/heads/main', repository: { id: 7, full_name: 'acme/api' }, pusher: { name: 'ann' }, head_commit: { message: 'fix' }, commits: [{ id: 'c1' }] };
    const cases: [string, unknown][] = [
      ['Push to {{repository.full_name}} ({{ref}}) by {{pusher.name}}: {{head_commit.message}} — first commit {{commits[0].id}}', push],
      ['hook:github:{{repository.id}}', push],
      ['Alert {{index}}: {{title}} (severity {{severity}}) on {{payload.host}}', { index: 0, title: 'disk', severity: 2, payload: { host: 'db1' } }],
      ['{{a}}|{{a.b}}|{{a.b.c}}', { a: null }],
      ['{{a.b}}', { a: { b: undefined } }],
      ['{{name.length}} {{items.length}} {{items.[1]}} {{n.x}}', { name: 'abc', items: [1, 2], n: 5 }],
      // Inherited names are not the payload's.
      ['[{{toString}}{{a.hasOwnProperty}}{{a.valueOf}}{{s.toUpperCase}}]', { a: {}, s: 'x' }],
      ['{{obj}} {{arr}} {{flag}} {{zero}} {{none}}', { obj: { x: [1, { y: 'é' }] }, arr: [1, 'a', null], flag: false, zero: 0 }],
      ['\\{{not}} {{! a comment }}{{~ a ~}} x', { a: 'A', not: 'no' }],
      ['{{{a}}} & {{a}}', { a: '<b> & "q"' }],
      ['no mustache at all', {}],
      // Prototype keys never resolve (handlebars.ts makes them @data, which is not flat).
      ['{{__proto__}}{{a.constructor}}{{constructor.name}}', JSON.parse('{"__proto__": {"x": 1}, "a": {"constructor": "c"}}')],
    ];
    for (const [source, context] of cases) {
      const r = both(source, context);
      expect(r.flat, source).to.deep.equal(r.handlebars);
    }
  });

  it('values that are not JSON render through Handlebars, with its output', () => {
    const cases: [string, unknown][] = [
      ['[{{f}}]', { f: () => 'called' }],
      ['{{d}} {{d.x}}', { d: new Date(0) }],
      ['{{m.size}}', { m: new Map([[1, 2]]) }],
      ['{{o.k}}', { o: Object.assign(Object.create({ inherited: 1 }), { k: 'own' }) }],
    ];
    for (const [source, context] of cases) {
      const r = both(source, context);
      expect(r.flat, source).to.deep.equal(r.handlebars);
    }
  });

  it('keeps the render budget: a value past the text budget fails as it does in Handlebars', () => {
    const big = 'x'.repeat(3_000_000);
    const r = both('{{a}}{{a}}', { a: big });
    expect(r.flat).to.have.property('error').that.matches(/more than \d+ characters/);
    expect(r.flat).to.deep.equal(r.handlebars);
  });

  it('agrees with Handlebars on 600 random contexts and flat templates', () => {
    let seed = 7_2026_1126;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const KEYS = ['a', 'b', 'c', 'id', 'length', '0', '1'];
    const scalar = () => pick<unknown>([0, -0, 1, 2.5, 1e21, 'x', '', 'é ✓', true, false, null]);
    const value = (depth: number): unknown => {
      const r = random();
      if (depth >= 3 || r < 0.4) return scalar();
      if (r < 0.7) return Object.fromEntries(KEYS.filter(() => random() < 0.5).map((k) => [k, value(depth + 1)]));
      return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
    };
    const path = () => Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
      const k = pick(KEYS);
      return /^\d/.test(k) ? `[${k}]` : k;
    }).join('.');
    for (let i = 0; i < 600; i++) {
      const context = Object.fromEntries(KEYS.slice(0, 4).map((k) => [k, value(0)]));
      const source = Array.from({ length: 1 + Math.floor(random() * 4) }, () => `${pick(['', 'x ', ' — '])}{{${path()}}}`).join('');
      const r = both(source, context);
      expect(r.flat, `${source} on ${JSON.stringify(context)}`).to.deep.equal(r.handlebars);
    }
  });
  describe('reading a flat template from its source, without Handlebars\' parser', () => {
    const contexts = [
      { a: 'A', b: { c: 'C', true: 'T' }, if: 'I', each: 'E', lookup: 'L', log: 'G', with: 'W', unless: 'U', helperMissing: 'H', blockHelperMissing: 'M', trueish: 'Y', a_b: { C9: 9 }, else: 'no' },
      { a: { true: 1, b: [1, 2] }, b: null },
    ];
    const readAlike = (source: string) => {
      for (const context of contexts) {
        const r = both(source, context);
        expect(r.flat, `${source} on ${JSON.stringify(context)}`).to.deep.equal(r.handlebars);
      }
    };

    it('reads text and plain paths, as Handlebars parses them', () => {
      const read = ['{{ a }}', '{{a.b}}x}}', 'a}}b', '{{log}}', '{{helperMissing}}', '{{blockHelperMissing}}', '{{with}}', '{{unless}}', '{{trueish}}', '{{a.trueish}}', '{{if}}', '{{each}}', '{{lookup}}', '{{a_b.C9}}',
        '{ {{a}} }', '{{a}}{{b.c}}', 'text only', '', '{a}', '}}', '{{\ta\n}}', 'é {{a}} ✓'];
      for (const source of read) {
        expect(scanFlat(source), source).to.not.equal(undefined);
        readAlike(source);
      }
      expect(scanFlat('x {{ a.b }} y')).to.deep.equal(['x ', ['a', 'b'], ' y']);
    });

    it('leaves to Handlebars every template it does not read: what Handlebars reads otherwise, or refuses', () => {
      const left = ['{{a}}}', '{{elsewhere}}', '{{else}}', '{{true}}', '{{null}}', '{{a.true}}', '{{b.null}}', '{{undefined}}', '{{this}}', '{{this.a}}', '{{a.this}}', '\\{{a}}', 'a\\b {{a}}',
        '{{~a}}', '{{a~}}', '{{!c}}', '{{a.[0]}}', '{{a[0]}}', '{{__proto__}}', '{{a.constructor}}', '{{{a}}}', '{{#if a}}{{/if}}', '{{a b}}',
        '{{a/b}}', '{{../a}}', '{{@index}}', '{{1}}', '{{"s"}}', '{{a-b}}', '{{$a}}', '{{a.}}', '{{.a}}', '{{ }}', '{{'];
      for (const source of left) expect(scanFlat(source), source).to.equal(undefined);
    });

    it('reads nothing that Handlebars would refuse or read otherwise: 3,000 sources of random tokens', () => {
      let seed = 26_11_2026;
      const random = () => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed / 2147483648;
      };
      const TOKENS = ['{{', '}}', '}', '{', ' ', 'a', 'b', '.', 'else', 'this', 'true', 'null', '~', '\\', '[0]', '__proto__', 'x', '#', '/', '!', '\n', '-', '_', '9', '@', '"'];
      let read = 0;
      for (let i = 0; i < 3000; i++) {
        const source = Array.from({ length: 1 + Math.floor(random() * 9) }, () => TOKENS[Math.floor(random() * TOKENS.length)]!).join('');
        // (A source ending in `{` would run into the block `both` appends.)
        if (scanFlat(source) === undefined || source.endsWith('{')) continue;
        read++;
        readAlike(source);
      }
      expect(read, 'sources read').to.be.greaterThan(300);
    });
  });
});
