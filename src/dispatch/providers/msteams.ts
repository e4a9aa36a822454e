import type { ProvidersConfig } from '../../config/types.js';
import { base, classify, failure, pathSegment, request, secretsOf } from './http.js';
import type { Sender, SendOptions } from './sender.js';

/** The Bot Connector's audience (https://learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-authentication). */
const SCOPE = 'https://api.botframework.com/.default';
/** Renewed this long before it expires (at most half its lifetime). */
const MARGIN_MS = 5 * 60_000;

/** Microsoft Teams through the Bot Framework's client-credentials token; a 401 drops the cached token and is retryable. */
export function msteams(cfg: NonNullable<ProvidersConfig['msteams']>): Sender {
  const root = `${base(cfg.serviceUrl)}/v3/conversations/`;
  let cached: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;

  async function fetchToken(opts: SendOptions): Promise<string> {
    const answer = await request('msteams', cfg.tokenUrl, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: cfg.appId, client_secret: cfg.appPassword, scope: SCOPE }).toString(),
    }, opts, [cfg.appPassword]);
    const body = answer.body as { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } | undefined;
    if (answer.status < 300 && typeof body?.access_token === 'string') {
      const lifetimeMs = (typeof body.expires_in === 'number' ? body.expires_in : Number(body.expires_in ?? 0) || 0) * 1000;
      cached = { token: body.access_token, renewAt: Date.now() + lifetimeMs - Math.min(MARGIN_MS, lifetimeMs / 2) };
      return body.access_token;
    }
    // Entra ID answers {error, error_description}; the description starts with its AADSTS code.
    const description = typeof body?.error_description === 'string' ? body.error_description.split(/\r?\n/)[0] : undefined;
    const reason = typeof body?.error === 'string' ? `${body.error}${description ? `: ${description}` : ''}` : `HTTP ${answer.status}`;
    throw failure('msteams', `token: ${reason}`, [cfg.appPassword], classify(answer));
  }

  function token(opts: SendOptions): Promise<string> {
    if (cached && Date.now() < cached.renewAt) return Promise.resolve(cached.token);
    pending ??= fetchToken(opts).finally(() => { pending = undefined; });
    return pending;
  }

  return async (to, text, opts) => {
    const conversation = pathSegment('msteams', to, 'conversation id');
    const bearer = await token(opts);
    const secrets = secretsOf([cfg.appPassword, bearer], text);
    const answer = await request('msteams', `${root}${conversation}/activities`, {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ type: 'message', text }),
    }, opts, secrets);
    if (answer.status < 300) return;
    // Bot Framework errors are {error: {code, message}}; its 401 is ASP.NET's {message}.
    const body = answer.body as { error?: { code?: unknown; message?: unknown }; message?: unknown } | undefined;
    const error = body?.error;
    const reason = typeof error?.message === 'string'
      ? `${typeof error.code === 'string' ? `${error.code}: ` : ''}${error.message}`
      : body?.message ?? `HTTP ${answer.status}`;
    if (answer.status === 401) {
      if (cached?.token === bearer) cached = undefined;
      throw failure('msteams', reason, secrets, { retryable: true });
    }
    throw failure('msteams', reason, secrets, classify(answer));
  };
}
