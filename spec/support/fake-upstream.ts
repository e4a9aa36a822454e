import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, createRecorder } from './recorder.js';

/**
 * A local stand-in for an upstream OpenClaw gateway's hooks endpoint, speaking its wire
 * protocol (openclaw/openclaw src/gateway/server-http.ts, createHooksRequestHandler):
 * POST only (else 405 text/plain with Allow), `Authorization: Bearer` or `x-openclaw-token`
 * (else 401 text/plain "Unauthorized"), a query token refused with 400, `POST {base}/wake`
 * `{text, mode?}` → 200 `{ok:true, mode}`, `POST {base}/agent` `{message, …}` → 200
 * `{ok:true, runId}`, a bad body → 400 `{ok:false, error:"…"}`, an unknown path → 404. Like
 * OpenClaw, an agent request repeating an `X-OpenClaw-Idempotency-Key` gets the first runId
 * again and starts nothing new; `actions` records only what the upstream acted on.
 */

export interface UpstreamCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

/** What the fake answers to one call; absent: OpenClaw's own handling. */
export interface UpstreamAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeUpstream {
  /** `runtime.forward.url`. */
  url: string;
  token: string;
  /** Every request, in arrival order. */
  calls: UpstreamCall[];
  /** What the upstream acted on: each wake and each agent run it started (a replayed key starts none). */
  actions: { path: 'wake' | 'agent'; key?: string; body: any; runId?: string }[];
  /** Overrides the answer per call (return undefined for the normal handling). */
  respond?: (call: UpstreamCall) => UpstreamAnswer | undefined;
  waitForCalls(n: number, timeoutMs?: number): Promise<UpstreamCall[]>;
  close(): Promise<void>;
}

export async function startFakeUpstream(opts: { base?: string; token?: string; port?: number } = {}): Promise<FakeUpstream> {
  const base = opts.base ?? '/hooks';
  const token = opts.token ?? 'upstream-SECRET-token-42';
  const recorder = createRecorder<UpstreamCall>('fake upstream');
  const replay = new Map<string, string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        body = undefined;
      }
      const url = new URL(req.url ?? '/', 'http://localhost');
      const call: UpstreamCall = { method: req.method ?? '', path: url.pathname, headers: req.headers, body };
      fake.calls.push(call);
      const answer = fake.respond?.(call) ?? handle(call, url);
      res.writeHead(answer.status, {
        'content-type': typeof answer.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
        ...answer.headers,
      });
      res.end(typeof answer.body === 'string' ? answer.body : answer.body === undefined ? undefined : JSON.stringify(answer.body));
      recorder.recorded();
    });
  });

  function handle(call: UpstreamCall, url: URL): UpstreamAnswer {
    if (!url.pathname.startsWith(`${base}/`)) return { status: 404, body: 'Not Found' };
    if (url.searchParams.has('token')) return { status: 400, body: 'Hook token must be provided via Authorization: Bearer <token> or X-OpenClaw-Token header (query parameters are not allowed).' };
    if (call.method !== 'POST') return { status: 405, body: 'Method Not Allowed', headers: { allow: 'POST' } };
    const auth = call.headers.authorization;
    const given = auth?.startsWith('Bearer ') ? auth.slice(7).trim() : call.headers['x-openclaw-token'];
    if (given !== token) return { status: 401, body: 'Unauthorized' };
    if (call.body === undefined) return { status: 400, body: { ok: false, error: 'invalid JSON' } };
    const key = (call.headers['idempotency-key'] ?? call.headers['x-openclaw-idempotency-key']) as string | undefined;
    const sub = url.pathname.slice(base.length + 1);
    if (sub === 'wake') {
      if (typeof call.body.text !== 'string' || !call.body.text.trim()) return { status: 400, body: { ok: false, error: 'text required' } };
      const mode = call.body.mode === 'next-heartbeat' ? 'next-heartbeat' : 'now';
      fake.actions.push({ path: 'wake', key, body: call.body });
      return { status: 200, body: { ok: true, mode } };
    }
    if (sub === 'agent') {
      if (typeof call.body.message !== 'string' || !call.body.message.trim()) return { status: 400, body: { ok: false, error: 'message required' } };
      const cached = key ? replay.get(key) : undefined;
      if (cached) return { status: 200, body: { ok: true, runId: cached } };
      const runId = randomUUID();
      if (key) replay.set(key, runId);
      fake.actions.push({ path: 'agent', key, body: call.body, runId });
      return { status: 200, body: { ok: true, runId } };
    }
    return { status: 404, body: 'Not Found' };
  }

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const fake: FakeUpstream = {
    url: `http://127.0.0.1:${port}${base}`,
    token,
    calls: [],
    actions: [],
    waitForCalls: (n, timeoutMs = 10_000) => recorder.waitFor(() => fake.calls, n, timeoutMs, 'calls'),
    close: () => closeServer(server),
  };
  return fake;
}
