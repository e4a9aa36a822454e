/** The dispatch/runtime specs' harness: a real store, the fake model and Telegram, and action builders. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configFromObject } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/types.js';
import type { Action, AgentAction, WakeAction } from '../../../src/action.js';
import { silentLogger } from '../../support/silent-logger.js';
import { createRuntime, type Runtime } from '../../../src/dispatch/runtime.js';
import type { Accepted } from '../../../src/action.js';
import type { RetryPolicy } from '../../../src/dispatch/model.js';
import { openStore } from '../../../src/store/open.js';
import type { RunRecord } from '../../../src/store/records.js';
import type { Store } from '../../../src/store/store.js';
import { startFakeModel, type FakeModel, type ModelRule } from '../../support/fake-model.js';
import { startFakeTelegram, type FakeTelegram } from '../../support/fake-telegram.js';
import { until } from '../../support/gateway.js';

export const SYSTEM = 'You are the spec agent.';
export const FENCE_OPEN = /^<untrusted-content source="([^"]*)">$/gm;

interface Overrides {
  agent?: Partial<Config['agent']>;
  hooks?: Partial<Config['hooks']>;
  heartbeat?: Config['heartbeat'];
  session?: Config['session'];
  delivery?: Partial<Config['delivery']>;
}

/** A real store in a tmp dir, the fake model and the fake Bot API, and a runtime over them. */
export class Harness {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookrelay-dispatch-'));
  config!: Config;
  store!: Store;
  model!: FakeModel;
  tg!: FakeTelegram;
  runtimes: Runtime[] = [];

  async open(over: Overrides = {}, rules: ModelRule[] = []): Promise<this> {
    this.model = await startFakeModel(rules);
    this.tg = await startFakeTelegram();
    // Through the real loader: its defaults, not a copy of them.
    this.config = configFromObject({
      dataDir: this.dir,
      store: { durability: 'os' },
      hooks: { token: 't', transformsDir: this.dir, ...over.hooks },
      agent: { baseUrl: this.model.baseUrl, model: 'spec-model', timeoutSeconds: 30, historyTurns: 10, systemPrompt: SYSTEM, ...over.agent },
      heartbeat: over.heartbeat,
      session: over.session ?? { provider: 'telegram', to: '123' },
      providers: { telegram: { botToken: '42:TOKEN', apiBase: this.tg.apiBase } },
      delivery: { maxAttempts: 10, maxDelaySeconds: 300, timeoutSeconds: 30, ...over.delivery },
      log: { level: 'silent' },
    }, path.join(this.dir, 'hookrelay.yaml'), {}).config as Config;
    this.store = await openStore(this.config, silentLogger);
    return this;
  }

  /** A started runtime (several may be made in one spec to model a restart). */
  async runtime(modelRetry?: RetryPolicy): Promise<Runtime> {
    const rt = createRuntime({ config: this.config, store: this.store, log: silentLogger, modelRetry });
    this.runtimes.push(rt);
    await rt.start();
    return rt;
  }

  async run(runId: string, status: RunRecord['status'] | RunRecord['status'][], timeoutMs = 5000): Promise<RunRecord> {
    const want = ([] as string[]).concat(status);
    return waitFor(async () => {
      const r = await this.store.getRun(runId);
      // A reply in the outbox: wait until its delivery has settled too.
      return r && want.includes(r.status) && r.delivery?.status !== 'pending' ? r : undefined;
    }, timeoutMs, `run ${runId} to be ${want.join('|')} with its delivery settled`);
  }

  async summaries() {
    return (await this.store.listEvents(0, 1000)).filter((e) => e.kind === 'summary');
  }

  async close(): Promise<void> {
    for (const rt of this.runtimes) await rt.stop();
    await this.store?.close();
    await this.model?.close();
    await this.tg?.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export const waitFor = <T>(fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number, what: string): Promise<T> => until(what, fn, timeoutMs, 20);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Accepts the actions as the listener does: prepare, then one commit. */
export async function dispatch(rt: Pick<Runtime, 'prepare' | 'commit'>, actions: Action[]): Promise<Accepted[]> {
  const prepared = rt.prepare(actions);
  await rt.commit(prepared);
  return prepared.accepted;
}

export function agent(message: string, over: Partial<AgentAction> = {}): AgentAction {
  return { kind: 'agent', message, sessionKey: 'hook:spec', wakeMode: 'next-heartbeat', deliver: false, provider: 'last', source: 'agent', unsafe: false, ...over };
}
export function wake(text: string, over: Partial<WakeAction> = {}): WakeAction {
  return { kind: 'wake', text, mode: 'now', source: 'wake', unsafe: false, ...over };
}
export function runIdOf(a: Accepted): string {
  if (a.action !== 'agent') throw new Error('not an agent action');
  return a.runId;
}
