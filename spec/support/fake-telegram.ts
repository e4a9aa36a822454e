import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, createRecorder } from './recorder.js';

/** One Bot API call the fake received: `POST /bot{token}/{method}`. */
export interface TelegramCall {
  token: string;
  method: string;
  body: { chat_id?: string | number; text?: string; [key: string]: unknown };
}

/** What the fake answers to one call; absent: `{ok:true, result:{message_id, …}}`. */
export interface TelegramAnswer {
  status: number;
  body: unknown;
  delayMs?: number;
}

/** A local Telegram Bot API stand-in for `providers.telegram.apiBase`. */
export interface FakeTelegram {
  apiBase: string;
  calls: TelegramCall[];
  /** The `sendMessage` calls, in arrival order. */
  readonly messages: TelegramCall[];
  /** Decides the answer per call; return undefined for the default success. */
  respond?: (call: TelegramCall) => TelegramAnswer | undefined;
  /** Resolves once `n` sendMessage calls have arrived. */
  waitForMessages(n: number, timeoutMs?: number): Promise<TelegramCall[]>;
  close(): Promise<void>;
}

/** An error answer as the Bot API writes it. */
export function telegramError(status: number, description: string, retryAfter?: number): TelegramAnswer {
  return { status, body: { ok: false, error_code: status, description, ...(retryAfter ? { parameters: { retry_after: retryAfter } } : {}) } };
}

/** Starts the fake on 127.0.0.1 with an ephemeral port. */
export async function startFakeTelegram(): Promise<FakeTelegram> {
  const calls: TelegramCall[] = [];
  const recorder = createRecorder<TelegramCall>('fake telegram');
  let nextId = 1;

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const m = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !m) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: false, error_code: 404, description: 'Not Found' }));
      return;
    }
    const call: TelegramCall = { token: decodeURIComponent(m[1]!), method: m[2]!, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') };
    calls.push(call);
    recorder.recorded();
    const answer = fake.respond?.(call) ?? {
      status: 200,
      body: { ok: true, result: { message_id: nextId++, chat: { id: call.body.chat_id }, date: Math.floor(Date.now() / 1000), text: call.body.text } },
    };
    if (answer.delayMs) {
      const gone = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), answer.delayMs);
        res.on('close', () => { clearTimeout(t); resolve(true); });
      });
      if (gone) return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeTelegram = {
    apiBase: `http://127.0.0.1:${port}`,
    calls,
    get messages() {
      return calls.filter((c) => c.method === 'sendMessage');
    },
    waitForMessages: (n, timeoutMs = 5000) => recorder.waitFor(() => fake.messages, n, timeoutMs, 'messages'),
    close: () => closeServer(server),
  };
  return fake;
}
