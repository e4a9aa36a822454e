import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, createRecorder } from './recorder.js';

/**
 * A stand-in for an upstream OpenClaw gateway's hooks endpoint with OpenClaw's own request rules
 * and error texts, as its source has them (openclaw/openclaw): src/gateway/server/
 * hooks-request-handler.ts (token, method and path; the replay cache, in memory as
 * docs/gateway/config-hooks.md says, keyed on token, path, dispatch fields and idempotency key)
 * and src/gateway/hooks.ts (`normalizeWakePayload`, `normalizeAgentPayload`,
 * `normalizeHookAgentDelivery`, `resolveEffectiveHookTargetAgentId`, `resolveHookSessionKey`).
 * `settings`: OpenClaw's defaults unless a spec changes them; `actions`: only what it acted on.
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

/** The upstream's `hooks.*` settings that decide what it accepts (OpenClaw's defaults by default). */
export interface UpstreamSettings {
  allowRequestSessionKey: boolean;
  /** Lower-case; empty: no restriction (OpenClaw's default: unset). */
  allowedSessionKeyPrefixes: string[];
  /** The configured agents (`agents.list`), the default first. */
  agents: string[];
}

export interface FakeUpstream {
  /** `runtime.forward.url`. */
  url: string;
  token: string;
  settings: UpstreamSettings;
  /** Every request, in arrival order. */
  calls: UpstreamCall[];
  /** What the upstream acted on: each wake and each agent run it started (a replayed key starts none). */
  actions: { path: 'wake' | 'agent'; key?: string; body: any; runId?: string }[];
  /** Overrides the answer per call (return undefined for the normal handling). */
  respond?: (call: UpstreamCall) => UpstreamAnswer | undefined;
  waitForCalls(n: number, timeoutMs?: number): Promise<UpstreamCall[]>;
  close(): Promise<void>;
}

/** The channel ids `channel` may name (OpenClaw: `last` and its registered channel plugins). */
const CHANNELS = ['last', 'whatsapp', 'telegram', 'signal', 'imessage', 'discord', 'slack', 'msteams'];
const MAX_KEY = 256;

const refuse = (error: string): UpstreamAnswer => ({ status: 400, body: { ok: false, error } });
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

export async function startFakeUpstream(opts: { base?: string; token?: string; port?: number; settings?: Partial<UpstreamSettings> } = {}): Promise<FakeUpstream> {
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
    if (url.pathname !== base && !url.pathname.startsWith(`${base}/`)) return { status: 404, body: 'Not Found' };
    if (url.searchParams.has('token')) return { status: 400, body: 'Hook token must be provided via Authorization: Bearer <token> or X-OpenClaw-Token header (query parameters are not allowed).' };
    if (call.method !== 'POST') return { status: 405, body: 'Method Not Allowed', headers: { allow: 'POST' } };
    const auth = call.headers.authorization;
    const given = auth?.toLowerCase().startsWith('bearer ') ? auth.slice(7).trim() : call.headers['x-openclaw-token'];
    if (given !== token) return { status: 401, body: 'Unauthorized' };
    if (call.body === undefined) return refuse('invalid JSON');
    const payload = call.body !== null && typeof call.body === 'object' && !Array.isArray(call.body) ? call.body : {};
    const sub = url.pathname.slice(base.length + 1);
    if (sub === 'wake') return wake(payload, call.headers);
    if (sub === 'agent') return agent(payload, call.headers);
    return { status: 404, body: 'Not Found' };
  }

  /** `resolveHookSessionKey` for a request key: the opt-in, then the prefixes. */
  function sessionKeyProblem(key: string): string | undefined {
    const { allowRequestSessionKey, allowedSessionKeyPrefixes: prefixes } = fake.settings;
    if (!allowRequestSessionKey) return 'sessionKey is disabled for externally supplied hook payload values; set hooks.allowRequestSessionKey=true to enable';
    if (prefixes.length > 0 && !prefixes.some((p) => key.toLowerCase().startsWith(p))) return `sessionKey must start with one of: ${prefixes.join(', ')}`;
    return undefined;
  }

  function agentProblem(raw: unknown): string | undefined {
    if (raw === undefined) return undefined;
    const id = text(raw);
    if (typeof raw !== 'string' || !id) return 'agentId must be a non-empty string';
    return fake.settings.agents.includes(id.toLowerCase()) ? undefined : `unknown agentId "${id.toLowerCase()}"`;
  }

  /** A wake has no replay identity in OpenClaw; its key header is only recorded. */
  function wake(p: Record<string, any>, headers: IncomingHttpHeaders): UpstreamAnswer {
    const message = text(p.text);
    if (!message) return refuse('text required');
    const mode = p.mode === 'next-heartbeat' ? 'next-heartbeat' : 'now';
    const agentProblemText = agentProblem(p.agentId);
    if (agentProblemText) return refuse(agentProblemText);
    const sessionKey = text(p.sessionKey);
    if (p.sessionKey !== undefined && !sessionKey) return refuse('sessionKey must be a non-empty string');
    if (mode === 'next-heartbeat' && sessionKey) return refuse('sessionKey requires mode=now');
    const keyProblem = sessionKey ? sessionKeyProblem(sessionKey) : undefined;
    if (keyProblem) return refuse(keyProblem);
    fake.actions.push({ path: 'wake', key: headers['x-openclaw-idempotency-key'] as string | undefined, body: p });
    return { status: 200, body: { ok: true, mode, eventOutcome: 'queued' } };
  }

  /** `normalizeHookAgentDelivery`: undefined when the destination fields are acceptable. */
  function deliveryProblem(p: Record<string, any>): string | undefined {
    if (p.deliver === false) return undefined;
    if (p.channel !== undefined && !(typeof p.channel === 'string' && CHANNELS.includes(p.channel.trim().toLowerCase()))) return `channel must be ${CHANNELS.join('|')}`;
    const hasChannel = p.channel !== undefined;
    const to = text(p.to);
    if (!hasChannel && p.to === undefined && p.accountId === undefined) return undefined;
    if (p.to !== undefined && !to) return 'to must be a non-empty string for hook delivery';
    if (!hasChannel || !to) return 'channel and to must be set together for hook delivery';
    if (p.channel.trim().toLowerCase() === 'last') return 'channel must name a concrete channel for hook delivery';
    return undefined;
  }

  function agent(p: Record<string, any>, headers: IncomingHttpHeaders): UpstreamAnswer {
    if (p.waitForCompletion !== undefined && typeof p.waitForCompletion !== 'boolean') return refuse('waitForCompletion must be boolean');
    const message = text(p.message);
    if (!message) return refuse('message required');
    const agentProblemText = agentProblem(p.agentId);
    if (agentProblemText) return refuse(agentProblemText);
    if (p.sessionMode !== undefined && p.sessionMode !== 'isolated' && p.sessionMode !== 'persistent') return refuse('sessionMode must be isolated or persistent');
    const delivery = deliveryProblem(p);
    if (delivery) return refuse(delivery);
    if (p.model !== undefined && !text(p.model)) return refuse('model required');
    const sessionKey = text(p.sessionKey);
    if (p.sessionMode === 'persistent' && !sessionKey) return refuse('sessionKey is required when sessionMode is persistent');
    const keyProblem = sessionKey ? sessionKeyProblem(sessionKey) : undefined;
    if (keyProblem) return refuse(keyProblem);
    if (p.sessionMode === 'persistent' && fake.settings.allowedSessionKeyPrefixes.length === 0) {
      return refuse('hooks.allowedSessionKeyPrefixes is required when direct hook sessionMode is persistent');
    }
    const key = [headers['idempotency-key'], headers['x-openclaw-idempotency-key'], p.idempotencyKey]
      .map(text).find((k) => k !== undefined && k.length <= MAX_KEY);
    // OpenClaw replays a key only for the same token, path and dispatch fields.
    const { idempotencyKey: _k, waitForCompletion: _w, ...dispatch } = p;
    const cacheKey = key && createHash('sha256').update(JSON.stringify([token, 'agent', dispatch, key])).digest('hex');
    const cached = cacheKey ? replay.get(cacheKey) : undefined;
    if (cached) return { status: 200, body: { ok: true, runId: cached } };
    const runId = randomUUID();
    if (cacheKey) replay.set(cacheKey, runId);
    fake.actions.push({ path: 'agent', key, body: p, runId });
    return { status: 200, body: { ok: true, runId } };
  }

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const fake: FakeUpstream = {
    url: `http://127.0.0.1:${port}${base}`,
    token,
    settings: { allowRequestSessionKey: false, allowedSessionKeyPrefixes: [], agents: ['main'], ...opts.settings },
    calls: [],
    actions: [],
    waitForCalls: (n, timeoutMs = 10_000) => recorder.waitFor(() => fake.calls, n, timeoutMs, 'calls'),
    close: () => closeServer(server),
  };
  return fake;
}
