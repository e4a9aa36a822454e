import { expect } from 'chai';
import { HookError, type ErrorCode } from '../../../src/errors.js';
import { createValidator } from '../../../src/engine/validate.js';
import { makeConfig, type ConfigInput } from './make-config.js';

const AGENT = { source: 'agent', unsafe: false };
const WAKE = { source: 'wake', unsafe: false };

function validator(input: ConfigInput = {}) {
  return createValidator(makeConfig(input), () => 'uuid-1');
}

function rejection(fn: () => unknown): HookError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(HookError);
    return err as HookError;
  }
  throw new Error('expected a HookError');
}

function expectError(fn: () => unknown, code: ErrorCode, message: RegExp): void {
  const err = rejection(fn);
  expect(err.code, err.message).to.equal(code);
  expect(err.message).to.match(message);
}

describe('engine/validate', () => {
  describe('wake', () => {
    const v = validator();

    it('trims text, defaults mode to now, ignores unknown fields', () => {
      expect(v.wake({ text: '  hello \n', extra: 1 }, WAKE)).to.deep.equal({ kind: 'wake', text: 'hello', mode: 'now', source: 'wake', unsafe: false });
      expect(v.wake({ text: 'x', mode: 'next-heartbeat' }, { source: 'mapping:m', unsafe: true })).to.include({ mode: 'next-heartbeat', source: 'mapping:m', unsafe: true });
      expect(v.wake({ text: 'x', mode: null }, WAKE)).to.include({ mode: 'now' });
    });

    it('rejects missing, blank and mistyped text, and bad modes, naming the field', () => {
      expectError(() => v.wake({}, WAKE), 'invalid_payload', /^text is required$/);
      expectError(() => v.wake({ text: null }, WAKE), 'invalid_payload', /^text is required$/);
      expectError(() => v.wake({ text: '' }, WAKE), 'invalid_payload', /^text must not be empty or blank$/);
      expectError(() => v.wake({ text: ' \t\n' }, WAKE), 'invalid_payload', /^text must not be empty or blank$/);
      expectError(() => v.wake({ text: 5 }, WAKE), 'invalid_payload', /^text must be a non-empty string$/);
      expectError(() => v.wake({ text: 'x', mode: 'later' }, WAKE), 'invalid_payload', /^mode must be one of: now, next-heartbeat$/);
    });

    it('rejects bodies that are not objects', () => {
      for (const body of [null, [], 'text', 1]) expectError(() => v.wake(body, WAKE), 'invalid_payload', /body must be a JSON object/);
    });
  });

  describe('agent', () => {
    const v = validator();

    it('fills the defaults of /agent', () => {
      expect(v.agent({ message: ' hi ' }, AGENT, true)).to.deep.equal({
        kind: 'agent',
        message: 'hi',
        sessionKey: 'hook:uuid-1',
        wakeMode: 'now',
        deliver: true,
        provider: 'last',
        source: 'agent',
        unsafe: false,
      });
      expect(v.agent({ message: 'hi' }, AGENT, false)).to.include({ deliver: false });
    });

    it('keeps every given field, trimmed, and ignores unknown and null ones', () => {
      const action = v.agent(
        {
          message: 'm',
          name: ' GitHub ',
          sessionKey: ' hook:x ',
          wakeMode: 'next-heartbeat',
          deliver: true,
          provider: 'telegram',
          to: ' 123 ',
          model: ' gpt ',
          thinking: 'low',
          timeoutSeconds: 120,
          unknown: 'ignored',
          idempotencyKey: null,
        },
        AGENT,
        true,
      );
      expect(action).to.deep.equal({
        kind: 'agent',
        message: 'm',
        name: 'GitHub',
        sessionKey: 'hook:x',
        sessionKeyGiven: true,
        wakeMode: 'next-heartbeat',
        deliver: true,
        provider: 'telegram',
        to: '123',
        model: 'gpt',
        thinking: 'low',
        timeoutSeconds: 120,
        source: 'agent',
        unsafe: false,
      });
      expect(v.agent({ message: 'm', name: '  ', to: null, model: null, thinking: null }, AGENT, false)).to.not.have.any.keys('name', 'to', 'model', 'thinking');
    });

    it('names the field and the allowed values on every invalid_payload', () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{}, /^message is required$/],
        [{ message: '   ' }, /^message must not be empty or blank$/],
        [{ message: ['x'] }, /^message must be a non-empty string$/],
        [{ message: 'm', name: 1 }, /^name must be a string$/],
        [{ message: 'm', sessionKey: ' ' }, /^sessionKey must not be empty or blank$/],
        [{ message: 'm', sessionKey: 5 }, /^sessionKey must be a string$/],
        [{ message: 'm', wakeMode: 'soon' }, /^wakeMode must be one of: now, next-heartbeat$/],
        [{ message: 'm', deliver: 'yes' }, /^deliver must be true or false$/],
        [{ message: 'm', provider: 'email' }, /^provider must be one of: last, whatsapp, telegram, signal, imessage, discord, slack, msteams$/],
        [{ message: 'm', channel: 'sms' }, /^channel must be one of: last, whatsapp/],
        [{ message: 'm', to: 42 }, /^to must be a string$/],
        [{ message: 'm', model: '' }, /^model must not be empty or blank$/],
        [{ message: 'm', model: 7 }, /^model must be a string$/],
        [{ message: 'm', thinking: 'max' }, /^thinking must be one of: off, minimal, low, medium, high$/],
        [{ message: 'm', timeoutSeconds: 0 }, /^timeoutSeconds must be a positive number of seconds, at most 86400$/],
        [{ message: 'm', timeoutSeconds: -1.5 }, /^timeoutSeconds must be a positive number of seconds/],
        [{ message: 'm', timeoutSeconds: 86401 }, /^timeoutSeconds must be a positive number of seconds/],
        [{ message: 'm', timeoutSeconds: '60' }, /^timeoutSeconds must be a positive number of seconds/],
        [{ message: 'm', deliver: true, provider: 'slack' }, /^to is required when deliver is true and provider is slack$/],
        [{ message: 'm', deliver: true, provider: 'slack', to: '  ' }, /^to is required/],
        [{ message: 'm', provider: 'slack', channel: 'telegram' }, /provider and channel disagree/],
      ];
      for (const [body, message] of cases) expectError(() => v.agent(body, AGENT, true), 'invalid_payload', message);
    });

    it('accepts timeoutSeconds at the bounds', () => {
      expect(v.agent({ message: 'm', timeoutSeconds: 1 }, AGENT, false).timeoutSeconds).to.equal(1);
      expect(v.agent({ message: 'm', timeoutSeconds: 86400 }, AGENT, false).timeoutSeconds).to.equal(86400);
    });

    it('treats channel as an alias of provider', () => {
      expect(v.agent({ message: 'm', channel: 'telegram', to: '1' }, AGENT, true)).to.include({ provider: 'telegram', to: '1' });
      expect(v.agent({ message: 'm', channel: 'slack', provider: 'slack', to: '1' }, AGENT, true)).to.include({ provider: 'slack' });
      expect(v.agent({ message: 'm', channel: 'telegram' }, AGENT, false)).to.include({ provider: 'telegram', deliver: false });
      expect(v.agent({ message: 'm' }, AGENT, true)).to.not.have.property('channel');
    });

    it('does not need `to` with provider last', () => {
      expect(v.agent({ message: 'm', deliver: true }, AGENT, true)).to.include({ provider: 'last', deliver: true });
    });
  });

  describe('session keys', () => {
    it('checks given keys against the prefixes, case-insensitively', () => {
      const v = validator({ hooks: { allowedSessionKeyPrefixes: ['hook:', 'Team:'] } });
      expect(v.agent({ message: 'm', sessionKey: 'HOOK:GitHub:1' }, AGENT, true).sessionKey).to.equal('HOOK:GitHub:1');
      expect(v.agent({ message: 'm', sessionKey: 'team:a' }, AGENT, true).sessionKey).to.equal('team:a');
      expectError(() => v.agent({ message: 'm', sessionKey: 'main' }, AGENT, true), 'session_key_not_allowed', /must start with one of: hook:, Team:/);
    });

    it('uses defaultSessionKey, else hook:<uuid>, when none is given', () => {
      expect(validator({ hooks: { defaultSessionKey: 'hook:inbox' } }).agent({ message: 'm' }, AGENT, true).sessionKey).to.equal('hook:inbox');
      expect(validator().agent({ message: 'm', sessionKey: null }, AGENT, true).sessionKey).to.equal('hook:uuid-1');
      const real = createValidator(makeConfig()).agent({ message: 'm' }, AGENT, true).sessionKey;
      expect(real).to.match(/^hook:[0-9a-f-]{36}$/);
    });

    describe('bounds (CONTRACT.md §5): at most 200 characters, no control character', () => {
      const v = validator();
      const LENGTH_RULE = /^sessionKey must be at most 200 characters$/;
      const CONTROL_RULE = /^sessionKey must not contain control characters \(C0, DEL or C1/;
      const key = (n: number) => `hook:${'k'.repeat(n - 5)}`;

      it('accepts 200 characters, refuses 201 and a 100 KB key, without echoing the key', () => {
        expect(v.agent({ message: 'm', sessionKey: key(200) }, AGENT, true).sessionKey).to.equal(key(200));
        for (const n of [201, 100_000]) {
          const err = rejection(() => v.agent({ message: 'm', sessionKey: key(n) }, AGENT, true));
          expect(err.code).to.equal('invalid_payload');
          expect(err.message).to.match(LENGTH_RULE).and.not.include('kkk');
        }
      });

      it('counts after trimming, and in characters rather than UTF-16 units', () => {
        expect(v.agent({ message: 'm', sessionKey: ` \t${key(200)}\r\n ` }, AGENT, true).sessionKey).to.equal(key(200));
        const emoji = `hook:${'😀'.repeat(195)}`;
        expect(v.agent({ message: 'm', sessionKey: emoji }, AGENT, true).sessionKey).to.equal(emoji);
        expectError(() => v.agent({ message: 'm', sessionKey: `${emoji}😀` }, AGENT, true), 'invalid_payload', LENGTH_RULE);
      });

      it('refuses every control character inside the key: C0 (NUL, CR, LF, ESC, …), DEL and C1', () => {
        const controls = ['\u0000', '\u0001', '\t', '\n', '\r', '\u001b', '\u001f', '\u007f', '\u0080', '\u0085', '\u009b', '\u009f'];
        for (const ch of controls) {
          const err = rejection(() => v.agent({ message: 'm', sessionKey: `hook:a${ch}b` }, AGENT, true));
          expect(err.code, JSON.stringify(ch)).to.equal('invalid_payload');
          expect(err.message, JSON.stringify(ch)).to.match(CONTROL_RULE).and.not.include('hook:a');
        }
      });

      it('checks the bounds before the prefixes: a malformed key is invalid_payload whatever its start', () => {
        expectError(() => v.agent({ message: 'm', sessionKey: 'main\u001b[2J' }, AGENT, true), 'invalid_payload', CONTROL_RULE);
        expectError(() => v.agent({ message: 'm', sessionKey: 'x'.repeat(300) }, AGENT, true), 'invalid_payload', LENGTH_RULE);
      });

      it('still accepts printable Unicode and still refuses a blank key as before', () => {
        // (In NFKC form since issue 30: the no-break space becomes a space.)
        expect(v.agent({ message: 'm', sessionKey: 'hook:Zürich · 東京 \u00a0x' }, AGENT, true).sessionKey).to.equal('hook:Zürich · 東京  x');
        expectError(() => v.agent({ message: 'm', sessionKey: ' \r\n\t ' }, AGENT, true), 'invalid_payload', /^sessionKey must not be empty or blank$/);
      });
    });
  });

  describe('session keys that look like something else (issue 30)', () => {
    const v = validator();
    const agent = (sessionKey: string) => v.agent({ message: 'm', sessionKey }, AGENT, true).sessionKey;

    it('compares the prefix on the NFKC form: a Kelvin sign (U+212A) or a long s is stored as the letter it stands for', () => {
      // 'hoo\u212a:x'.toLowerCase() is 'hook:x', but the key itself did not start with "hook:".
      expect(agent('hoo\u212a:x')).to.equal('hooK:x');
      expect(agent('\uff48\uff4f\uff4f\uff4b\uff1ax')).to.equal('hook:x'); // fullwidth
      expect(validator({ hooks: { allowedSessionKeyPrefixes: ['hook:', 'issues:'] } }).agent({ message: 'm', sessionKey: 'i\u017fsues:1' }, AGENT, true).sessionKey).to.equal('issues:1');
    });

    it('refuses a key whose case-folded prefix only matches by a character that folds to two (U+0130)', () => {
      const v2 = validator({ hooks: { allowedSessionKeyPrefixes: ['hook:', 'hi'] } });
      expectError(() => v2.agent({ message: 'm', sessionKey: 'h\u0130x' }, AGENT, true), 'session_key_not_allowed', /must start with one of/);
    });

    for (const [ch, what] of [['\u202e', 'RLO'], ['\u202a', 'LRE'], ['\u2066', 'LRI'], ['\u2069', 'PDI'], ['\u200e', 'LRM'], ['\u200f', 'RLM'], ['\u061c', 'ALM'], ['\u2028', 'LINE SEPARATOR'], ['\u2029', 'PARAGRAPH SEPARATOR']]) {
      it(`refuses a key holding ${what} with 400 invalid_payload`, () => {
        expectError(() => agent(`hook:a${ch}b`), 'invalid_payload', /^sessionKey must not contain bidirectional controls or line separators/);
      });
    }
  });

  describe('hooks.maxTextLength (issue 30: a 100 MB event was stored)', () => {
    const v = validator({ hooks: { maxTextLength: 10 } });

    it('admits strings up to the limit', () => {
      expect(v.wake({ text: '0123456789' }, WAKE).text).to.equal('0123456789');
      expect(v.agent({ message: '0123456789', name: '0123456789' }, AGENT, true).message).to.equal('0123456789');
    });

    for (const [field, body] of [['text', { text: '01234567890' }], ['message', { message: '01234567890' }], ['name', { message: 'm', name: '01234567890' }], ['to', { message: 'm', provider: 'slack', to: '01234567890' }], ['model', { message: 'm', model: '01234567890' }]] as const) {
      it(`refuses a longer ${field} with 400 invalid_payload, saying the limit and the key`, () => {
        const fn = () => ('text' in body ? v.wake(body, WAKE) : v.agent(body, AGENT, true));
        expectError(fn, 'invalid_payload', new RegExp(`^${field} is longer than 10 characters \\(hooks.maxTextLength\\): send or render less, or raise hooks.maxTextLength$`));
      });
    }
  });

  describe('models', () => {
    it('resolves aliases', () => {
      const v = validator({ agent: { aliases: { fast: 'vendor/fast-1' } } });
      expect(v.agent({ message: 'm', model: 'fast' }, AGENT, true).model).to.equal('vendor/fast-1');
      expect(v.agent({ message: 'm', model: 'other' }, AGENT, true).model).to.equal('other');
      expect(v.agent({ message: 'm', model: 'toString' }, AGENT, true).model).to.equal('toString');
    });

    it('enforces allowedModels by requested name or resolution', () => {
      const v = validator({ agent: { allowedModels: ['vendor/fast-1', 'smart'], aliases: { fast: 'vendor/fast-1', cheap: 'vendor/cheap' } } });
      expect(v.agent({ message: 'm', model: 'fast' }, AGENT, true).model).to.equal('vendor/fast-1');
      expect(v.agent({ message: 'm', model: 'smart' }, AGENT, true).model).to.equal('smart');
      expect(v.agent({ message: 'm' }, AGENT, true)).to.not.have.property('model');
      expectError(() => v.agent({ message: 'm', model: 'cheap' }, AGENT, true), 'model_not_allowed', /agent\.allowedModels/);
      expectError(() => v.agent({ message: 'm', model: 'gpt-9' }, AGENT, true), 'model_not_allowed', /allowed: vendor\/fast-1, smart/);
    });

    it('lets an alias name itself be listed', () => {
      const v = validator({ agent: { allowedModels: ['fast'], aliases: { fast: 'vendor/fast-1' } } });
      expect(v.agent({ message: 'm', model: 'fast' }, AGENT, true).model).to.equal('vendor/fast-1');
    });
  });
});
