import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configFromObject } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/types.js';
import type { AgentAction, WakeAction } from '../../../src/action.js';
import { createLogger } from '../../../src/log.js';
import { silentLogger } from '../../support/silent-logger.js';
import { LOG_VALUE_MAX } from '../../../src/printable.js';
import { createRuntime, type Runtime } from '../../../src/dispatch/runtime.js';
import { dispatch } from './runtime-harness.js';
import type { Accepted } from '../../../src/action.js';
import { openStore } from '../../../src/store/open.js';
import type { RunRecord } from '../../../src/store/records.js';
import type { Store } from '../../../src/store/store.js';
import { startFakeModel, type FakeModel, type ModelRule } from '../../support/fake-model.js';
import { startFakeTelegram, telegramError, type FakeTelegram } from '../../support/fake-telegram.js';
import { until } from '../../support/gateway.js';

/**
 * What the dispatch code writes to the log at info level and above, from a real runtime
 * (real store, fake model, fake Bot API, the real `createLogger` writing into an array):
 * request-derived values — session key, `to`, `provider:to`, a requested model name, a
 * delivery error quoting them — are escaped and capped (`logValue`), while the store and the
 * provider still get them exactly as they came.
 */

// ESC sequences, CR/LF that would forge a second line, DEL and a C1 CSI (which JSON does
// not escape), then 1 000 characters.
const EVIL = '\u001b[2J\u001b[31mred\r\n{"level":60,"msg":"forged"}\u007f\u009b1m' + 'x'.repeat(1000);
const SESSION_KEY = `hook:${EVIL}`;
const TO = `555${EVIL}`;
const MODEL = `model-${EVIL}`;
const CONTROL = /\p{Cc}/u;

interface Line {
  level: number;
  msg: string;
  [key: string]: unknown;
}

class Harness {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hookrelay-log-values-'));
  raw: string[] = [];
  config!: Config;
  store!: Store;
  model!: FakeModel;
  tg!: FakeTelegram;
  runtime?: Runtime;

  async open(rules: ModelRule[], session: Config['session'] = { provider: 'telegram', to: '123' }): Promise<this> {
    this.model = await startFakeModel(rules);
    this.tg = await startFakeTelegram();
    // Through the real loader: its defaults, not a hand-kept copy of them.
    this.config = configFromObject({
      dataDir: this.dir,
      store: { durability: 'os' },
      hooks: { token: 't' },
      agent: { baseUrl: this.model.baseUrl, model: 'spec-model', historyTurns: 10, systemPrompt: 'spec' },
      session,
      providers: { telegram: { botToken: '42:TOKEN', apiBase: this.tg.apiBase } },
    }, path.join(this.dir, 'hookrelay.yaml'), {}).config as Config;
    this.store = await openStore(this.config, silentLogger);
    const log = createLogger('info', { write: (line: string) => void this.raw.push(line) });
    this.runtime = createRuntime({ config: this.config, store: this.store, log });
    await this.runtime.start();
    return this;
  }

  lines(): Line[] {
    return this.raw.map((l) => JSON.parse(l) as Line);
  }

  async run(runId: string, status: RunRecord['status']): Promise<RunRecord> {
    return waitFor(async () => {
      const r = await this.store.getRun(runId);
      return r?.status === status && r.delivery?.status !== 'pending' ? r : undefined; // and its delivery settled
    }, `run ${runId} to be ${status}`);
  }

  async close(): Promise<void> {
    await this.runtime?.stop();
    await this.store?.close();
    await this.model?.close();
    await this.tg?.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

const waitFor = <T>(fn: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 5000): Promise<T> => until(what, fn, timeoutMs, 20);

function agent(over: Partial<AgentAction>): AgentAction {
  return { kind: 'agent', message: 'm', sessionKey: SESSION_KEY, wakeMode: 'next-heartbeat', deliver: true, provider: 'telegram', to: TO, source: 'agent', unsafe: false, ...over };
}
function wake(text: string): WakeAction {
  return { kind: 'wake', text, mode: 'now', source: 'wake', unsafe: false };
}
function runIdOf(a: Accepted | undefined): string {
  if (a?.action !== 'agent') throw new Error('not an agent action');
  return a.runId;
}

/** Every string in a parsed log line, with its key path. */
function strings(value: unknown, at = ''): [string, string][] {
  if (typeof value === 'string') return [[at, value]];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => strings(v, at ? `${at}.${k}` : k));
}

/**
 * Length of a logged value in characters of the original text: `printable()` caps the text at
 * {@link LOG_VALUE_MAX} characters and then writes each control character as an escape
 * (`\x1b`, `\n`, `\u202e`), which counts here as the one character it stands for.
 */
function shownLength(value: string): number {
  return value.replace(/\\x[0-9a-f]{2}|\\u[0-9a-f]{4}|\\[nrt]/g, '.').length;
}

/** No raw control character in the written line, none in any value, no value past the cap. */
function expectClean(h: Harness): void {
  expect(h.raw.length).to.be.greaterThan(0);
  for (const raw of h.raw) {
    expect(CONTROL.test(raw.replace(/\n$/, '')), `raw control character in ${JSON.stringify(raw.slice(0, 300))}`).to.equal(false);
  }
  for (const line of h.lines()) {
    for (const [key, value] of strings(line)) {
      expect(CONTROL.test(value), `${line.msg}: ${key} holds a control character`).to.equal(false);
      expect(shownLength(value), `${line.msg}: ${key} is ${value.length} characters long`).to.be.at.most(LOG_VALUE_MAX);
    }
  }
}

function line(h: Harness, msg: string): Line {
  const found = h.lines().find((l) => l.msg === msg);
  expect(found, `no "${msg}" line in ${h.lines().map((l) => l.msg).join(' | ')}`).to.not.equal(undefined);
  return found!;
}

/** An escaped, capped rendering of one of the values above: starts as the value, ends with `…`. */
function expectEscapedAndCapped(value: unknown, start: string): void {
  expect(value).to.be.a('string');
  const s = value as string;
  expect(s.startsWith(`${start}\\x1b[2J\\x1b[31mred\\r\\n`), s.slice(0, 60)).to.equal(true);
  expect(shownLength(s)).to.equal(LOG_VALUE_MAX);
  expect(s.endsWith('…')).to.equal(true);
}

describe('dispatch logs: request-derived values are escaped and capped (real runtime)', function () {
  this.timeout(15000);
  let h: Harness;
  afterEach(async () => { await h.close(); });

  it('run started / reply delivered / run finished / model retry: session key, to, provider:to and model', async () => {
    // The server refuses reasoning_effort, so the runner logs the (requested) model name.
    h = await new Harness().open([{ when: (r) => 'reasoning_effort' in r.body, status: 400, error: { message: 'unknown reasoning_effort', param: 'reasoning_effort' } }]);
    const [a] = await dispatch(h.runtime!, [agent({ model: MODEL, thinking: 'low' })]);
    const run = await h.run(runIdOf(a), 'succeeded');
    await waitFor(() => h.lines().find((l) => l.msg === 'reply delivered'), 'reply delivered line');

    // Stored and delivered as they came: only the log lines are cleaned.
    expect(run.sessionKey).to.equal(SESSION_KEY);
    expect(run.deliveredTo).to.equal(`telegram:${TO}`);
    expect(h.tg.messages.map((m) => m.body.chat_id)).to.deep.equal([TO]);
    expect(h.model.requests.map((r) => r.body.model)).to.deep.equal([MODEL, MODEL]);

    expectEscapedAndCapped(line(h, 'run started').sessionKey, 'hook:');
    expectEscapedAndCapped(line(h, 'reply delivered').target, 'telegram:555');
    expectEscapedAndCapped(line(h, 'run finished; reply queued for delivery').target, 'telegram:555');
    expectEscapedAndCapped(line(h, 'model does not take reasoning_effort; retrying without it').model, 'model-');
    expectClean(h);
  });

  it('reply delivery failed (a run\'s): the target and a provider error that quotes it', async () => {
    h = await new Harness().open([]);
    h.tg.respond = (call) => telegramError(400, `Bad Request: chat ${String(call.body.chat_id)} not found`);
    const [a] = await dispatch(h.runtime!, [agent({})]);
    const failed = await waitFor(() => h.lines().find((l) => l.msg === 'reply delivery failed'), 'delivery failure');
    const run = (await h.store.getRun(runIdOf(a)))!;
    expect(run.error).to.include('\u001b'); // the run keeps the provider's text as it is
    expectEscapedAndCapped(failed.target, 'telegram:555');
    expect(failed.error).to.match(/^telegram: Bad Request: chat 555\\x1b\[2J/);
    expectClean(h);
  });

  it('reply delivery failed (a heartbeat\'s): the main session recipient and the provider error', async () => {
    h = await new Harness().open([{ reply: 'news for you' }], { provider: 'telegram', to: TO });
    h.tg.respond = (call) => telegramError(400, `Bad Request: chat ${String(call.body.chat_id)} not found`);
    await dispatch(h.runtime!, [wake('something happened')]);
    const failed = await waitFor(() => h.lines().find((l) => l.msg === 'reply delivery failed'), 'heartbeat delivery failure');
    expectEscapedAndCapped(failed.target, 'telegram:555');
    expect(failed.error).to.match(/^telegram: Bad Request: chat 555\\x1b\[2J/);
    expectClean(h);
  });
});
