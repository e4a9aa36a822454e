import { expect } from 'chai';
import { builtChecker, itAnswersAlike } from '../../support/prebuilt-checkers.js';
import { ACTION_CHECKERS, compileActionSchemas, createActionAjv } from '../../../src/engine/action-schemas.js';

// The bin checks `/wake` and `/agent` bodies (and rendered actions) with the checkers the build
// compiled ahead (ajv's standalone code in dist/, built before the specs run); the specs that
// load src/ compile them at load. Both must answer the same, with the same errors.
describe('engine/action-schemas: the build compiles the action body checkers ahead, to the same checkers', () => {
  const compiled = compileActionSchemas(createActionAjv());

  const bodies: Record<keyof typeof ACTION_CHECKERS, [string, unknown][]> = {
    wake: [
      ['a text and a mode', { text: 'hi', mode: 'next-heartbeat' }],
      ['explicit nulls and unknown fields', { text: 'hi', mode: null, extra: 1 }],
      ['no text', { mode: 'now' }],
      ['a blank text', { text: ' \n ' }],
      ['a mode that is none', { text: 'hi', mode: 'later' }],
      ['a text of the wrong type', { text: 5 }],
      ['not an object', ['hi']],
    ],
    agent: [
      ['every field', {
        message: 'm', name: 'n', sessionKey: 'hook:a', wakeMode: 'now', deliver: true, provider: 'slack', channel: 'last', to: 'x',
        model: 'gpt', thinking: 'low', timeoutSeconds: 30, agentId: 'main', sessionMode: 'isolated', waitForCompletion: false,
      }],
      ['every optional field null', {
        message: 'm', name: null, sessionKey: null, wakeMode: null, deliver: null, provider: null, channel: null, to: null,
        model: null, thinking: null, timeoutSeconds: null, agentId: null, sessionMode: null, waitForCompletion: null,
      }],
      ['no message', { name: 'n' }],
      ['a blank model', { message: 'm', model: '  ' }],
      ['a provider that is none', { message: 'm', provider: 'fax' }],
      ['a timeout of zero', { message: 'm', timeoutSeconds: 0 }],
      ['a timeout past the most', { message: 'm', timeoutSeconds: 1e9 }],
      ['deliver as a string', { message: 'm', deliver: 'yes' }],
      ['null', null],
    ],
  };
  for (const name of ['wake', 'agent'] as const) itAnswersAlike(builtChecker(ACTION_CHECKERS[name]), compiled[name], bodies[name], `${name}: `);

  it('each list above has bodies the checker takes and bodies it refuses', () => {
    for (const name of ['wake', 'agent'] as const) {
      const answers = bodies[name].map(([, body]) => compiled[name](body));
      expect(answers, name).to.include(true).and.to.include(false);
    }
  });
});
