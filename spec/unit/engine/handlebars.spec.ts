import { expect } from 'chai';
import { compileHandlebars, rewriteIndexSyntax } from '../../../src/engine/handlebars.js';

const render = (template: string, context: Record<string, unknown>) => compileHandlebars(template)(context);

describe('engine/handlebars', () => {
  describe('rewriteIndexSyntax', () => {
    it('turns a[0].b into a.[0].b inside mustaches only', () => {
      expect(rewriteIndexSyntax('x[0] {{a[0].b}} {{m[1][2]}}')).to.equal('x[0] {{a.[0].b}} {{m.[1].[2]}}');
    });

    it('leaves literal segments, strings, comments and escaped mustaches alone', () => {
      expect(rewriteIndexSyntax('{{a.[b c]}} {{lookup x "k[0]"}} {{!-- a[0] --}} {{! b[1] }} \\{{c[2]}}')).to.equal(
        '{{a.[b c]}} {{lookup x "k[0]"}} {{!-- a[0] --}} {{! b[1] }} \\{{c[2]}}',
      );
    });

    it('rewrites inside block openers and sub-expressions', () => {
      expect(rewriteIndexSyntax('{{#each a[0].items as |i|}}{{i[1]}}{{/each}}')).to.equal('{{#each a.[0].items as |i|}}{{i.[1]}}{{/each}}');
    });
  });

  describe('compileHandlebars', () => {
    const context = {
      repo: { name: 'hookrelay', tags: ['a', 'b'] },
      commits: [{ message: 'first', author: { name: 'ann' } }, { message: 'second' }],
      count: 3,
      ok: false,
      nothing: null,
      html: '<b>"&"</b>',
    };

    it('resolves dotted paths and a[0].b index syntax', () => {
      expect(render('{{repo.name}}: {{commits[0].message}} by {{commits.[0].author.name}}', context)).to.equal('hookrelay: first by ann');
      expect(render('{{repo.tags[1]}}', context)).to.equal('b');
    });

    it('renders objects and arrays as JSON', () => {
      expect(render('{{repo}}', context)).to.equal('{"name":"hookrelay","tags":["a","b"]}');
      expect(render('{{repo.tags}}', context)).to.equal('["a","b"]');
      expect(render('{{commits[1]}}', context)).to.equal('{"message":"second"}');
      expect(render('{{lookup commits 1}}', context)).to.equal('{"message":"second"}');
    });

    it('renders missing and null values as empty text, scalars with String', () => {
      expect(render('[{{missing}}|{{missing.deep.path}}|{{nothing}}|{{commits[9].message}}]', context)).to.equal('[|||]');
      expect(render('{{count}} {{ok}}', context)).to.equal('3 false');
    });

    it('does not HTML-escape', () => {
      expect(render('{{html}} {{{html}}}', context)).to.equal('<b>"&"</b> <b>"&"</b>');
    });

    it('keeps the built-in block helpers', () => {
      expect(render('{{#each commits}}{{@index}}:{{message}};{{/each}}', context)).to.equal('0:first;1:second;');
      expect(render('{{#if ok}}yes{{else}}no{{/if}} {{#with repo}}{{name}}{{/with}}', context)).to.equal('no hookrelay');
    });

    it('never resolves __proto__, prototype or constructor, also as own payload keys', () => {
      const payload = JSON.parse('{"__proto__":{"x":"leak"},"constructor":{"name":"leak"},"prototype":"leak","a":{"__proto__":"leak"}}');
      const ctx = { ...payload, payload };
      const template =
        '[{{__proto__.x}}|{{constructor.name}}|{{prototype}}|{{payload.__proto__}}|{{a.__proto__}}|{{a.[__proto__]}}' +
        '|{{lookup payload "__proto__"}}|{{lookup this "constructor"}}|{{lookup a "__proto__"}}|{{toString}}|{{repo.constructor}}]';
      expect(render(template, { ...ctx, repo: {} })).to.equal('[||||||||||]');
      expect(render('{{#each payload}}{{@key}};{{/each}}', ctx)).to.equal('a;');
      expect(render('{{#__proto__}}leak{{else}}none{{/__proto__}}', ctx)).to.equal('none');
    });

    it('renders constant text, without its comments', () => {
      expect(render('GitHub {{!-- note --}}', {})).to.equal('GitHub ');
      // Rendered once, by Handlebars: its escapes and whitespace control as it reads them.
      const constant = compileHandlebars('a \\{{b}} {{~! c ~}} d');
      expect(constant({ b: 'x' })).to.equal('a {{b}}d');
      expect(constant({})).to.equal('a {{b}}d');
    });

    it('rejects syntax errors, unknown helpers, log, partials and decorators at compile time', () => {
      for (const bad of ['{{#if}}', '{{a[}}', '{{shout name}}', '{{log payload}}', '{{> partial}}', '{{*decorator}}']) {
        expect(() => compileHandlebars(bad), bad).to.throw(Error);
      }
      expect(() => compileHandlebars('{{#if}}')).to.throw(/^Parse error on line 1: unexpected EOF/);
      expect(() => compileHandlebars('{{shout name}}')).to.throw(/unknown helper shout/);
    });

    it('rejects #if, #unless, #with and #each with other than one argument, in every branch, with Handlebars\' line and column', () => {
      const cases: [string, string][] = [
        ['{{#if vip}}\n  {{#with}}x{{/with}}{{/if}}', '#with requires exactly one argument - 2:2'],
        ['{{#if a}}x{{else if}}y{{/if}}', '#if requires exactly one argument - 1:10'],
        ['{{#if a}}{{else}}{{#each a b}}x{{/each}}{{/if}}', '#each requires exactly one argument - 1:17'],
        ['{{#unless includeZero=true}}x{{/unless}}', '#unless requires exactly one argument - 1:0'],
      ];
      for (const [template, message] of cases) expect(() => compileHandlebars(template), template).to.throw(message);
    });

    it('rejects a block helper used as a value, saying to write the block', () => {
      expect(() => compileHandlebars('{{#if a}}{{if b "yes"}}{{/if}}')).to.throw('#if is a block helper: write {{#if …}}…{{/if}}, not {{if …}} or (if …) - 1:9');
      expect(() => compileHandlebars('{{lookup (each a) "x"}}')).to.throw('#each is a block helper: write {{#each …}}…{{/each}}, not {{each …}} or (each …) - 1:9');
      expect(() => compileHandlebars('{{#with (unless a) }}x{{/with}}')).to.throw(/^#unless is a block helper/);
      expect(() => compileHandlebars('{{with a}}')).to.throw(/^#with is a block helper/);
    });

    it('rejects Handlebars\' missing-helper hooks called by name, which fail at every render', () => {
      expect(() => compileHandlebars('{{#if a}}{{helperMissing a}}{{/if}}')).to.throw(/unknown helper helperMissing - 1:9/);
      expect(() => compileHandlebars('{{#blockHelperMissing a}}x{{/blockHelperMissing}}')).to.throw(/unknown helper blockHelperMissing/);
    });

    it('keeps what those names mean where they are not helper calls', () => {
      const context = { if: 'i', each: [1], helperMissing: 'h', a: [1, 2], n: 0 };
      expect(render('{{if}} {{each}} {{#helperMissing}}{{this}}{{/helperMissing}}', context)).to.equal('i [1] h');
      expect(render('{{#each a as |v k|}}{{k}}{{v}}{{else}}none{{/each}} {{#with a as |x|}}{{x.[1]}}{{/with}} {{^if n}}zero{{/if}} {{#if n includeZero=true}}z{{/if}}', context)).to.equal('0112 2 zero z');
    });

    it('produces one-line error messages', () => {
      try {
        compileHandlebars('line one\n{{#each}}\n');
        expect.fail('should throw');
      } catch (err) {
        expect((err as Error).message).to.not.include('\n');
      }
    });
  });
});

describe('engine/handlebars: the render budget (issue 30: a 14 KB payload blocked the listener for 5 s)', () => {
  // About 14 KB of JSON, as in the probe.
  const a = Array.from({ length: 3000 }, (_, i) => i);

  function refusal(template: string, context: Record<string, unknown>): { message: string; ms: number } {
    const fn = compileHandlebars(template);
    const t0 = performance.now();
    try {
      fn(context);
    } catch (err) {
      return { message: (err as Error).message, ms: performance.now() - t0 };
    }
    throw new Error('expected the render to be refused');
  }

  it('refuses nested #each over a payload array after a bounded number of steps, whatever the array size', () => {
    const { message, ms } = refusal('{{#each a}}{{#each ../a}}{{#each ../../a}}.{{/each}}{{/each}}{{/each}}', { a });
    // The step budget, unless the machine is so loaded that 20,000 steps take 100 ms (the clock, the backstop).
    expect(message).to.be.oneOf([
      'the template would take more than 20000 steps (block iterations and values) in one render: bound the loops over payload arrays, e.g. no #each nested in another over the same array',
      'the template render took more than 100 ms: bound the loops over payload arrays',
    ]);
    expect(ms, 'generous: the step budget is what stops it').to.be.below(2000);
  });

  it('refuses a render that would build too much text (a large value repeated per item)', () => {
    const payload = { big: 'x'.repeat(200_000) };
    const { message } = refusal('{{#each a}}{{../payload}}{{/each}}', { a: a.slice(0, 100), payload });
    expect(message).to.equal('the template would build more than 4194304 characters in one render: render fewer or smaller values per item');
  });

  it('still renders a loop over thousands of items', () => {
    const items = Array.from({ length: 3000 }, (_, i) => ({ id: i }));
    const text = compileHandlebars('{{#each items}}{{id}},{{/each}}')({ items });
    expect(text.split(',').length).to.equal(3001);
  });
});
