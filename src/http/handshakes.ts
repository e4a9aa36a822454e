import type { IncomingHttpHeaders } from 'node:http';
import type { MappingConfig } from '../config/types.js';
import { HookError } from '../errors.js';
import { append } from '../append.js';
import type { MappingAnswer } from '../mapping-answer.js';
import type { Handshake, HandshakeFailure, HandshakeRequest } from '../senders/handshake.js';
import type { Store } from '../store/store.js';
import type { Auth } from './auth.js';

/** The store's side of Asana's kept secret; the fixtures' dry run passes one in memory. */
export type HookSecrets = Pick<Store, 'keepHookSecret' | 'hookSecret'>;

/** A handshake answered: its mapping, and the answer (written like a mapping's own, CONTRACT.md §12). */
export interface Answered {
  mappingId: string;
  answer: MappingAnswer;
}

interface Entry {
  id: string;
  handshake: Handshake;
  verify: NonNullable<MappingConfig['verify']>;
  standsIn: boolean;
}

export interface HandshakeInput {
  name: string;
  method: 'GET' | 'POST';
  query: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  bySignature: boolean;
  routes?: ReadonlySet<string>;
  address: () => string;
}

/**
 * Every sender's handshake (CONTRACT.md §8, §12, §15) in one place: answered with no action, only
 * when it passes its own check (signed ones once the signature passed), its failures counted.
 */
export function createHandshakes(
  mappings: readonly MappingConfig[], handshakeOf: (scheme: string) => Handshake | undefined,
  deps: { auth: Pick<Auth, 'passed' | 'failed'>; secrets?: HookSecrets },
) {
  const byName = new Map<string, Entry[]>();
  for (const m of mappings) {
    const handshake = m.verify && handshakeOf(m.verify.scheme);
    if (!handshake || m.match.path === undefined) continue;
    append(byName, m.match.path, { id: m.id, handshake, verify: m.verify!, standsIn: m.auth === 'signature' });
  }
  const takesGet = new Set([...byName].filter(([, list]) => list.some((e) => e.handshake.method === 'GET')).map(([name]) => name));

  const request = (req: HandshakeInput, json: () => Record<string, unknown> | undefined): HandshakeRequest => ({
    method: req.method, query: new URLSearchParams(req.query), headers: req.headers, body: req.body, json,
  });
  const candidates = (req: HandshakeInput, check: Handshake['check']) => (byName.get(req.name) ?? [])
    .filter((e) => e.handshake.check === check && e.handshake.method === req.method && (!req.bySignature || e.standsIn));

  async function answer(e: Entry, hs: HandshakeRequest, req: HandshakeInput): Promise<Answered> {
    if (req.routes !== undefined && !req.routes.has(e.id)) {
      throw new HookError('forbidden', `this hooks token does not reach mapping "${e.id}": add it to the token's routes (hooks.tokens[].routes) or send with another token`);
    }
    const secrets = deps.secrets;
    const ctx = {
      mappingId: e.id, verify: e.verify, bySignature: req.bySignature,
      keepSecret: (secret: string, replace: boolean) => (secrets ? secrets.keepHookSecret(e.id, secret, replace) : Promise.reject(new Error('no store for handshake secrets'))),
    };
    return { mappingId: e.id, answer: await e.handshake.answer(hs, ctx) };
  }

  return {
    /** True when NAME has a mapping whose sender makes a handshake: only then is a request looked at for one. */
    on: (name: string): boolean => byName.has(name),
    /** True when NAME has a mapping whose sender's handshake is a GET (Meta's, Dropbox's): the gate takes it, not 405. */
    takesGet: (name: string): boolean => takesGet.has(name),

    /** A handshake recognised by its form, answered or refused in place of a signature (the first mapping whose check passes). */
    async own(req: HandshakeInput): Promise<Answered | undefined> {
      const hs = request(req, () => undefined);
      const list = candidates(req, 'own').filter((e) => e.handshake.is(hs));
      if (list.length === 0) return undefined;
      let refusal: HandshakeFailure | undefined;
      for (const e of list) {
        try {
          const answered = await answer(e, hs, req);
          if (e.handshake.passes) deps.auth.passed(req.address(), e.handshake.passes);
          return answered;
        } catch (err) {
          if (!(err instanceof HookError)) throw err;
          refusal ??= err;
        }
      }
      const counts = refusal!.counts;
      if (counts !== undefined) {
        const verdict = deps.auth.failed(req.address(), counts);
        if (verdict.code === 'rate_limited') throw new HookError('rate_limited', 'too many failed attempts from this address; retry later', { 'retry-after': String(verdict.retryAfter) });
      }
      throw refusal!;
    },

    /** A signed handshake of a mapping whose signature passed (`signedBy`), answered; undefined when the request is none. */
    async signed(req: HandshakeInput, signedBy: ReadonlySet<string>, payload: () => Promise<unknown>): Promise<Answered | undefined> {
      const list = candidates(req, 'signature').filter((e) => signedBy.has(e.id));
      if (list.length === 0) return undefined;
      // The body is read as JSON only for a sender whose handshake is in its JSON.
      const parsed = await payload().catch(() => undefined);
      const hs = request(req, () => (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed as Record<string, unknown> : undefined));
      const e = list.find((x) => x.handshake.is(hs));
      return e && answer(e, hs, req);
    },
  };
}
