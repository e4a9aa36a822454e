import type { Engine, WhenFailure } from '../engine/engine.js';
import type { Decision, DecidePorts, SendRoute } from '../engine/decide.js';
import { accept, type AcceptDeps } from './accept.js';
import { answer, answerJson } from './answer.js';
import { payloadOf } from './body.js';
import type { BodyLimits } from './body-limits.js';
import type { Exchange, HookContext } from './exchange.js';
import type { Handshakes } from './handshake.js';
import { answerMapping, answerReplay } from './mapping-answer.js';
import type { Metrics } from '../metrics.js';
import { mappingLabel } from './routes-table.js';
import type { Signatures } from './signatures.js';
import type { Store } from '../store/store.js';

/** What the routes need: the engine, the dispatcher and the store's read side. */
export interface RouteDeps extends AcceptDeps {
  hooksPath: string;
  engine: Pick<Engine, 'decide' | 'methods'>;
  store: AcceptDeps['store'] & Pick<Store, 'getRun' | 'listEvents' | 'listRuns'>;
  signatures: Pick<Signatures, 'check'>;
  onDropped?: (mappingId: string, dropped: number) => void;
  /** Meta's verification GET (handshake.ts), answered by the gate. */
  handshakes?: Pick<Handshakes, 'takesGet' | 'answerMeta'>;
  onWhenFailed?: (failure: WhenFailure) => void;
  /** `GET /metrics` (absent: `server.metrics: false`, and the gate does not route it). */
  metrics?: Pick<Metrics, 'render' | 'contentType' | 'request' | 'rateLimited'>;
  /** The client address of a request (client-address.ts): the failure budget of a signature that stands in for the token. */
  clientAddress: (req: Exchange['req']) => string;
}

const EMPTY = Buffer.alloc(0);

/** The send routes of CONTRACT.md §5: the request becomes the engine's, its one decision (engine/decide.ts) the answer. */
export function sendHandler(deps: RouteDeps, bodyLimit: BodyLimits): (ctx: HookContext) => Promise<void> {
  const keys: DecidePorts['keys'] = (hashes) => deps.store.findKeys(hashes);
  return async function send(ctx) {
    const ex = ctx.exchange;
    const route = ex.route!;
    const { req } = ex;
    const mapped = route.kind === 'mapped';
    // The gate let only GET and POST through to a mapped hook, and POST to the others.
    const method = req.method === 'GET' ? 'GET' : 'POST';
    const bySignature = ex.bySignature;
    const verify: DecidePorts['verify'] = mapped
      ? (body) => deps.signatures.check({ name: route.name, method, path: route.path, headers: req.headers, bySignature, address: () => deps.clientAddress(req) }, body)
      : undefined;
    const decision = await deps.engine.decide({
      route: route.kind as SendRoute,
      name: route.name,
      method,
      path: route.path,
      query: route.query,
      headers: req.headers,
      body: ex.raw ?? EMPTY,
      payload: () => payloadOf(ex, bodyLimit(route).bytes),
      who: { routes: ex.sender?.routes, bySignature, replay: ex.replayOf !== undefined },
      now: new Date(),
    }, { keys, verify });
    return answerDecision(deps, ex, decision);
  };
}

/** A decision as the answer: what it refused is thrown to the error step (error-handler.ts). */
async function answerDecision(deps: RouteDeps, ex: Exchange, d: Decision): Promise<void> {
  d.failures?.forEach((f) => deps.onWhenFailed?.(f));
  // From here on the request is labelled with its mapping, a refusal and a 400 or 500 included.
  if (d.mappingId !== undefined) ex.label = mappingLabel(d.mappingId);
  switch (d.type) {
    case 'refused':
    case 'no_match':
      throw d.error;
    case 'replay':
      return answerReplay(ex, d.stored);
    case 'respond':
      if (d.own) return answerMapping(ex, d.own);
      if (d.json !== undefined) return answerJson(ex, d.status, d.json);
      return answer(ex, d.status, {});
    case 'act':
      if (d.dropped) deps.onDropped?.(d.mappingId!, d.dropped);
      return accept(deps, ex, d, d.mappingId);
  }
}
