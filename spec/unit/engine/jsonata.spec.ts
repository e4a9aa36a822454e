import { expect } from 'chai';
import jsonata from 'jsonata';
import { compileJsonata, DEFAULT_JSONATA_LIMITS } from '../../../src/engine/jsonata.js';

const FAST = { maxSteps: 20_000, maxDepth: 200 };

describe('engine/jsonata', () => {
  const context = { items: [{ price: 2 }, { price: 3.5 }], user: { name: 'ann' }, flag: true, payload: { items: [] } };

  it('evaluates expressions and renders like Handlebars: text as is, scalars with String, objects as JSON, nothing as empty', async () => {
    expect(await compileJsonata('"Total: " & $sum(items.price)')(context)).to.equal('Total: 5.5');
    expect(await compileJsonata('$sum(items.price)')(context)).to.equal('5.5');
    expect(await compileJsonata('flag')(context)).to.equal('true');
    expect(await compileJsonata('user')(context)).to.equal('{"name":"ann"}');
    expect(await compileJsonata('items.price')(context)).to.equal('[2,3.5]');
    expect(await compileJsonata('missing.path')(context)).to.equal('');
    expect(await compileJsonata('null')(context)).to.equal('');
  });

  it('a lone literal is its text, the same text JSONata gives in a block', async () => {
    for (const [source, text] of [['"Orders"', 'Orders'], ['42', '42'], ['true', 'true'], ['null', ''], ['"a"', 'a']] as const) {
      expect(await compileJsonata(source)(context), source).to.equal(text);
      expect(await compileJsonata(`(${source})`)(context), source).to.equal(text);
    }
    expect(await compileJsonata('"x"[false]')(context)).to.equal('');
  });

  it('throws a one-line error with the position on a syntax error', () => {
    expect(() => compileJsonata('items[')).to.throw(/^JSONata syntax error at position \d+: /);
  });

  it('stops infinite tail recursion with the step budget', async () => {
    const evaluate = compileJsonata('($loop := function($n) { $loop($n + 1) }; $loop(0))', FAST);
    const err = await Promise.resolve(evaluate(context)).then(() => undefined, (e: { code?: string }) => e);
    expect(err?.code).to.equal('too_many_steps');
  });

  it('stops deep recursion with the depth limit', async () => {
    const evaluate = compileJsonata('($deep := function($n) { 1 + $deep($n + 1) }; $deep(0))', FAST);
    const err = await Promise.resolve(evaluate(context)).then(() => undefined, (e: { code?: string }) => e);
    expect(err?.code).to.equal('D1011');
  });

  it('never resolves __proto__, prototype or constructor by name, own keys included', async () => {
    const payload = JSON.parse('{"__proto__":{"x":"leak"},"constructor":"leak","prototype":"leak","ok":"fine"}');
    const ctx = { ...payload, payload };
    for (const expression of ['__proto__.x', 'payload.__proto__', 'payload.`__proto__`.x', 'constructor', 'payload.prototype', '$lookup(payload, "constructor")', 'user.constructor']) {
      expect(await compileJsonata(expression)({ ...ctx, user: {} }), expression).to.equal('');
    }
    expect(await compileJsonata('payload.ok')(ctx)).to.equal('fine');
    expect(await compileJsonata('$lookup(payload, "ok")')(ctx)).to.equal('fine');
    expect(await compileJsonata('$lookup([{"a": 1}, {"a": [2, 3]}, {}], "a")')(ctx)).to.equal('[1,2,3]');
  });

  describe('the step budget (jsonata-budget.ts)', () => {
    const SUM = '$sum([1..30].($ * 2))'; // 127 steps

    it('judges each request by its own steps: evaluations side by side never count each other\'s', async () => {
      const evaluate = compileJsonata(SUM, { maxSteps: 300 });
      // 200 evaluations at once, interleaved step by step: each has its own 300 steps.
      expect(await Promise.all(Array.from({ length: 200 }, () => evaluate(context)))).to.deep.equal(Array(200).fill('930'));
      // The evaluations of one request share its budget: two fit in 300 steps, three do not.
      const budget = { left: 300 };
      expect(await evaluate(context, budget)).to.equal('930');
      expect(await evaluate(context, budget)).to.equal('930');
      const third = await Promise.resolve(evaluate(context, budget)).then(() => undefined, (e: { code?: string }) => e);
      expect(third?.code).to.equal('too_many_steps');
    });

    it('a lone literal spends its one step on every evaluation, as JSONata evaluating it does', async () => {
      const literal = compileJsonata('"Orders"', { maxSteps: 300 });
      const budget = { left: 2 };
      for (let i = 0; i < 2; i++) expect(await literal(context, budget)).to.equal('Orders');
      expect(budget.left).to.equal(0);
      const spent = await Promise.resolve(literal(context, budget)).then(() => undefined, (e: { code?: string }) => e);
      expect(spent?.code).to.equal('too_many_steps');
    });

    it('stops hostile expressions with their codes: a long map, unbounded recursion, a range past the sequence limit', async () => {
      const codes = await Promise.all(['$map([1..1e6], function($x) { $x })', '($deep := function($n) { 1 + $deep($n + 1) }; $deep(0))', '$map([1..1e7], function($x) { $x })']
        .map((source) => Promise.resolve(compileJsonata(source)(context)).then(() => undefined, (e: { code?: string }) => e?.code)));
      expect(codes).to.deep.equal(['too_many_steps', 'D1011', 'D2015']);
    });

    it('gives the event loop its turns while a long evaluation runs (CONTRACT.md §8)', async () => {
      let turns = 0;
      let done = false;
      const tick = () => { if (!done) { turns++; setImmediate(tick); } };
      setImmediate(tick);
      const err = await Promise.resolve(compileJsonata('$map([1..1e6], function($x) { $x })')(context)).then(() => undefined, (e: { code?: string }) => e);
      done = true;
      expect(err?.code).to.equal('too_many_steps');
      expect(turns, 'turns of the event loop during the evaluation').to.be.above(0);
    });
  });

  it('compiles once and evaluates concurrently without shared state', async () => {
    const evaluate = compileJsonata('user.name');
    const results = await Promise.all(['a', 'b', 'c'].map((name) => evaluate({ user: { name } })));
    expect(results).to.deep.equal(['a', 'b', 'c']);
  });
});

describe('engine/jsonata: no payload crashes or stalls the process (jsonata-guard.ts)', () => {
  const LIMIT = DEFAULT_JSONATA_LIMITS.maxStringLength;
  // Long enough that a backtracking engine needs a minute or more for it (~2^33 steps), so
  // the old code fails these specs by the mocha timeout.
  const EVIL = `${'a'.repeat(32)}!`;

  async function failure(promise: unknown): Promise<{ code?: string; message?: string } | undefined> {
    return Promise.resolve(promise).then(() => undefined, (e: { code?: string; message?: string }) => e);
  }
  /** JSONata's own answer (or error code), rendered the way compileJsonata renders. */
  async function reference(expression: string, input: unknown = {}): Promise<string> {
    try {
      const value: unknown = await jsonata(expression).evaluate(input);
      if (value === undefined || value === null) return '';
      return typeof value === 'string' ? value : JSON.stringify(value);
    } catch (err) {
      return `error ${(err as { code: string }).code}`;
    }
  }
  async function ours(expression: string, input: unknown = {}): Promise<string> {
    return Promise.resolve(compileJsonata(expression)(input as Record<string, unknown>)).catch((err: { code: string }) => `error ${err.code}`);
  }
  async function expectSameAsJsonata(expressions: string[], input: unknown = {}): Promise<void> {
    for (const e of expressions) expect(await ours(e, input), e).to.equal(await reference(e, input));
  }

  describe('$pad', () => {
    it("refuses a width past maxStringLength before building anything; within it, gives JSONata's own results", async () => {
      const err = await failure(compileJsonata('$pad("x", n, "-")')({ n: 200_000_000 }));
      expect(err?.code).to.equal('string_too_long');
      expect(err?.message).to.include('$pad').and.include(String(LIMIT));
      expect((await failure(compileJsonata('$pad("x", n)')({ n: -(LIMIT + 1) })))?.code).to.equal('string_too_long');
      await expectSameAsJsonata([
        '$pad("abc", 6)', '$pad("abc", -6)', '$pad("abc", 2)', '$pad("abc", 5.9)', '$pad("abc", -5.9)', '$pad("abc", 0)',
        '$pad("abc", 8, "xy")', '$pad("abc", -8, "#*")', '$pad("abc", 9, "")', '$pad("abc", 7, "😀")', '$pad("abc", -7, "é😀z")',
        '$pad("😀😀", 5, "-")', '$pad("😀😀", -5, "ab")', '$pad(missing, 5)', '$pad("", 4, "°")',
      ]);
    });

    it('refuses more than maxBuiltLength of text built in one evaluation, however it is split', async () => {
      const items = Array.from({ length: 100 }, () => ({ w: 1_000_000 }));
      expect((await failure(compileJsonata('items.$pad("", w)')({ items })))?.code).to.equal('built_too_much');
      expect(await compileJsonata('items.$pad("", w)')({ items: [{ w: 3 }, { w: 2 }] })).to.equal('["   ","  "]');
      // A large payload string copied once per item would fill the heap within the time budget.
      const copies = compileJsonata('$count(rows.($uppercase($$.big)))');
      expect((await failure(copies({ big: 'x'.repeat(256 * 1024), rows: Array.from({ length: 200 }, (_, i) => i) })))?.code).to.equal('built_too_much');
      expect(await copies({ big: 'x'.repeat(256 * 1024), rows: [1, 2, 3] })).to.equal('3');
    });
  });

  describe('regexes run in linear time', () => {
    it("answers a catastrophic regex on a hostile payload at once; ordinary regexes as JSONata does", async () => {
      const context = { s: EVIL };
      expect(await compileJsonata('$contains(s, /(a+)+$/)')(context)).to.equal('false');
      expect(await compileJsonata('$replace(s, /(a+)+$/, "-")')(context)).to.equal(EVIL);
      expect(await compileJsonata('$count($split(s, /(a|aa)+$/))')(context)).to.equal('1');
      expect(await compileJsonata('$match(s, /(a+)+!$/).match')(context)).to.equal(EVIL);
      await expectSameAsJsonata([
        '$match(s, /Order ([A-Z])-([0-9]+)/)', '$replace(s, /([A-Z])-([0-9]+)/, "$2/$1")', '$split(csv, /\\s*,\\s*/)',
        '$contains(s, /^Order B/m)', '$contains(s, /^Order B/)', '$replace(s, /\\s+/, " ", 2)', 's ~> $match(/[0-9]+/)', '$match(s, /x?/)',
      ], { s: 'Order A-17 shipped\nOrder B-4 held', csv: 'a, b,c ,d' });
    });

    it('refuses at load a regex that cannot run in linear time, saying why', () => {
      const why = /cannot run in linear time: backreferences and lookaround are not allowed, because payload text could stall the gateway/;
      for (const e of ['$contains(s, /(a)\\1/)', '$contains(s, /a(?=b)/)', '$contains(s, /(?<!a)b/)', '$replace(s, /(?<q>["\'])x\\k<q>/, "")']) {
        expect(() => compileJsonata(e), e).to.throw(why);
      }
      expect(() => compileJsonata('$contains(s, /abc/i)')).to.throw(/cannot run in linear time: the i flag .*\$lowercase/);
      expect(() => compileJsonata('$contains(s, /[0-9a-f]{40}/)')).to.throw(/cannot run in linear time: counted repetitions/);
    });
  });

  describe('bounded sizes', () => {
    it('stops strings that grow step by step (recursion, variables, $replace) at maxStringLength', async () => {
      const recursion = compileJsonata('($f := function($s, $n) { $n = 0 ? $s : $f($s & $s, $n - 1) }; $f(s, 40))');
      expect((await failure(recursion({ s: 'ab' })))?.code).to.equal('string_too_long');
      const chain = compileJsonata('($a := s & s; $b := $a & $a; $c := $b & $b; $d := $c & $c; $uppercase($d))');
      expect((await failure(chain({ s: 'x'.repeat(200_000) })))?.code).to.equal('string_too_long');
      expect(await chain({ s: 'x' })).to.equal('XXXXXXXXXXXXXXXX');
      const replace = compileJsonata('$replace(s, "a", r)');
      expect((await failure(replace({ s: 'a'.repeat(2000), r: 'x'.repeat(1000) })))?.code).to.equal('string_too_long');

    });

    it('stops range explosions at maxSequenceLength', async () => {
      expect((await failure(compileJsonata('$count([1..1e7].[1..1e7])')({})))?.code).to.equal('D2015');
      expect((await failure(compileJsonata('$count([1..n])')({ n: 5_000_000 })))?.code).to.equal('D2015');
      expect(await compileJsonata('$count([1..n])')({ n: 1_000_000 })).to.equal('1000000');
    });

    it('stops sequences that steps build item by item at maxSequenceLength, in every evaluation of an expression', async () => {
      const items = (n: number) => ({ items: Array.from({ length: n }, () => ({ a: 1, x: { y: 2 } })) });
      // A path, a nested path, a filter, a lambda over $map.
      for (const source of ['$count(items.a)', '$count(items.x.y)', '$count(items[a=1])', '$count($map(items, function($v) { $v.a }))']) {
        const render = compileJsonata(source, { maxSequenceLength: 20 });
        for (let i = 0; i < 2; i++) expect((await failure(render(items(21))))?.code, `${source}, evaluation ${i + 1}`).to.equal('D2015');
        expect(await render(items(20)), source).to.equal('20');
      }
    });

    it("refuses $join and $string results past the limit before building them; below it, gives JSONata's own results", async () => {
      const join = await failure(compileJsonata('$join(items, sep)')({ items: new Array(60_000).fill(''), sep: 'x'.repeat(100_000) }));
      expect(join?.code).to.equal('string_too_long');
      const shared = { items: Array.from({ length: 30 }, (_, n) => ({ n })), t: 'y'.repeat(100_000) };
      expect((await failure(compileJsonata('$string(items.($$.t & n))')(shared)))?.code).to.equal('string_too_long');
      const deep = JSON.parse(`${'['.repeat(2000)}${']'.repeat(2000)}`);
      expect((await failure(compileJsonata('$string(x, true)')({ x: deep })))?.code).to.equal('string_too_long');
      await expectSameAsJsonata([
        '$join(names, ", ")', '$join(names)', '$join(one, "-")', '$join([], "-")', '$join(missing)',
        '$string(n)', '$string(big)', '$string(obj)', '$string(obj, true)', '$string(names)', '$string("text")', '$string(true)',
        '$string(null)', '$string($sum)', '$string(function($x) { $x })', '$string({"f": $sum, "n": 1.23456789012345678})', '$string($)',
        '$string(missing)', '$string(1/0)', '$string(names.$)',
      ], { names: ['ann', 'bob'], one: 'solo', n: 0.1 + 0.2, big: 1e21, obj: { b: [1, 2.5, 1 / 3], a: { x: null, y: true } } });
    });

    it('checks the rendered text, objects included, against the limit', async () => {
      const shared = { items: Array.from({ length: 30 }, (_, n) => ({ n })), t: 'y'.repeat(100_000) };
      expect((await failure(compileJsonata('items.($$.t & n)')(shared)))?.code).to.equal('string_too_long');
      expect((await failure(compileJsonata('t & t', { maxStringLength: 150_000 })(shared)))?.code).to.equal('string_too_long');
    });
  });

  it("$distinct handles 100 k items (JSONata compares every pair: minutes) and gives JSONata's own results on mixed inputs", async () => {
    const many = Array.from({ length: 100_000 }, (_, i) => ({ a: i % 1000, b: [i % 7] }));
    expect(await compileJsonata('$count($distinct(items))')({ items: many })).to.equal('7000');
    await expectSameAsJsonata([
      '$distinct(mixed)', '$distinct(objects)', '$distinct(arrays)', '$distinct(nested)', '$distinct(items.v)',
      '$distinct(twice.v)', '$distinct(5)', '$distinct([])', '$distinct([7])', '$distinct(missing)', '$distinct(items)',
      '$distinct([$sum, $sum, $count])',
    ], {
      mixed: [1, '1', 1, true, 'true', null, null, 1.5, 1.5, 0, -0, 'a', 'a', false],
      objects: [{ a: 1, b: 2 }, { b: 2, a: 1 }, { a: 1, b: 3 }, { a: { x: [1, 2] } }, { a: { x: [1, 2] } }, { a: { x: [2, 1] } }, {}, {}],
      arrays: [[1, 2], [1, 2], [2, 1], [[1], [2]], [[1], [2]], [], [], ['1', 2], [1, '2']],
      nested: [{ a: [{ b: 1, c: 2 }] }, { a: [{ c: 2, b: 1 }] }, { a: [{ c: 2, b: '1' }] }, '{"a":1}', { a: 1 }, '[1]', [1], [1]],
      items: [{ v: 1 }, { v: 1 }, { v: 2 }, { v: [3, 3] }, { v: 3 }],
      twice: [{ v: 'x' }, { v: 'x' }],
    });
  });

  it('$distinct stays linear over shared and repeated structures (each object is keyed once)', async () => {
    // What this guards is that such payloads finish within the step budget and give the right
    // count (timing is the bench's job).
    const within = (source: string) => compileJsonata(source);
    const repo = { full_name: 'acme/api', owner: { login: 'octo', ids: Array.from({ length: 200 }, (_, i) => i) } };
    const events = Array.from({ length: 3000 }, (_, i) => ({ id: i % 50 }));
    expect(await within('$count($distinct(events.{"id": id, "repo": $$.repo}))')({ events, repo })).to.equal('50');
    expect(await within('$count($distinct([1..20000].($$.big)))')({ big: { list: Array.from({ length: 500 }, (_, i) => ({ i })) } })).to.equal('1');
    const deep = JSON.parse(`${'['.repeat(20_000)}${']'.repeat(20_000)}`);
    expect(await within('$count($distinct([x, x]))')({ x: deep }), 'deep payloads do not overflow the stack').to.equal('1');
  });

  it("$sort takes 40 k numbers at once (JSONata's own: 18 s, 3.4 GB) and gives JSONata's own results", async () => {
    const numbers = Array.from({ length: 40_000 }, (_, i) => (i * 7919) % 40_000);
    expect(await compileJsonata('$sort(x)[0] & "," & $sort(x)[39999]')({ x: numbers })).to.equal('0,39999');
    const slow = await failure(compileJsonata('$sort(x, function($a, $b) { $a > $b })')({ x: numbers }));
    expect(slow?.code, 'a template comparator still spends the step budget').to.equal('too_many_steps');
    await expectSameAsJsonata([
      '$sort(nums)', '$sort(strs)', '$sort(dups)', '$sort(one)', '$sort([])', '$sort(missing)', '$sort(mixed)', '$sort(objs)',
      '$sort(objs, function($a, $b) { $a.k > $b.k })', '$sort(objs, function($a, $b) { $a.k < $b.k })',
      '$sort(strs, function($a, $b) { $length($a) > $length($b) })', '$sort(nums)[0]', 'objs^(k).n', 'objs^(>k, n).n',
    ], {
      nums: [3, 1.5, -2, 10, 0, 3], strs: ['b', 'a', 'B', 'ab', '', 'é'], dups: [2, 1, 2, 1], one: [5], mixed: [1, 'a'],
      objs: [{ k: 2, n: 'x' }, { k: 1, n: 'y' }, { k: 2, n: 'z' }, { k: 0, n: 'w' }],
    });
  });

  it('refuses $eval at load, called or referenced: payloads never supply code', () => {
    const why = /\$eval is not allowed: expressions are compiled and checked at load, and payloads must never supply code/;
    expect(() => compileJsonata('$eval(code)')).to.throw(why);
    expect(() => compileJsonata('($f := $eval; $f("1"))')).to.throw(why);
    expect(() => compileJsonata('$map(["1"], $eval)')).to.throw(why);
    expect(() => compileJsonata('code ~> $eval')).to.throw(why);
  });
});
