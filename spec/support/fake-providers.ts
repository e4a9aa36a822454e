import { expect } from 'chai';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Provider } from '../../src/config/types.js';
import { closeServer, createRecorder } from './recorder.js';
import type { Delivery } from '../../src/dispatch/delivery.js';
import { DeliveryError } from '../../src/dispatch/providers/sender.js';

/** Stand-ins for the seven delivery providers' HTTP APIs, each with its real path, auth, body fields and answers. */

/** One request the fake received. */
export interface ProviderCall {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** JSON bodies parsed; form bodies (the Teams token request) as a record. */
  body: any;
  /** `send` for a message, `token` for a Teams token request. */
  kind: 'send' | 'token';
}

/** What the fake answers to one call; absent: the provider's own success. */
export interface FakeAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Answer only after this long (a time-out spec); nothing is sent when the client gave up. */
  delayMs?: number;
}

export interface FakeProvider {
  name: Provider;
  apiBase: string;
  /** `providers.<name>` pointing at this fake, with its credentials. */
  config: Record<string, string>;
  /** The credential the fake checks (never to appear in an error). */
  secret: string;
  /** A recipient in the provider's own kind of address. */
  to: string;
  calls: ProviderCall[];
  /** Every request that arrived, refused ones too: its method and path as sent (undecoded). */
  requests: { method: string; path: string }[];
  /** The message sends, in arrival order. */
  readonly messages: ProviderCall[];
  /** The text of each message send, in order. */
  readonly texts: string[];
  /** Decides the answer per call; return undefined for the default success. */
  respond?: (call: ProviderCall) => FakeAnswer | undefined;
  /** An error in the provider's own shape. */
  error(status: number, reason: string, retryAfterSeconds?: number): FakeAnswer;
  /** Teams only: the lifetime of the tokens it issues (seconds), and forgetting every token issued. */
  tokenExpiresIn: number;
  revokeTokens(): void;
  waitForMessages(n: number, timeoutMs?: number): Promise<ProviderCall[]>;
  close(): Promise<void>;
}

const SECRETS: Record<Provider, string> = {
  whatsapp: 'EAAG-whatsapp-SECRET-token',
  telegram: '123456:SECRET-bot-token',
  signal: '',
  imessage: 'bb p@ss/SECRET?&',
  discord: 'MTk.discord-SECRET-token',
  slack: 'xoxb-slack-SECRET-token',
  msteams: 'teams~SECRET~password',
};

const RECIPIENTS: Record<Provider, string> = {
  whatsapp: '15551234567',
  telegram: '555',
  signal: '+15557654321',
  imessage: 'iMessage;-;+15551234567',
  discord: '1234567890123',
  slack: 'C0123ABCD',
  msteams: 'a:1Xyz_conversation@thread.skype',
};

const json = (status: number, body: unknown, headers: Record<string, string> = {}): FakeAnswer => ({ status, body, headers });

/** Starts the fake of `name` on 127.0.0.1 with an ephemeral port. */
export async function startFakeProvider(name: Provider): Promise<FakeProvider> {
  const calls: ProviderCall[] = [];
  const requests: FakeProvider['requests'] = [];
  const recorder = createRecorder<ProviderCall>(`fake ${name}`);
  const secret = SECRETS[name];
  let nextId = 1;
  let tokens = new Set<string>();

  /** Routes a request: the kind of call, or the refusal the real API gives. */
  function route(method: string, path: string, query: Record<string, string>, h: IncomingHttpHeaders): ProviderCall['kind'] | FakeAnswer {
    const notFound = json(404, { error: 'not found' });
    if (method !== 'POST') return json(405, { error: 'method not allowed' });
    switch (name) {
      case 'whatsapp':
        if (path !== '/v21.0/106540352242922/messages') return notFound;
        if (h.authorization !== `Bearer ${secret}`) return fake.error(401, 'Invalid OAuth access token - Cannot parse access token');
        return 'send';
      case 'telegram':
        if (!path.startsWith('/bot') || !path.endsWith('/sendMessage')) return notFound;
        if (decodeURIComponent(path.slice(4, -'/sendMessage'.length)) !== secret) return fake.error(401, 'Unauthorized');
        return 'send';
      case 'signal':
        return path === '/v2/send' ? 'send' : notFound;
      case 'imessage':
        if (path !== '/api/v1/message/text') return notFound;
        if (query.password !== secret) return fake.error(401, 'You are not authorized to access this resource');
        return 'send';
      case 'discord':
        if (!/^\/api\/v10\/channels\/[^/]+\/messages$/.test(path)) return json(404, { message: '404: Not Found', code: 0 });
        if (h.authorization !== `Bot ${secret}`) return json(401, { message: '401: Unauthorized', code: 0 });
        return 'send';
      case 'slack':
        if (path !== '/api/chat.postMessage') return notFound;
        if (h.authorization !== `Bearer ${secret}`) return json(200, { ok: false, error: 'invalid_auth' });
        return 'send';
      case 'msteams':
        if (path === '/botframework.com/oauth2/v2.0/token') return 'token';
        if (!/^\/teams\/v3\/conversations\/[^/]+\/activities$/.test(path)) return notFound;
        if (!tokens.has(String(h.authorization).replace(/^Bearer /, ''))) return json(401, { message: 'Authorization has been denied for this request.' });
        return 'send';
    }
  }

  function success(call: ProviderCall): FakeAnswer {
    const id = nextId++;
    switch (name) {
      case 'whatsapp':
        return json(200, { messaging_product: 'whatsapp', contacts: [{ input: call.body.to, wa_id: call.body.to }], messages: [{ id: `wamid.${id}` }] });
      case 'telegram':
        return json(200, { ok: true, result: { message_id: id, chat: { id: call.body.chat_id }, date: Math.floor(Date.now() / 1000), text: call.body.text } });
      case 'signal':
        return json(201, { timestamp: String(Date.now()) });
      case 'imessage':
        return json(200, { status: 200, message: 'Message sent!', data: { guid: `guid-${id}`, tempGuid: call.body.tempGuid, text: call.body.message } });
      case 'discord':
        return json(200, { id: String(id), channel_id: call.path.split('/')[4], content: call.body.content, type: 0 });
      case 'slack':
        return json(200, { ok: true, channel: call.body.channel, ts: `1700000000.${String(id).padStart(6, '0')}`, message: { text: call.body.text } });
      case 'msteams':
        return json(201, { id: `activity-${id}` });
    }
  }

  function issueToken(call: ProviderCall): FakeAnswer {
    const b = call.body;
    if (b.grant_type !== 'client_credentials' || b.scope !== 'https://api.botframework.com/.default') {
      return json(400, { error: 'invalid_request', error_description: 'AADSTS900144: The request body must contain the parameters grant_type and scope.' });
    }
    if (b.client_id !== 'app-id-1' || b.client_secret !== secret) {
      return json(401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.\r\nTrace ID: 1' });
    }
    const token = `issued-token-${nextId++}`;
    tokens.add(token);
    return json(200, { token_type: 'Bearer', expires_in: fake.tokenExpiresIn, ext_expires_in: fake.tokenExpiresIn, access_token: token });
  }

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    requests.push({ method: req.method ?? '', path: (req.url ?? '/').split('?')[0]! });
    const u = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(u.searchParams);
    const routed = route(req.method ?? '', u.pathname, query, req.headers);
    let answer: FakeAnswer;
    if (typeof routed === 'string') {
      const form = String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded');
      const body = form ? Object.fromEntries(new URLSearchParams(raw)) : JSON.parse(raw || '{}');
      const call: ProviderCall = { method: req.method!, path: u.pathname, query, headers: req.headers, body, kind: routed };
      calls.push(call);
      recorder.recorded();
      answer = fake.respond?.(call) ?? (routed === 'token' ? issueToken(call) : success(call));
    } else {
      answer = routed;
    }
    if (answer.delayMs) {
      const gone = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), answer.delayMs);
        res.on('close', () => { clearTimeout(t); resolve(true); });
      });
      if (gone) return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body === undefined ? '' : JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const apiBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const configs: Record<Provider, Record<string, string>> = {
    whatsapp: { accessToken: secret, phoneNumberId: '106540352242922', apiVersion: 'v21.0', apiBase },
    telegram: { botToken: secret, apiBase },
    signal: { number: '+15550001111', apiBase },
    imessage: { password: secret, apiBase, method: 'apple-script' },
    discord: { botToken: secret, apiBase },
    slack: { botToken: secret, apiBase },
    msteams: { appId: 'app-id-1', appPassword: secret, tokenUrl: `${apiBase}/botframework.com/oauth2/v2.0/token`, serviceUrl: `${apiBase}/teams/` },
  };

  const fake: FakeProvider = {
    name,
    apiBase,
    config: configs[name],
    secret,
    to: RECIPIENTS[name],
    calls,
    requests,
    get messages() {
      return calls.filter((c) => c.kind === 'send');
    },
    get texts() {
      return fake.messages.map((c) => textOf(name, c.body));
    },
    tokenExpiresIn: 3599,
    revokeTokens: () => { tokens = new Set(); },
    error(status, reason, retryAfter) {
      const header: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': String(Math.ceil(retryAfter)) };
      switch (name) {
        case 'whatsapp':
          return json(status, { error: { message: reason, type: 'OAuthException', code: status === 429 ? 130429 : 100, fbtrace_id: 'AbC' } }, header);
        case 'telegram':
          return json(status, { ok: false, error_code: status, description: reason, ...(retryAfter === undefined ? {} : { parameters: { retry_after: retryAfter } }) });
        case 'signal':
          return json(status, { error: reason }, header);
        case 'imessage':
          return json(status, { status, message: 'Error', error: { type: 'Server Error', message: reason } }, header);
        case 'discord':
          return json(status, { message: reason, code: status === 429 ? 0 : 50001, ...(retryAfter === undefined ? {} : { retry_after: retryAfter, global: false }) }, header);
        case 'slack':
          return json(status, { ok: false, error: reason }, header);
        case 'msteams':
          return json(status, { error: { code: 'BadArgument', message: reason } }, header);
      }
    },
    waitForMessages: (n, timeoutMs = 5000) => recorder.waitFor(() => fake.messages, n, timeoutMs, 'messages'),
    close: () => closeServer(server),
  };
  return fake;
}

/** The message text of a send, wherever the provider puts it. */
export function textOf(name: Provider, body: any): string {
  if (name === 'whatsapp') return body.text?.body;
  if (name === 'signal' || name === 'imessage') return body.message;
  return name === 'discord' ? body.content : body.text;
}

/** What each provider's API must receive for `text` to its kind of address (CONTRACT.md §3). */
const EXPECTED: Record<Provider, (f: FakeProvider, call: ProviderCall, text: string) => void> = {
  whatsapp(f, c, text) {
    expect(c.path).to.equal('/v21.0/106540352242922/messages');
    expect(c.headers.authorization).to.equal(`Bearer ${f.secret}`);
    expect(c.body).to.deep.equal({ messaging_product: 'whatsapp', recipient_type: 'individual', to: f.to, type: 'text', text: { body: text } });
  },
  telegram(f, c, text) {
    expect(c.path).to.equal(`/bot${f.secret}/sendMessage`);
    expect(c.body).to.deep.equal({ chat_id: f.to, text: text });
  },
  signal(f, c, text) {
    expect(c.path).to.equal('/v2/send');
    expect(c.body).to.deep.equal({ message: text, number: '+15550001111', recipients: [f.to] });
  },
  imessage(f, c, text) {
    expect(c.path).to.equal('/api/v1/message/text');
    expect(c.query).to.deep.equal({ password: f.secret });
    expect(c.body).to.have.keys('chatGuid', 'tempGuid', 'message', 'method');
    expect(c.body).to.include({ chatGuid: f.to, message: text, method: 'apple-script' });
    expect(c.body.tempGuid).to.be.a('string').and.match(/^temp-[0-9a-f-]{36}$/);
  },
  discord(f, c, text) {
    expect(c.path).to.equal(`/api/v10/channels/${f.to}/messages`);
    expect(c.headers.authorization).to.equal(`Bot ${f.secret}`);
    expect(c.body).to.deep.equal({ content: text });
  },
  slack(f, c, text) {
    expect(c.path).to.equal('/api/chat.postMessage');
    expect(c.headers.authorization).to.equal(`Bearer ${f.secret}`);
    expect(c.body).to.deep.equal({ channel: f.to, text: text });
  },
  msteams(f, c, text) {
    expect(c.path).to.equal(`/teams/v3/conversations/${encodeURIComponent(f.to)}/activities`);
    expect(c.headers.authorization).to.match(/^Bearer issued-token-\d+$/);
    expect(c.body).to.deep.equal({ type: 'message', text: text });
  },
};

/** Asserts that `call` is exactly the documented request for `text` to `fake.to`. */
export function expectSend(fake: FakeProvider, call: ProviderCall, text: string): void {
  expect(call.method).to.equal('POST');
  EXPECTED[fake.name](fake, call, text);
}

/** Sends `text` as one outbox attempt does (split, parts in order, the first failure thrown), without the outbox. */
export async function sendAllParts(delivery: Delivery, target: { provider: Provider; to: string }, text: string): Promise<void> {
  const sender = delivery.sender(target.provider);
  if ('problem' in sender) throw new DeliveryError(sender.problem);
  for (const part of delivery.split(target.provider, text)) await sender(target.to, part, { timeoutMs: 5000 });
}
