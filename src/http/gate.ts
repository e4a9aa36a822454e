import type { IncomingMessage } from 'node:http';
import type { DefaultState, Middleware } from 'koa';
import type { ErrorCode } from '../errors.js';
import { createRouting, methodAllowed, ROUTE_KINDS, type Route } from './routes-table.js';
import { parseTarget } from '../request-target.js';
import type { Auth, CredentialKind } from './auth.js';
import { refuse } from './answer.js';
import type { Exchange, ExchangeContext } from './exchange.js';
import { printable } from '../printable.js';
import { credentialHeaders, withoutCredentialParams } from '../credentials.js';
import type { BodyLimits } from './body-limits.js';
import type { Signatures } from './signatures.js';
import type { MappedMethods } from '../engine/engine.js';
import type { HooksConfig } from '../config/types.js';

export interface GateOptions {
  hooks: Pick<HooksConfig, 'path' | 'enabled' | 'maxBodyBytes' | 'allowQueryToken' | 'keepBodies' | 'mappings'>;
  console: boolean;
  metrics: boolean;
  bodyLimit: BodyLimits;
  auth: Auth;
  clientAddress: (req: IncomingMessage) => string;
  /** Whether a signature may stand in for the token (`auth: signature`), and which hooks take a sender's handshake GET. */
  signatures: Pick<Signatures, 'standsIn' | 'takesGet'>;
  /** The methods the mappings take on {hooks.path}/NAME (engine.ts `methods`, from the compiled mappings). */
  mappedMethods: (name: string) => MappedMethods;
  /** The seq a console replay repeats, when its marker is good for this route (replay.ts); undefined for any other request. */
  replayOf: (req: IncomingMessage, route: Route) => number | undefined;
  /** True for a request that Node handed over to be told `100 Continue` or refused (server.ts). */
  expectsContinue: (req: IncomingMessage) => boolean;
}

/**
 * The one place a request is routed (STYLE.md #13), and its refusals before any byte of the body,
 * in the order of CONTRACT.md §4–5: 405 → a console replay's marker → the credential (401/429;
 * also for targets that cannot be parsed) → 403 for a scoped token → 400 → 404 → 413 on
 * Content-Length. `Expect: 100-continue` is answered only for what passes.
 */
export function createGate(opts: GateOptions): Middleware<DefaultState, ExchangeContext> {
  const { hooks, signatures } = opts;
  const route = createRouting(hooks.path, hooks.enabled, { metrics: opts.metrics, console: opts.console });
  const drainable = hooks.maxBodyBytes;
  const secretHeaders = credentialHeaders(hooks.mappings);
  const places = ['Authorization: Bearer <token>', 'x-hookrelay-token: <token>', 'x-openclaw-token: <token>', ...(hooks.allowQueryToken ? ['?token=<token>'] : [])];
  const sendIt = `send it as ${places.slice(0, -1).join(', ')} or ${places[places.length - 1]}`;
  const deny = (ex: Exchange, code: ErrorCode, message: string, headers?: Record<string, string>) => refuse(ex, code, message, headers, drainable);
  return function gate(ctx, next) {
    const ex = ctx.exchange;
    const req = ex.req;
    const target = parseTarget(req.url ?? '/');
    const decided = target && route(target);
    const method = req.method ?? 'GET';
    if (decided) {
      ex.route = decided;
      ex.label = ROUTE_KINDS[decided.kind].label;
      if (decided.hooks && decided.kind !== 'metrics') {
        ex.logged = true;
        ex.keepBodies = hooks.keepBodies;
        ex.credentialHeaders = secretHeaders;
      }
    }
    // A sender's handshake GET (Meta's, Dropbox's) comes to its POST mapping's path (http/handshakes.ts).
    const handshakeGet = decided?.kind === 'mapped' && (method === 'GET' || method === 'HEAD') && signatures.takesGet(decided.name);
    if (decided?.kind === 'mapped' && !handshakeGet) {
      const takes = opts.mappedMethods(decided.name);
      if (method === 'GET' ? !takes.GET : method !== 'POST' || !takes.POST) {
        deny(ex, 'method_not_allowed', `${method} is not allowed here; use ${takes.allow}`, { allow: takes.allow });
        return;
      }
    } else if (decided && decided.kind !== 'none' && decided.kind !== 'console' && !handshakeGet && !methodAllowed(decided.kind, method)) {
      const methods = ROUTE_KINDS[decided.kind].methods;
      const allow = methods === 'GET' ? 'GET, HEAD' : methods;
      deny(ex, 'method_not_allowed', `${method} is not allowed here; use ${allow}`, { allow });
      return;
    }
    // A console replay's marker is its credential, for exactly the route it replays (replay.ts).
    const replayed = decided?.hooks ? opts.replayOf(req, decided) : undefined;
    if (replayed !== undefined) ex.replayOf = replayed;
    // When in doubt, ask for a credential: a target the parser refuses might have named a hook.
    else if (decided ? decided.hooks : hooks.enabled) {
      const kind = decided ? ROUTE_KINDS[decided.kind].credential : 'either';
      // That POST mapping's auth: signature waives the token for its handshake GET too.
      const signed = decided !== undefined && decided.kind === 'mapped' && signatures.standsIn(decided.name, handshakeGet ? 'POST' : method);
      const verdict = opts.auth.check(req, target?.query ?? '', opts.clientAddress(req), kind, signed);
      if (!verdict.ok) {
        if (verdict.code === 'unauthorized') deny(ex, 'unauthorized', `${WHICH[kind]}: ${sendIt}`);
        else deny(ex, 'rate_limited', 'too many failed token attempts from this address; retry later', { 'retry-after': String(verdict.retryAfter) });
        return;
      }
      if (verdict.bySignature) ex.bySignature = true;
      const sender = verdict.sender;
      if (sender !== undefined && decided) {
        ex.sender = sender;
        // A scoped token (CONTRACT.md §4): a valid credential, so 403 and not counted; a mapped hook's is the engine's.
        if (sender.routes !== undefined && (decided.kind === 'wake' || decided.kind === 'agent') && !sender.routes.has(decided.kind)) {
          deny(ex, 'forbidden', `this hooks token does not reach ${decided.kind}: add "${decided.kind}" to its routes (hooks.tokens[].routes) or send with another token`);
          return;
        }
      }
    }
    if (!decided) {
      deny(ex, 'invalid_path', 'the request path cannot be read: fix its percent-escapes or remove control characters');
      return;
    }
    if (decided.kind === 'none') {
      deny(ex, 'not_found', `no route for ${method} ${printable(decided.path, 200)}`);
      return;
    }
    if (decided.hooks) {
      const length = req.headers['content-length'];
      const limit = opts.bodyLimit(decided);
      if (length !== undefined && Number(length) > limit.bytes) {
        deny(ex, 'payload_too_large', `the body is larger than ${limit.name} (${limit.bytes} bytes)`);
        return;
      }
    }
    // No later layer (templates, transforms, logs) sees the token or another credential parameter.
    decided.query = withoutCredentialParams(decided.query);
    if (req.headers.expect !== undefined && opts.expectsContinue(req)) {
      ex.continued = true;
      ex.res.writeContinue();
    }
    return next();
  };
}

const WHICH: Record<CredentialKind, string> = {
  hooks: 'missing or wrong hooks token (sending takes a hooks token from hooks.token or hooks.tokens; the admin token does not send)',
  admin: 'missing or wrong admin token (reading takes server.adminToken, or {dataDir}/admin-token when generated; a hooks token does not read)',
  either: 'missing or wrong token',
};
