import { uuidv7 } from '../ids.js';
import { compileHostRule, type HostRule } from '../callback-url.js';
import type { Config } from '../config/types.js';
import { actionIds, type Accepted, type Action } from '../action.js';
import type { Logger } from '../log.js';
import { logValue } from '../printable.js';
import type { Metrics } from '../metrics.js';
import type { NewEvent, NewForward, NewRequestLog, NewRun, RunRecord } from '../store/records.js';
import type { Leadership, Store } from '../store/store.js';
import { createCallbackSender } from './callback.js';
import { createDelivery } from './delivery.js';
import { agentForward, createForwarder, wakeForward } from './forward.js';
import { createHeartbeat } from './heartbeat.js';
import { hasPendingEvents, heartbeatTurn } from './main-session.js';
import { createModelClient, DEFAULT_RETRY, type RetryPolicy } from './model.js';
import { createOutbox } from './outbox.js';
import { createFlowRules, type FlowRules } from './flow.js';
import { watchPauses } from './pause-watch.js';
import { createRunner } from './runner.js';
import { createRunWaiter } from './run-waiter.js';

/** How long stop() lets a delivery request already under way finish before aborting it (it is then sent again after a restart). */
export const STOP_GRACE_MS = 3_000;

/**
 * An idempotency key to commit with some of the actions (CONTRACT.md §8): `key` and
 * `requestHash` as the store keeps them (src/idempotency-key.ts), `actions` the indexes of the
 * actions it guards, `status` and `body` the first answer to store for it — made by the caller
 * from what {@link Runtime.prepare} accepted, before the commit.
 */
export interface KeyClaim {
  key: string;
  requestHash: string;
  actions: readonly number[];
  status: number;
  body: string;
}

/**
 * Actions made ready to commit ({@link Runtime.prepare}): their ids drawn and their records
 * built, nothing stored yet. `accepted` is what the caller answers for them, in the order of
 * the actions; the rest is handed back to {@link Runtime.commit} as it is.
 */
export interface Prepared {
  readonly accepted: Accepted[];
  readonly at: string;
  readonly events: NewEvent[];
  readonly runs: NewRun[];
  /** Forward mode: each action's outbox row, committed with it (CONTRACT.md §9). */
  readonly forwards: NewForward[] | undefined;
  /** A `now` wake is among them: the heartbeat is triggered once they are committed. */
  readonly wakeNow: boolean;
}

export interface RuntimeOptions {
  config: Readonly<Config>;
  store: Store;
  log: Logger;
  /** Time of records (`at`, `createdAt`, `startedAt`, `endedAt`); timers use real time. */
  clock?: () => Date;
  /** For the model client and delivery; defaults to the global fetch. */
  fetch?: typeof fetch;
  /** How failed model calls are retried (default {@link DEFAULT_RETRY}). */
  modelRetry?: RetryPolicy;
  /** Jitter of delivery retries, uniform in [0, 1) (default Math.random). */
  random?: () => number;
  /** Where delivery outcomes and heartbeat turns are counted (src/metrics.ts); absent: nowhere. */
  metrics?: Pick<Metrics, 'delivery' | 'heartbeat'>;
  /** hooks.callbackHosts as served now, asked at each callback attempt (a reload may narrow it); default: `config`'s. */
  callbackHosts?: () => HostRule;
}

/**
 * The built-in runtime: dispatcher, main session + heartbeat, agent runner, delivery outbox.
 * In forward mode (`runtime.kind: forward`) only the dispatcher and the outbox: every accepted
 * action is committed with its forward row and sent upstream; no run is claimed here and no
 * heartbeat runs (the upstream does both).
 */
export interface Runtime {
  /**
   * Commits every action in ONE `store.accept` call and resolves once it is durable (the
   * caller answers 2xx after that); then, off the request path, triggers the heartbeat for
   * `now` wakes and kicks the runner. Before start() or after stop(), records are only stored.
   * {@link prepare} and {@link commit} in one.
   */
  dispatch(actions: Action[]): Promise<Accepted[]>;
  /**
   * The first half of a dispatch, synchronous: draws the actions' ids and builds their
   * records. The caller makes from `accepted` what it commits with them — the idempotency
   * keys' first answers and the request log's row — and hands it all to {@link commit}: the
   * dispatcher takes that data, it never calls back into the listener.
   */
  prepare(actions: Action[]): Prepared;
  /**
   * Commits prepared actions in ONE `store.accept` call with their idempotency keys (each in
   * the same transaction as the actions it guards) and the request log's row `request`, and
   * resolves once it is durable, with the indexes of the claims whose key was already held: a
   * held key is not acted on again — its actions are left out of the commit (their `accepted`
   * entries were never stored), and so is the row (Store.accept). Then as {@link dispatch}.
   */
  commit(prepared: Prepared, claims?: readonly KeyClaim[], request?: NewRequestLog): Promise<readonly number[]>;
  /**
   * Recovery (runs left `running` by a crash are marked failed), then timers and claiming;
   * pending deliveries resume.
   */
  start(): Promise<void>;
  /**
   * Graceful stop: no more claims or heartbeats; model calls in flight are aborted and their
   * runs requeued; delivery requests under way get {@link STOP_GRACE_MS} (then they stay
   * pending, for the next start). Leaves no run `running`.
   * The store stays open (the caller closes it).
   */
  stop(): Promise<void>;
  /**
   * Waits for a run (`?wait`, waitForCompletion; run-waiter.ts): resolves with it once
   * `done(run)` holds, else undefined after `ms` or once waits are ended.
   */
  waitRun(runId: string, ms: number, done: (run: RunRecord) => boolean): Promise<RunRecord | undefined>;
  /** Ends every wait now (shutdown, before the listener drains): each answers what it would without waiting. */
  endWaits(): void;
}

/** Wires the runtime; nothing runs until {@link Runtime.start}. */
export function createRuntime(opts: RuntimeOptions): Runtime {
  const { config, store } = opts;
  const clock = opts.clock ?? (() => new Date());
  const log = opts.log.child({ component: 'runtime' });
  const model = createModelClient(config.agent, log, opts.fetch, opts.modelRetry ?? DEFAULT_RETRY);
  const delivery = createDelivery(config.providers, opts.fetch);
  const forwarding = config.runtime.kind === 'forward';
  const forwarder = forwarding ? createForwarder(config.runtime.forward, opts.fetch) : undefined;
  const onSummary = () => heartbeat.trigger();
  const metrics = opts.metrics;
  // Another instance may end a run: a wait looks again this often (a run ended here wakes it at once).
  const waiter = createRunWaiter(store, config.store.kind === 'postgres' ? 250 : 1000);
  const onRunChanged = (runId: string) => waiter.notify(runId);
  const startHosts = compileHostRule(config.hooks.callbackHosts);
  const callbackHosts = opts.callbackHosts ?? (() => startHosts);
  const callbacks = config.hooks.callbackSecret ? createCallbackSender(config.hooks.callbackSecret, config.delivery.timeoutSeconds * 1000, callbackHosts, opts.fetch) : undefined;
  const outbox = createOutbox({
    store, config, delivery, forwarder, callbacks, onRunChanged, clock, random: opts.random, log: log.child({ part: 'outbox' }), onSummary,
    onOutcome: metrics && ((provider, outcome) => metrics.delivery(provider, outcome)),
  });
  const onEnqueued = () => outbox.kick();
  const heartbeat = createHeartbeat({
    everyMs: config.heartbeat.everySeconds * 1000,
    turn: (stop) => heartbeatTurn({ store, config, model, delivery, clock, onEnqueued, onTurn: metrics && (() => metrics.heartbeat()), log: log.child({ part: 'heartbeat' }) }, stop),
    log,
  });
  const flow = createFlowRules(config.hooks.mappings);
  const runner = createRunner({ store, config, model, delivery, clock, log: log.child({ part: 'runner' }), onSummary, onEnqueued, onRunEnded: onRunChanged }, flow.rules);
  const pauses = watchPauses({ store, flow, log: log.child({ part: 'pauses' }), onResumed: () => {
    runner.kick();
    heartbeat.trigger();
  } });
  let state: 'idle' | 'started' | 'stopped' = 'idle';
  let stopping: Promise<void> | undefined;
  let leadership: Leadership | undefined;
  /** Leadership changes, one after the other: a heartbeat stops completely before it starts again. */
  let leading: Promise<void> = Promise.resolve();

  /**
   * Only the heartbeat leader runs heartbeats (one at a time across instances; SQLite: this
   * process, at once). A new leader first catches up: events may wait that the last leader
   * never took (it died, or this is a restart) — checked before anything new is accepted at
   * start, so that a next-heartbeat wake arriving later still waits.
   */
  function onLeader(on: boolean): void {
    leading = leading.then(async () => {
      if (!on) return heartbeat.stop();
      if (state !== 'started') return;
      heartbeat.start();
      const catchUp = await hasPendingEvents(store).catch((err) => {
        log.error({ err }, 'checking for events waiting for a heartbeat failed; the next trigger takes them');
        return false;
      });
      if (catchUp) heartbeat.trigger();
    });
  }

  const prepare = (actions: Action[]) => prepareActions(actions, clock().toISOString(), forwarding, flow);

  async function commit(prepared: Prepared, claims?: readonly KeyClaim[], request?: NewRequestLog): Promise<readonly number[]> {
    const { accepted, at, events, runs, forwards } = prepared;
    const keys = claims?.length ? claims.map((c) => {
      const guarded = c.actions.map((i) => accepted[i]!);
      return { key: c.key, requestHash: c.requestHash, status: c.status, body: c.body, at, ...actionIds(guarded) };
    }) : undefined;
    const held = keys || accepted.length > 0 ? await store.accept(events, runs, keys, forwards, request) : [];
    if (forwarding) {
      outbox.kick();
      return held;
    }
    // Both are non-blocking: a timer, and a claim whose errors the runner logs. (Actions left
    // out for a held key at most cost a heartbeat check or a claim that finds nothing.)
    if (prepared.wakeNow) heartbeat.trigger();
    if (runs.length > 0) runner.kick(runs.map((r) => r.sessionKey));
    return held;
  }

  return {
    async dispatch(actions) {
      const prepared = prepare(actions);
      await commit(prepared);
      return prepared.accepted;
    },
    prepare,
    commit,
    waitRun: (runId, ms, done) => waiter.wait(runId, ms, done),
    endWaits: () => waiter.end(),

    async start() {
      if (state !== 'idle') throw new Error(`runtime already ${state}`);
      state = 'started';
      const interrupted = await runner.recover();
      if (forwarding) {
        // Runs queued before a switch to forward mode stay queued: they were never forwarded.
        outbox.start();
        log.info({ interrupted, upstream: logValue(new URL(config.runtime.forward.url!).origin) }, 'runtime started in forward mode');
        return;
      }
      // Events already waiting were accepted before a crash or stop, and their heartbeat may
      // never have run (the store does not keep a wake's mode): the first heartbeat after a
      // restart (or a change of leader) is "the next heartbeat" for all of them, recovery
      // summaries included (onLeader).
      // The paused mappings before anything is claimed or accepted: a pause lasts across restarts.
      await pauses.start();
      leadership = await store.lead({ onLeader, onTrigger: () => heartbeat.trigger() });
      await leading;
      runner.start();
      outbox.start();
      log.info({ interrupted }, 'runtime started');
    },

    stop() {
      state = 'stopped';
      waiter.end();
      pauses.stop();
      // The runner and the heartbeat first: a reply they commit meanwhile is simply left pending.
      // Leadership first (a follower takes over), then the heartbeat it may have started.
      const stopHeartbeat = async () => {
        await leadership?.stop();
        await leading;
        await heartbeat.stop();
      };
      stopping ??= Promise.all([runner.stop(), stopHeartbeat(), outbox.stop(STOP_GRACE_MS)]).then(() => {
        log.info('runtime stopped');
      });
      return stopping;
    },
  };
}

/**
 * Draws the ids and builds the rows of `actions`, accepted at `at`, without touching the store
 * ({@link Runtime.prepare}); in forward mode each also gets its outbox row for the upstream.
 */
function prepareActions(actions: Action[], at: string, forwarding: boolean, flow: Pick<FlowRules, 'isHeld'>): Prepared {
  const events: NewEvent[] = [];
  const runs: NewRun[] = [];
  const accepted: Accepted[] = [];
  const forwards: NewForward[] | undefined = forwarding ? [] : undefined;
  let wakeNow = false;
  for (const a of actions) {
    if (a.kind === 'wake') {
      const id = uuidv7();
      accepted.push({ action: 'wake', eventId: id });
      // A paused mapping's wake is committed but held out of the events (CONTRACT.md §14); its
      // release triggers the heartbeat (pause-watch.ts). Forward mode holds nothing: the upstream runs it.
      if (!forwarding && flow.isHeld(a.source)) {
        events.push({ id, kind: 'wake', text: a.text, source: a.source, at, unsafe: a.unsafe, held: true });
        continue;
      }
      // wakesNow: with several instances, the store tells the heartbeat leader on commit.
      events.push({ id, kind: 'wake', text: a.text, source: a.source, at, unsafe: a.unsafe, ...(a.mode === 'now' && !forwarding ? { wakesNow: true } : {}) });
      forwards?.push(wakeForward(id, a.text, a.mode, at));
      wakeNow ||= a.mode === 'now';
    } else {
      const runId = uuidv7();
      runs.push({
        runId,
        sessionKey: a.sessionKey,
        message: a.message,
        name: a.name,
        model: a.model,
        thinking: a.thinking,
        timeoutSeconds: a.timeoutSeconds,
        wakeMode: a.wakeMode,
        deliver: a.deliver,
        provider: a.provider,
        to: a.to,
        ...(a.sessionMode ? { sessionMode: a.sessionMode } : {}),
        source: a.source,
        unsafe: a.unsafe,
        createdAt: at,
        ...(a.callbackUrl !== undefined ? { callbackUrl: a.callbackUrl } : {}),
      });
      if (forwards) forwards.push(agentForward(runs[runs.length - 1]!, { sessionKey: a.sessionKeyGiven === true, agentId: a.agentId }));
      accepted.push({ action: 'agent', runId, sessionKey: a.sessionKey });
    }
  }
  return { accepted, at, events, runs, forwards, wakeNow };
}
