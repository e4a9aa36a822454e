import { expect } from 'chai';
import { createDelivery, resolveTarget } from '../../../src/dispatch/delivery.js';
import { DeliveryError } from '../../../src/dispatch/providers/sender.js';
import { splitText } from '../../../src/dispatch/providers/split.js';

const TELEGRAM_MAX_TEXT = 4096;
import { startFakeTelegram, telegramError, type FakeTelegram } from '../../support/fake-telegram.js';
import { sendAllParts } from '../../support/fake-providers.js';

const TOKEN = '123456:SECRET-bot-token';

describe('dispatch/providers/telegram', () => {
  describe('splitText (every provider)', () => {
    it('keeps a short text whole', () => {
      expect(splitText('hello', TELEGRAM_MAX_TEXT)).to.deep.equal(['hello']);
      expect(splitText('x'.repeat(TELEGRAM_MAX_TEXT), TELEGRAM_MAX_TEXT)).to.have.length(1);
    });

    it('splits at the last newline, else the last space, else hard', () => {
      const lines = Array.from({ length: 100 }, (_, i) => `line ${i} `.padEnd(99, 'x')).join('\n');
      const parts = splitText(lines, 1000);
      expect(parts.every((p) => p.length <= 1000)).to.equal(true);
      expect(parts.join('\n')).to.equal(lines);
      expect(parts[0]!.endsWith('x')).to.equal(true);

      const words = Array.from({ length: 300 }, () => 'word').join(' ');
      const wparts = splitText(words, 100);
      expect(wparts.every((p) => p.length <= 100 && !p.startsWith(' ') && p.endsWith('word'))).to.equal(true);
      expect(wparts.join(' ')).to.equal(words);

      expect(splitText('y'.repeat(250), 100).map((p) => p.length)).to.deep.equal([100, 100, 50]);
    });

    it('never splits a surrogate pair', () => {
      const text = 'a' + '😀'.repeat(60);
      const parts = splitText(text, 10);
      expect(parts.join('')).to.equal(text);
      for (const p of parts) expect(p.length).to.be.at.most(10), expect(p).to.not.match(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    });
  });

  describe('sender (against a local fake Bot API)', () => {
    let tg: FakeTelegram;
    beforeEach(async () => { tg = await startFakeTelegram(); });
    afterEach(async () => { await tg.close(); });
    const delivery = () => createDelivery({ telegram: { botToken: TOKEN, apiBase: tg.apiBase } });

    it('posts {chat_id, text} to /bot<token>/sendMessage', async () => {
      await sendAllParts(delivery(), { provider: 'telegram', to: '555' }, 'hi there');
      expect(tg.calls).to.deep.equal([{ token: TOKEN, method: 'sendMessage', body: { chat_id: '555', text: 'hi there' } }]);
    });

    it('sends a 10000-character reply as three ordered parts of at most 4096', async () => {
      const text = Array.from({ length: 200 }, (_, i) => `paragraph ${String(i).padStart(3, '0')} `.padEnd(49, '.')).join('\n');
      expect(text.length).to.equal(9999);
      await sendAllParts(delivery(), { provider: 'telegram', to: '555' }, text);
      const parts = tg.messages.map((m) => m.body.text as string);
      expect(parts).to.have.length(3);
      expect(parts.every((p) => p.length <= 4096)).to.equal(true);
      expect(parts.join('\n')).to.equal(text);
    });

    it('fails with Telegram\'s description and never the token', async () => {
      tg.respond = () => telegramError(400, 'Bad Request: chat not found');
      const err = await sendAllParts(delivery(), { provider: 'telegram', to: '1' }, 'x').catch((e: any) => e);
      expect(err).to.be.instanceOf(DeliveryError);
      expect(err.message).to.equal('telegram: Bad Request: chat not found');
    });

    it('treats ok:false on a 200 as a failure, and redacts a token echoed back', async () => {
      tg.respond = () => ({ status: 200, body: { ok: false, description: `token ${TOKEN} is odd` } });
      const err = await sendAllParts(delivery(), { provider: 'telegram', to: '1' }, 'x').catch((e: any) => e);
      expect(err.message).to.equal('telegram: token [redacted] is odd');
    });

    it('reports an unreachable API without the token', async () => {
      const d = createDelivery({ telegram: { botToken: TOKEN, apiBase: 'http://127.0.0.1:1' } });
      const err = await sendAllParts(d, { provider: 'telegram', to: '1' }, 'x').catch((e: any) => e);
      expect(err).to.be.instanceOf(DeliveryError);
      expect(err.message).to.match(/^telegram: request failed/).and.not.include(TOKEN);
    });
  });

  describe('registry and targets', () => {
    it('answers "not configured", naming the key to set, for a provider without its credentials', async () => {
      const d = createDelivery({ telegram: { botToken: '', apiBase: 'http://127.0.0.1:1' } });
      const slack = await sendAllParts(d, { provider: 'slack', to: 'C1' }, 'x').catch((e: any) => e);
      expect(slack).to.be.instanceOf(DeliveryError).and.include({ retryable: false });
      expect(slack.message).to.equal('provider slack is not configured (providers.slack.botToken is empty)');
      expect((await sendAllParts(d, { provider: 'telegram', to: '1' }, 'x').catch((e: any) => e)).message).to.equal('provider telegram is not configured (providers.telegram.botToken is empty)');
    });

    it('resolves last, explicit and mapping fallbacks', () => {
      const last = { provider: 'telegram' as const, to: '123' };
      expect(resolveTarget({ provider: 'last', source: 'agent' }, last)).to.deep.equal({ target: last });
      expect(resolveTarget({ provider: 'last', to: '9', source: 'agent' }, last)).to.deep.equal({ target: { provider: 'telegram', to: '9' } });
      expect(resolveTarget({ provider: 'last', source: 'agent' }, undefined)).to.have.property('problem');
      expect(resolveTarget({ provider: 'last', to: '+1555', source: 'mapping:x' }, undefined)).to.deep.equal({ target: { provider: 'whatsapp', to: '+1555' } });
      expect(resolveTarget({ provider: 'telegram', source: 'agent' }, last)).to.deep.equal({ target: last });
      expect(resolveTarget({ provider: 'slack', source: 'agent' }, last)).to.deep.equal({ problem: 'no recipient address (to) for slack' });
    });
  });
});
