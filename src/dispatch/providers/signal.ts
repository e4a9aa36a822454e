import type { ProvidersConfig } from '../../config/types.js';
import { section, text, url, type ProviderDescriptor } from './descriptor.js';
import { base, classify, failure, request, secretsOf } from './http.js';

/** `providers.signal`. */
export type SignalConfig = NonNullable<ProvidersConfig['signal']>;

/**
 * A signal-cli REST API (https://github.com/bbernhard/signal-cli-rest-api):
 * `POST {apiBase}/v2/send` `{message, number, recipients: [to]}`, answered 201 `{timestamp}`;
 * an error is `{error}`. It has no credential of its own: keep it on a private network.
 */
export const signal: ProviderDescriptor<SignalConfig> = {
  name: 'signal',
  schema: section('A signal-cli REST API server.', {
    number: text('The registered sender number, e.g. +4915112345678.', ''),
    apiBase: url('Base URL of the signal-cli REST API, e.g. http://127.0.0.1:8080.'),
  }, ['apiBase']),
  limit: 4000,
  summary: 'Run [signal-cli-rest-api](https://github.com/bbernhard/signal-cli-rest-api) and register or link the sender number with it (`/v1/register` or `/v1/qrcodelink`). It has no password of its own: keep it on a private network. `to` is a phone number or a group id (`group.…` from `/v1/groups/<number>`).',
  example: 'providers:\n  signal:\n    number: "+4915112345678"\n    apiBase: http://127.0.0.1:8080',
  required: ['apiBase', 'number'],
  create(cfg, fetchImpl) {
    const endpoint = `${base(cfg.apiBase)}/v2/send`;
    return async (to, text, opts) => {
      const secrets = secretsOf([], text);
      const answer = await request(fetchImpl, 'signal', endpoint, {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: text, number: cfg.number, recipients: [to] }),
      }, opts, secrets);
      if (answer.status < 300) return;
      const error = (answer.body as { error?: unknown } | undefined)?.error;
      throw failure('signal', typeof error === 'string' ? error : `HTTP ${answer.status}`, secrets, classify(answer));
    };
  },
};
