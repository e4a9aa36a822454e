import { expect } from 'chai';
import { failureOf } from '../../../src/engine/failure.js';
import { compileHandlebars } from '../../../src/engine/handlebars.js';
import { compileJsonata } from '../../../src/engine/jsonata.js';

const MARKER = 'MARKER-5f3a';

async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('engine/failure: a failure as the log and the console show it (CONTRACT.md §16)', () => {
  it('JSONata: its code, message and position; the value it quotes from the payload hidden', async () => {
    const context = { payload: { n: `${MARKER} x` } };
    const err = await thrown(() => compileJsonata('"n=" & $number(payload.n)')(context));
    const f = failureOf('orders', 'textTemplate', err, context);
    expect(f).to.deep.equal({ mappingId: 'orders', step: 'textTemplate', code: 'D3030', message: 'Unable to cast value to a number: …', position: 15 });
    // Without the request (the author's own `hookrelay test`): the message as thrown.
    expect(failureOf('orders', 'textTemplate', err).message).to.equal(`Unable to cast value to a number: "${MARKER} x"`);
  });

  it('JSONata: a payload string in an `$error` message is hidden, the author\'s words kept', async () => {
    const context = { payload: { who: MARKER } };
    const err = await thrown(() => compileJsonata('$error("unknown sender " & payload.who)')(context));
    const f = failureOf('m', 'textTemplate', err, context);
    expect(f.code).to.equal('D3137');
    expect(f.message).to.equal('unknown sender …');
  });

  it('Handlebars: a failure at run time names the block where it arose, line and column from 1', () => {
    // Every step of this render is an iteration of the inner block, so a trip of the step count or of the clock is there.
    const render = compileHandlebars('hello\n  {{name}} {{#each a}}{{#each ../a}}.{{/each}}{{/each}}');
    const context = { name: MARKER, a: Array.from({ length: 150 }, () => MARKER) };
    const f = failureOf('greet', 'messageTemplate', thrown.sync(() => render(context)), context);
    expect(f).to.include({ mappingId: 'greet', step: 'messageTemplate', code: 'render_budget', line: 2, column: 23 });
    expect(f.message).to.match(/^the template (would take more than 20000 steps|render took more than 100 ms)/);
  });

  it('Handlebars: a render budget trip names the mustache or block where it tripped', () => {
    const render = compileHandlebars('{{#each a}}\n  {{this}}{{/each}}');
    const f = failureOf('m', 'textTemplate', thrown.sync(() => render({ a: Array.from({ length: 20_000 }, () => MARKER) })), {});
    expect(f.code).to.equal('render_budget');
    // The step count trips at the 10 001st value; a busy machine may trip the clock at the block first.
    expect([[2, 3], [1, 1]]).to.deep.include([f.line, f.column]);
    expect(f.message).to.not.include(MARKER);
  });

  it('a transform: its error name as the code; quoted text and payload strings left out of its message', () => {
    const request = { payload: { s: `${MARKER} not json`, name: MARKER } };
    let parsed: unknown;
    try {
      parsed = JSON.parse(request.payload.s);
    } catch (err) {
      parsed = err;
    }
    expect(failureOf('t', 'transform', parsed, request)).to.deep.equal({ mappingId: 't', step: 'transform', code: 'SyntaxError', message: 'Unexpected token \'M\', "…" is not valid JSON' });
    const own = failureOf('t', 'transform', new RangeError(`no team for ${MARKER}\n    at x`), request);
    expect(own).to.deep.equal({ mappingId: 't', step: 'transform', code: 'RangeError', message: 'no team for …' });
  });

  it('a thrown value that is not an error still says something', () => {
    expect(failureOf('t', 'transform', 42, {})).to.include({ code: 'Error', message: 'threw number' });
  });
});

thrown.sync = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
};
