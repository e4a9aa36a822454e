import { uuidv7 } from '../ids.js';
import { compileHostRule, type HostRule } from '../callback-url.js';
import type { Config } from '../config/types.js';
import { actionIds, type Accepted, type Action, type AgentAction } from '../action.js';
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
import { createModelClient, type RetryPolicy } from './model.js';
import { createOutbox } from './outbox.js';
import { createFlow, type Flow } from './flow.js';
import { createRunner } from './runner.js';
import { createRunWaiter } from './run-waiter.js';

/** How long stop() lets a delivery under way finish before aborting it; it is sent again after a restart. */
export const STOP_GRACE_MS = 3_000;

/** An idempotency key committed in the transaction of the actions it guards (CONTRACT.md §8), with its first answer. */
export interface KeyClaim {
  key: string;
  requestHash: string;
  actions: readonly number[];
  status: number;
  body: string;
}

/** Actions with their ids drawn and their records built, nothing stored yet. */
export interface Prepared {
  readonly accepted: Accepted[];
  readonly at: string;
  readonly events: NewEvent[];
  readonly runs: NewRun[];
  /** Forward mode: each action's outbox row, committed with it (CONTRACT.md §9). */
  readonly forwards: NewForward[] | undefined;
  readonly wakeNow: boolean;
}

export interface RuntimeOptions {
  config: Readonly<Config>;
  store: Store;
  log: Logger;
  /** Time of records; timers use real time. */
  clock?: () => Date;
  modelRetry?: RetryPolicy;
  metrics?: Pick<Metrics, 'delivery' | 'heartbeat'>;
  /** Asked at each callback attempt: a reload may narrow hooks.callbackHosts. */
  callbackHosts?: () => HostRule;
}

/** Dispatcher, main session + heartbeat, agent runner and outbox; in forward mode the dispatcher and outbox (CONTRACT.md §9). */
export interface Runtime {
  /** Draws the actions' ids and builds their records; the caller adds its keys and request-log row and hands it all to {@link commit}. */
  prepare(actions: Action[]): Prepared;
  /** One `store.accept`, durable when it resolves (the caller answers 2xx after); resolves with the indexes of the claims whose key was already held (left out). */
  commit(prepared: Prepared, claims?: readonly KeyClaim[], request?: NewRequestLog): Promise<readonly number[]>;
  /** Marks runs left `running` by a crash failed, then starts timers and claiming. */
  start(): Promise<void>;
  /** No more claims or heartbeats; model calls in flight are requeued; deliveries get {@link STOP_GRACE_MS}. The store stays open. */
  stop(): Promise<void>;
  /** Resolves with the run once `done(run)` holds, else undefined after `ms` or {@link endWaits}. */
  waitRun(runId: string, ms: number, done: (run: RunRecord) => boolean): Promise<RunRecord | undefined>;
  /** Ends every wait now (shutdown, before the listener drains). */
  endWaits(): void;
}

export function createRuntime(opts: RuntimeOptions): Runtime {
  const { config, store } = opts;
  const clock = opts.clock ?? (() => new Date());
  const log = opts.log.child({ component: 'runtime' });
  const model = createModelClient(config.agent, log, opts.modelRetry);
  const delivery = createDelivery(config.providers);
  const forwarding = config.runtime.kind === 'forward';
  const forwarder = forwarding ? createForwarder(config.runtime.forward) : undefined;
  const onSummary = () => heartbeat.trigger();
  const metrics = opts.metrics;
  // Another instance may end a run, so a wait polls; a run ended here wakes it at once.
  const waiter = createRunWaiter(store, config.store.kind === 'postgres' ? 250 : 1000);
  const onRunChanged = (runId: string) => waiter.notify(runId);
  const startHosts = compileHostRule(config.hooks.callbackHosts);
  const callbackHosts = opts.callbackHosts ?? (() => startHosts);
  const callbacks = config.hooks.callbackSecret ? createCallbackSender(config.hooks.callbackSecret, config.delivery.timeoutSeconds * 1000, callbackHosts) : undefined;
  const outbox = createOutbox({
    store, config, delivery, forwarder, callbacks, onRunChanged, clock, log: log.child({ part: 'outbox' }), onSummary,
    onOutcome: metrics && ((provider, outcome) => metrics.delivery(provider, outcome)),
  });
  const onEnqueued = () => outbox.kick();
  const heartbeat = createHeartbeat({
    everyMs: config.heartbeat.everySeconds * 1000,
    turn: (stop) => heartbeatTurn({ store, config, model, delivery, clock, onEnqueued, onTurn: metrics && (() => metrics.heartbeat()), log: log.child({ part: 'heartbeat' }) }, stop),
    log,
  });
  const flow = createFlow(config.hooks.mappings, { store, log: log.child({ part: 'pauses' }), onResumed: () => {
    runner.kick();
    heartbeat.trigger();
  } });
  const runner = createRunner({ store, config, model, delivery, clock, log: log.child({ part: 'runner' }), onSummary, onEnqueued, onRunEnded: onRunChanged }, flow.rules);
  let state: 'idle' | 'started' | 'stopped' = 'idle';
  let stopping: Promise<void> | undefined;
  let leadership: Leadership | undefined;
  /** Leadership changes in order: a heartbeat stops completely before it starts again. */
  let leading: Promise<void> = Promise.resolve();

  /** A new leader first catches up on events the last one never took, before anything new is accepted at start. */
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
    if (prepared.wakeNow) heartbeat.trigger();
    if (runs.length > 0) runner.kick(runs.map((r) => r.sessionKey));
    return held;
  }

  return {
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
      // A wake's mode is not stored: after a restart waiting events go to the next heartbeat.
      await flow.start();
      leadership = await store.lead({ onLeader, onTrigger: () => heartbeat.trigger() });
      await leading;
      runner.start();
      outbox.start();
      log.info({ interrupted }, 'runtime started');
    },

    stop() {
      state = 'stopped';
      waiter.end();
      flow.stop();
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

/** The agent action's fields a run does not keep; any other field must be one of NewRun's, or tsc refuses the spread below. */
type ActionOnly = 'kind' | 'idempotency' | 'sessionKeyGiven' | 'agentId';

function prepareActions(actions: Action[], at: string, forwarding: boolean, flow: Pick<Flow, 'isHeld'>): Prepared {
  const events: NewEvent[] = [];
  const runs: NewRun[] = [];
  const accepted: Accepted[] = [];
  const forwards: NewForward[] | undefined = forwarding ? [] : undefined;
  let wakeNow = false;
  for (const a of actions) {
    if (a.kind === 'wake') {
      const id = uuidv7();
      accepted.push({ action: 'wake', eventId: id });
      // A paused mapping's wake is committed but held (CONTRACT.md §14); forward mode holds nothing.
      if (!forwarding && flow.isHeld(a.source)) {
        events.push({ id, kind: 'wake', text: a.text, source: a.source, at, unsafe: a.unsafe, held: true });
        continue;
      }
      events.push({ id, kind: 'wake', text: a.text, source: a.source, at, unsafe: a.unsafe, ...(a.mode === 'now' && !forwarding ? { wakesNow: true } : {}) });
      forwards?.push(wakeForward(id, a.text, a.mode, at));
      wakeNow ||= a.mode === 'now';
    } else {
      const runId = uuidv7();
      const { kind, idempotency, sessionKeyGiven, agentId, ...fields }: { [K in keyof AgentAction]: K extends ActionOnly | keyof NewRun ? AgentAction[K] : never } = a;
      const run: NewRun = { runId, ...fields, createdAt: at };
      runs.push(run);
      forwards?.push(agentForward(run, { sessionKey: sessionKeyGiven === true, agentId }));
      accepted.push({ action: 'agent', runId, sessionKey: a.sessionKey });
    }
  }
  return { accepted, at, events, runs, forwards, wakeNow };
}
