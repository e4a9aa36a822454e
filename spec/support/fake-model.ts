import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, createRecorder } from './recorder.js';

/** One request the fake model received (the parsed Chat Completions body). */
export interface ModelRequestRecord {
  body: {
    model: string;
    messages: { role: string; content: string }[];
    reasoning_effort?: string;
    [key: string]: unknown;
  };
  headers: IncomingMessage['headers'];
  /** The last user message's content (what rules match on). */
  user: string;
  /** When it arrived (ms since the epoch). */
  at: number;
  /** When it was answered (absent: not yet, or the client hung up first). */
  endedAt?: number;
}

/** How the fake answers: the first rule whose `match`, `when` and `times` allow it wins; with none, `ok`. */
export interface ModelRule {
  match?: string;
  when?: (req: ModelRequestRecord) => boolean;
  times?: number;
  /** Assistant content for a 200 answer (default `ok`). */
  reply?: string;
  /** Wait this long before answering; a client that hangs up meanwhile gets nothing. */
  delayMs?: number;
  /** Answer only once this settles (a spec changes something while the run is in flight). */
  held?: Promise<unknown>;
  /** Non-200: answers `{error:{message, type, param, code}}` with this status. */
  status?: number;
  error?: { message?: string; type?: string; param?: string | null; code?: string | null };
  headers?: Record<string, string>;
}

/** A local OpenAI-compatible `/v1/chat/completions` server (non-streaming JSON). */
export interface FakeModel {
  /** Base URL for `agent.baseUrl` (ends in `/v1`). */
  baseUrl: string;
  requests: ModelRequestRecord[];
  rules: ModelRule[];
  /** The most requests matching `which` (absent: all) in progress at one moment (1: none overlapped). */
  maxOverlap(which?: (req: ModelRequestRecord) => boolean): number;
  /** Resolves once `n` requests have arrived (rejects after `timeoutMs`). */
  waitForRequests(n: number, timeoutMs?: number): Promise<ModelRequestRecord[]>;
  close(): Promise<void>;
}

/** Starts the fake on 127.0.0.1 with an ephemeral port. */
export async function startFakeModel(rules: ModelRule[] = []): Promise<FakeModel> {
  const requests: ModelRequestRecord[] = [];
  const recorder = createRecorder<ModelRequestRecord>('fake model');
  const uses = new Map<ModelRule, number>();

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    // As Ollama, vLLM or OpenAI: the one path is /v1/chat/completions; anything else is 404
    // without an error code (a base URL without /v1 ends up here).
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ModelRequestRecord['body'];
    const users = body.messages.filter((m) => m.role === 'user');
    const record: ModelRequestRecord = { body, headers: req.headers, user: users[users.length - 1]?.content ?? '', at: Date.now() };
    requests.push(record);
    recorder.recorded();

    const rule = fake.rules.find((r) => {
      if (r.times !== undefined && (uses.get(r) ?? 0) >= r.times) return false;
      if (r.match !== undefined && !record.user.includes(r.match)) return false;
      return r.when ? r.when(record) : true;
    });
    if (rule) uses.set(rule, (uses.get(rule) ?? 0) + 1);

    if (rule?.delayMs) {
      const gone = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), rule.delayMs);
        res.on('close', () => { clearTimeout(t); resolve(true); });
      });
      if (gone) return;
    }
    if (rule?.held) await rule.held;
    const headers = { 'content-type': 'application/json', ...rule?.headers };
    if (rule?.status && rule.status !== 200) {
      const error = { message: 'fake model error', type: 'invalid_request_error', param: null, code: null, ...rule.error };
      record.endedAt = Date.now();
      res.writeHead(rule.status, headers).end(JSON.stringify({ error }));
      return;
    }
    record.endedAt = Date.now();
    res.writeHead(200, headers).end(
      JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: rule?.reply ?? 'ok', refusal: null }, finish_reason: 'stop', logprobs: null }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeModel = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    rules,
    maxOverlap: (which = () => true) => {
      // Sweep the start and end moments in time order (an end before a start at the same ms).
      const moments = requests.filter(which).flatMap((r) => [[r.at, 1], [r.endedAt ?? Infinity, -1]] as const)
        .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      let now = 0;
      let most = 0;
      for (const [, d] of moments) most = Math.max(most, (now += d));
      return most;
    },
    waitForRequests: (n, timeoutMs = 5000) => recorder.waitFor(() => requests, n, timeoutMs, 'requests'),
    close: () => closeServer(server),
  };
  return fake;
}
