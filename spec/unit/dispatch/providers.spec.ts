import { mock } from 'node:test';
import { expect } from 'chai';
import type { Provider } from '../../../src/config/types.js';
import { createDelivery } from '../../../src/dispatch/delivery.js';
import { PROVIDER_DESCRIPTORS } from '../../../src/dispatch/providers/index.js';
import { DeliveryError, type Sender } from '../../../src/dispatch/providers/sender.js';
import { expectSend, sendAllParts, startFakeProvider, type FakeProvider } from '../../support/fake-providers.js';

const LIMITS: Record<Provider, number> = { whatsapp: 4096, telegram: 4096, signal: 4000, imessage: 4000, discord: 2000, slack: 4000, msteams: 4000 };

const OPTS = { timeoutMs: 5000 };

/** One sender attempt's failure (the sender under test, not the delivery's grace). */
async function failureOf(send: Sender, to: string, text = 'x'): Promise<DeliveryError> {
  const err = await send(to, text, OPTS).then(() => undefined, (e: unknown) => e);
  expect(err, 'the send should have failed').to.be.instanceOf(DeliveryError);
  return err as DeliveryError;
}

describe('dispatch/providers: every provider against a local fake of its API', () => {
  it('the registry holds the seven providers, each with its limit', () => {
    expect(Object.fromEntries(PROVIDER_DESCRIPTORS.map((p) => [p.name, p.limit]))).to.deep.equal(LIMITS);
  });

  for (const descriptor of PROVIDER_DESCRIPTORS) {
    const name = descriptor.name;
    describe(name, () => {
      let fake: FakeProvider;
      let send: Sender;
      beforeEach(async () => {
        fake = await startFakeProvider(name);
        send = descriptor.create(fake.config);
      });
      afterEach(async () => { await fake.close(); });
      const delivery = () => createDelivery({ [name]: fake.config } as never);

      it('sends exactly the request its API documents', async () => {
        await sendAllParts(delivery(), { provider: name, to: fake.to }, 'hi there');
        expect(fake.messages).to.have.length(1);
        expect(fake.messages[0]!.method).to.equal('POST');
        expectSend(fake, fake.messages[0]!, 'hi there');
      });

      it(`splits a long reply in order into parts of at most ${LIMITS[name]}`, async () => {
        const limit = LIMITS[name];
        const text = Array.from({ length: Math.ceil((limit * 2.5) / 50) }, (_, i) => `paragraph ${String(i).padStart(4, '0')} `.padEnd(49, '.')).join('\n');
        await sendAllParts(delivery(), { provider: name, to: fake.to }, text);
        const parts = fake.texts;
        expect(parts).to.have.length(3);
        expect(parts.map((p) => p.length <= limit && p.length > limit - 50)).to.deep.equal([true, true, false]);
        expect(parts.join('\n')).to.equal(text);
      });

      it('classifies a 429 with Retry-After as retryable, with the wait', async () => {
        fake.respond = (c) => (c.kind === 'send' ? fake.error(429, 'Too Many Requests', 7) : undefined);
        const err = await failureOf(send, fake.to);
        expect(err.retryable).to.equal(true);
        expect(err.retryAfterMs).to.equal(7000);
      });

      it('classifies a 5xx as retryable, a network error and a time-out too', async () => {
        fake.respond = (c) => (c.kind === 'send' ? fake.error(503, 'Service Unavailable') : undefined);
        const err = await failureOf(send, fake.to);
        expect(err).to.include({ retryable: true, retryAfterMs: undefined });
        expect(err.message).to.match(new RegExp(`^${name}: (\\w+: )?Service Unavailable`));

        fake.respond = (c) => (c.kind === 'send' ? { status: 200, body: {}, delayMs: 2000 } : undefined);
        const slow = await send(fake.to, 'x', { timeoutMs: 150 }).catch((e: DeliveryError) => e);
        expect(slow).to.be.instanceOf(DeliveryError).and.include({ retryable: true });
        expect((slow as Error).message).to.equal(`${name}: no answer within 0.15 s`);

        await fake.close();
        const down = await failureOf(send, fake.to);
        expect(down.retryable).to.equal(true);
        expect(down.message).to.match(new RegExp(`^${name}: request failed \\((ECONNREFUSED|UND_ERR_SOCKET)\\)$`));
      });

      it('classifies a permanent 4xx as not retryable, with the provider\'s reason and no secret or reply text', async () => {
        const reply = 'the confidential reply text of the run';
        fake.respond = (c) => (c.kind === 'send' ? fake.error(400, `recipient not found (${fake.secret || reply}) for ${reply}`) : undefined);
        const err = await failureOf(send, fake.to, reply);
        expect(err.retryable).to.equal(false);
        expect(err.message).to.match(new RegExp(`^${name}: (\\w+: )?recipient not found \\(\\[redacted\\]\\) for \\[redacted\\]`));
        if (fake.secret) expect(err.message).not.to.include(fake.secret).and.not.to.include(encodeURIComponent(fake.secret));
        expect(err.message).not.to.include(reply);
      });
    });
  }

  // Issue 30: `to: ".."` sent the Discord bot token to /api/v10/messages — encodeURIComponent
  // leaves dots alone, and URL parsing resolves a `..` segment (and `%2e%2e`, WHATWG URL).
  describe('a `to` that is not one path segment never reaches another path than its recipient\'s', () => {
    const HOSTILE = ['..', '.', '../x', 'a/b', '%2e%2e', '%2E', 'x/../..', '../../v21.0/other', '?q=1', '#frag', 'a\\b', ''];
    /** The one path a send to `to` may reach: `to` as a single segment where the API puts it in the URL. */
    const ONLY: Record<Provider, (to: string) => string> = {
      whatsapp: () => '/v21.0/106540352242922/messages',
      telegram: () => '/bot123456:SECRET-bot-token/sendMessage',
      signal: () => '/v2/send',
      imessage: () => '/api/v1/message/text',
      discord: (to) => `/api/v10/channels/${encodeURIComponent(to)}/messages`,
      slack: () => '/api/chat.postMessage',
      msteams: (to) => `/teams/v3/conversations/${encodeURIComponent(to)}/activities`,
    };
    for (const descriptor of PROVIDER_DESCRIPTORS) {
      const name = descriptor.name;
      it(`${name}: ${HOSTILE.map((t) => JSON.stringify(t)).join(', ')}`, async () => {
        const fake = await startFakeProvider(name);
        try {
          const send = descriptor.create(fake.config);
          for (const to of HOSTILE) {
            fake.requests.length = 0;
            const err = await send(to, 'x', OPTS).then(() => undefined, (e: unknown) => e);
            const paths = fake.requests.map((r) => r.path).filter((p) => p !== '/botframework.com/oauth2/v2.0/token');
            if (paths.length === 0) {
              // Refused before sending: for good, saying why.
              expect(err, `to ${JSON.stringify(to)}`).to.be.instanceOf(DeliveryError).and.include({ retryable: false });
              expect((err as Error).message).to.match(new RegExp(`^${name}: to .* is not a`));
            } else {
              expect(paths, `to ${JSON.stringify(to)}`).to.deep.equal([ONLY[name](to)]);
              // …and a server that resolves dot segments (any URL parser does) reads the same path.
              expect(new URL(paths[0]!, 'http://fake').pathname, `to ${JSON.stringify(to)}`).to.equal(paths[0]);
              if (ONLY[name]('a') !== ONLY[name]('b')) expect(decodeURIComponent(paths[0]!.split('/').at(-2)!)).to.equal(to);
            }
          }
        } finally {
          await fake.close();
        }
      });
    }
  });

  describe('provider specifics', () => {
    let fake: FakeProvider;
    afterEach(async () => { await fake.close(); });

    it('slack: an HTTP 200 with ok:false is a failure; ratelimited is retryable with Retry-After', async () => {
      fake = await startFakeProvider('slack');
      const send = PROVIDER_DESCRIPTORS.find((p) => p.name === 'slack')!.create(fake.config);
      fake.respond = () => ({ status: 200, body: { ok: false, error: 'channel_not_found' } });
      const notFound = await failureOf(send, 'C404');
      expect(notFound).to.include({ message: 'slack: channel_not_found', retryable: false });

      fake.respond = () => ({ status: 200, body: { ok: false, error: 'ratelimited' }, headers: { 'retry-after': '3' } });
      expect(await failureOf(send, 'C1')).to.include({ message: 'slack: ratelimited', retryable: true, retryAfterMs: 3000 });

      const wrongToken = PROVIDER_DESCRIPTORS.find((p) => p.name === 'slack')!.create({ ...fake.config, botToken: 'xoxb-wrong' });
      fake.respond = undefined;
      expect(await failureOf(wrongToken, 'C1')).to.include({ message: 'slack: invalid_auth', retryable: false });
    });

    it('discord: the body\'s retry_after (seconds, fractional) gives the wait', async () => {
      fake = await startFakeProvider('discord');
      const send = PROVIDER_DESCRIPTORS.find((p) => p.name === 'discord')!.create(fake.config);
      fake.respond = () => ({ status: 429, body: { message: 'You are being rate limited.', retry_after: 1.234, global: false }, headers: { 'retry-after': '2' } });
      expect(await failureOf(send, '1')).to.include({ retryable: true, retryAfterMs: 1234 });
    });

    it('Retry-After as an HTTP date gives the time until then', async () => {
      fake = await startFakeProvider('signal');
      const send = PROVIDER_DESCRIPTORS.find((p) => p.name === 'signal')!.create(fake.config);
      fake.respond = () => ({ status: 503, body: { error: 'busy' }, headers: { 'retry-after': new Date(Date.now() + 60_000).toUTCString() } });
      const err = await failureOf(send, '+1');
      expect(err.retryAfterMs).to.be.within(58_000, 60_000);
    });

    it('imessage: a wrong password is refused without the password in the error', async () => {
      fake = await startFakeProvider('imessage');
      const send = PROVIDER_DESCRIPTORS.find((p) => p.name === 'imessage')!.create({ ...fake.config, password: 'wrong&pw', method: 'apple-script' });
      const err = await failureOf(send, fake.to);
      expect(err).to.include({ message: 'imessage: You are not authorized to access this resource', retryable: false });
    });

    describe('msteams tokens', () => {
      const teams = () => PROVIDER_DESCRIPTORS.find((p) => p.name === 'msteams')!;

      it('fetches a client-credentials token once and reuses it across sends', async () => {
        fake = await startFakeProvider('msteams');
        const send = teams().create(fake.config);
        await send(fake.to, 'one', OPTS);
        await send(fake.to, 'two', OPTS);
        const tokenCalls = fake.calls.filter((c) => c.kind === 'token');
        expect(tokenCalls).to.have.length(1);
        expect(tokenCalls[0]!.body).to.deep.equal({ grant_type: 'client_credentials', client_id: 'app-id-1', client_secret: fake.secret, scope: 'https://api.botframework.com/.default' });
        expect(fake.messages.map((m) => m.headers.authorization)).to.deep.equal(['Bearer issued-token-1', 'Bearer issued-token-1']);
      });

      it('fetches a new token once the cached one is about to expire', async () => {
        fake = await startFakeProvider('msteams');
        fake.tokenExpiresIn = 1; // renewed half-way through its life
        // The token's life on a fake clock (https://nodejs.org/api/test.html#class-mocktimers); only Date is faked.
        mock.timers.enable({ apis: ['Date'], now: Date.now() });
        try {
          const send = teams().create(fake.config);
          await send(fake.to, 'one', OPTS);
          await send(fake.to, 'two', OPTS);
          expect(fake.calls.filter((c) => c.kind === 'token')).to.have.length(1);
          mock.timers.tick(499);
          await send(fake.to, 'two and a half', OPTS);
          expect(fake.calls.filter((c) => c.kind === 'token'), 'still cached before half its life').to.have.length(1);
          mock.timers.tick(101);
          await send(fake.to, 'three', OPTS);
        } finally {
          mock.timers.reset();
        }
        expect(fake.calls.filter((c) => c.kind === 'token')).to.have.length(2);
        expect(fake.messages.at(-1)!.headers.authorization).to.not.equal(fake.messages[0]!.headers.authorization);
      });

      it('a 401 on the activity drops the cached token (retryable); the next send gets a new one', async () => {
        fake = await startFakeProvider('msteams');
        const send = teams().create(fake.config);
        await send(fake.to, 'one', OPTS);
        fake.revokeTokens();
        const err = await failureOf(send, fake.to);
        expect(err).to.include({ retryable: true, message: 'msteams: Authorization has been denied for this request.' });
        await send(fake.to, 'three', OPTS);
        expect(fake.calls.filter((c) => c.kind === 'token')).to.have.length(2);
      });

      it('a refused client secret fails at the token endpoint, for good, without the secret', async () => {
        fake = await startFakeProvider('msteams');
        const send = teams().create({ ...fake.config, appPassword: 'not-the-secret' });
        const err = await failureOf(send, fake.to);
        expect(err).to.include({ retryable: false, message: 'msteams: token: invalid_client: AADSTS7000215: Invalid client secret provided.' });
        expect(fake.messages).to.have.length(0);
      });
    });
  });
});
