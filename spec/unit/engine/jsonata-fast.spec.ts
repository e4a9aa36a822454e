import { expect } from 'chai';
import { compileJsonata } from '../../../src/engine/jsonata.js';

/*
 * The synchronous evaluator of simple JSONata expressions (src/engine/jsonata-fast.ts) against
 * JSONata itself: the same expression in parentheses is a block, which only JSONata
 * evaluates, under the same guards and the same rendering (jsonata.ts). Results are compared
 * as text, or as the error's code when JSONata refuses.
 */

type Outcome = { text: string } | { code: string };

async function outcome(result: string | Promise<string> | (() => string | Promise<string>)): Promise<Outcome> {
  try {
    return { text: await (typeof result === 'function' ? result() : result) };
  } catch (err) {
    return { code: (err as { code?: string }).code ?? (err as Error).message };
  }
}

/** The fast evaluator's outcome, whether it answered at once, and JSONata's for the same expression. */
async function both(source: string, context: Record<string, unknown>) {
  const render = compileJsonata(source);
  let given: string | Promise<string>;
  try {
    given = render(context);
  } catch (err) {
    given = Promise.reject(err);
  }
  const atOnce = typeof given === 'string';
  return { atOnce, fast: await outcome(given), jsonata: await outcome(() => compileJsonata(`(${source})`)(context)) };
}

describe('engine/jsonata-fast: simple expressions answered at once, as JSONata answers them', () => {
  const order = { order: { id: 'A7', customer: { name: 'Ada' }, items: [{ sku: 'x', price: 2 }, { sku: 'y', price: 3.5 }, { sku: 'z', price: 10 }] } };

  it('the bench expression and the other plain cases: answered at once, with JSONata\'s text', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['"Order " & order.id & " for " & order.customer.name & " total " & $string($sum(order.items.price))', order],
      ['order.id', order],
      ['order.customer', order],
      ['order.items.sku', order],
      ['order.items', order],
      ['$count(order.items)', order],
      ['$count(order.items.price)', order],
      ['$count(missing)', order],
      ['$sum(order.items.price)', order],
      ['"" & a', { a: 0.1 + 0.2 }],
      ['"" & a', { a: 12345678901234567890 }],
      ['$string(a)', { a: 12345678901234567890 }],
      ['"" & a', { a: -0 }],
      ['"" & a & b & c', { a: true, b: null, c: false }],
      ['a & "!"', { a: 1e21 }],
      ['a.b', { a: [{ b: [[1]] }] }],
      ['a.b', { a: [{ b: [1] }] }],
      ['a.b', { a: { b: [] } }],
      ['a.b.c', { a: [{ b: [{ c: 'x' }, { c: 'y' }] }, { b: { c: 'z' } }] }],
      ['"n=" & a.b.c', { a: [{ b: [{ c: 'only' }] }] }],
      ['a', { a: 'é ✓ \u2028' }],
      ['$sum(a)', { a: 5 }],
      ['$sum(a)', { a: [] }],
      ['$count(a)', { a: { x: 1 } }],
      ['$string(nothing) & "|"', {}],
      ['42 & "x"', {}],
    ];
    for (const [source, context] of cases) {
      const r = await both(source, context);
      expect(r.fast, `${source} on ${JSON.stringify(context)}`).to.deep.equal(r.jsonata);
      expect(r.atOnce, `${source} answered at once`).to.equal(true);
    }
  });

  it('hands anything but the plain cases to JSONata, whose result or error stands', async () => {
    const proto = JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": "c", "x": {"prototype": "p"}}');
    const cases: [string, Record<string, unknown>][] = [
      // $sum of text: JSONata's T0412.
      ['$sum(a.b)', { a: [{ b: 1 }, { b: '2' }] }],
      ['"total " & $sum(a)', { a: ['1'] }],
      // Not scalars where text is built: JSONata's JSON of them.
      ['"x" & a', { a: [1, 2] }],
      ['"x" & a', { a: { b: 0.1 + 0.2 } }],
      ['$string(a)', { a: { b: 1 } }],
      // Values that are not JSON.
      ['"x" & a', { a: () => 1 }],
      ['a.b', { a: new Date(0) }],
      ['"at " & a', { a: new Date(0) }],
      // Overflow to a non-finite sum: JSONata's D3001.
      ['$string($sum(a))', { a: [1.7e308, 1.7e308] }],
    ];
    for (const [source, context] of cases) {
      const r = await both(source, context);
      expect(r.fast, source).to.deep.equal(r.jsonata);
      expect(r.atOnce, `${source} went to JSONata`).to.equal(false);
    }
    // Prototype keys never resolve, own or inherited, on either path; inherited names are not own.
    for (const source of ['__proto__.polluted', 'constructor', 'x.prototype', '"[" & toString & hasOwnProperty & "]"']) {
      const r = await both(source, proto);
      expect(r.fast, source).to.deep.equal(r.jsonata);
      expect(r.fast, source).to.deep.equal(source.startsWith('"[') ? { text: '[]' } : { text: '' });
    }
  });

  it('a string near the guards\' limits goes to JSONata, which trips them', async () => {
    const long = 'x'.repeat(600);
    const render = compileJsonata('a & a', { maxStringLength: 1000 });
    const given = render({ a: long });
    expect(given).to.be.instanceOf(Promise);
    expect(await outcome(given)).to.deep.equal({ code: 'string_too_long' });
    expect(compileJsonata('a & a', { maxStringLength: 1000 })({ a: 'short' })).to.equal('shortshort');
  });

  it('agrees with JSONata on 600 random payloads and expressions of the subset', async function () {
    this.timeout(20_000);
    let seed = 20261126;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const KEYS = ['a', 'b', 'c', 'id', 'name'];
    const scalar = () => pick<unknown>([0, -0, 1, -7, 0.1, 2.5, 1 / 3, 1e21, 12345678901234567890, -1.5e-7, 'x', '', 'é', 'ab c', true, false, null]);
    const value = (depth: number): unknown => {
      const r = random();
      if (depth >= 3 || r < 0.4) return scalar();
      if (r < 0.7) return Object.fromEntries(KEYS.filter(() => random() < 0.5).map((k) => [k, value(depth + 1)]));
      return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    };
    const pathOf = () => Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(KEYS)).join('.');
    const expression = (depth: number): string => {
      const r = random();
      if (depth >= 2 || r < 0.35) return pathOf();
      if (r < 0.45) return pick(['"t"', '"a b"', '3', '0.5', 'true', 'null']);
      if (r < 0.75) return `${expression(depth + 1)} & ${expression(depth + 1)}`;
      return `$${pick(['string', 'sum', 'count'])}(${expression(depth + 1)})`;
    };
    let atOnce = 0;
    for (let i = 0; i < 600; i++) {
      const context = Object.fromEntries(KEYS.map((k) => [k, value(0)]));
      const source = expression(0);
      const r = await both(source, context);
      expect(r.fast, `${source} on ${JSON.stringify(context)}`).to.deep.equal(r.jsonata);
      if (r.atOnce) atOnce++;
    }
    // Most of them are plain: the fast evaluator is what answers them.
    expect(atOnce).to.be.above(300);
  });
});
