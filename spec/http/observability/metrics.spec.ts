import { expect } from 'chai';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { startFakeModel, type FakeModel } from '../../support/fake-model.js';
import { startFakeProvider, textOf, type FakeProvider } from '../../support/fake-providers.js';
import { ADMIN_TOKEN, startInProcess, TOKEN, type InProcess } from '../../support/in-process.js';
import { rawRequest } from '../../support/raw-http.js';
import { until } from '../../support/gateway.js';

/**
 * `GET /metrics` (CONTRACT.md §11) over the real listener, store and runtime: after a known
 * mix of requests, runs and deliveries the Prometheus text holds exactly the right values,
 * parses line by line, and no label carries anything a request sent.
 */

const SECOND_TOKEN = 'metrics-second-token-0123456789';
const SECOND_ADMIN = 'metrics-second-admin-token-0123456789';
/** A hooks token sends; the admin token scrapes and reads (CONTRACT.md §4). */
const auth = { authorization: `Bearer ${TOKEN}` };
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface Sample { name: string; labels: Record<string, string>; value: number }

/**
 * (Case-insensitive as Go's ParseFloat, which Prometheus uses: prom-client writes `Nan`.)
 * Every line must be a comment (`# HELP name text`, `# TYPE name type`), blank, or a sample
 * `name{label="value",…} number` of the text format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format); the
 * parser (parse-prometheus-text-format, a port of Prometheus' own) then checks the structure.
 */
const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const SAMPLE_LINE = new RegExp(`^(${NAME})(?:\\{(${LABEL}(?:,${LABEL})*)?\\})? (-?(?:\\d+(?:\\.\\d+)?(?:e[-+]?\\d+)?|\\.\\d+)|[+-]Inf|NaN)$`, 'i');
const COMMENT_LINE = new RegExp(`^# (?:HELP ${NAME} .*|TYPE ${NAME} (?:counter|gauge|histogram|summary|untyped))$`);

function parse(text: string): Sample[] {
  expect(text.endsWith('\n'), 'ends with a newline').to.equal(true);
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '' || COMMENT_LINE.test(line)) continue;
    const m = SAMPLE_LINE.exec(line);
    if (!m) throw new Error(`not a Prometheus text line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const families = parsePrometheusTextFormat(text);
  expect(families.length, 'metric families').to.be.greaterThan(10);
  return samples;
}

async function scrape(gw: InProcess, headers: Record<string, string> = admin): Promise<Sample[]> {
  const res = await fetch(`${gw.base}/metrics`, { headers });
  expect(res.status).to.equal(200);
  expect(res.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
  return parse(await res.text());
}

/** `{labelValue…: value}` of one metric, keyed by the labels given, joined with `|`. */
function series(samples: Sample[], name: string, keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) if (s.name === name) out[keys.map((k) => s.labels[k]).join('|')] = s.value;
  return out;
}

/** Scrapes until `name` holds `expected` (its series by `keys`); past the time, fails naming both. */
async function settles(gw: InProcess, name: string, keys: string[], expected: Record<string, number>, timeoutMs = 15_000): Promise<void> {
  let now: Record<string, number> = {};
  await until(() => `${name} to hold ${JSON.stringify(expected)}; it holds ${JSON.stringify(now)}`, async () => {
    now = series(await scrape(gw), name, keys);
    return Object.keys(now).length === Object.keys(expected).length && Object.entries(expected).every(([k, v]) => now[k] === v);
  }, timeoutMs);
}

function post(gw: InProcess, name: string, body: unknown, headers: Record<string, string> = auth) {
  return fetch(`${gw.hooks}/${name}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('http: GET /metrics (Prometheus text, real listener and store)', function () {
  this.timeout(40_000);
  let model: FakeModel;
  let telegram: FakeProvider;
  let gw: InProcess;
  const tries = new Map<string, number>();

  before(async () => {
    model = await startFakeModel([
      { when: (r) => r.user.startsWith('System events'), reply: 'HEARTBEAT_OK' },
      { match: 'case-fail', status: 400, error: { message: 'bad request from the model' } },
      { match: 'case-timeout', delayMs: 4_000, reply: 'too late' },
      { match: 'case-hold', delayMs: 60_000, reply: 'held' },
      { match: 'deliver-ok', reply: 'ROK fine' },
      { match: 'deliver-5xx', reply: 'R5XX once' },
      { match: 'deliver-4xx', reply: 'R4XX refused' },
    ]);
    telegram = await startFakeProvider('telegram');
    telegram.respond = (c) => {
      if (c.kind !== 'send') return undefined;
      const text = textOf('telegram', c.body);
      const n = (tries.get(text) ?? 0) + 1;
      tries.set(text, n);
      if (text.startsWith('R5XX') && n === 1) return telegram.error(503, 'Service Unavailable');
      if (text.startsWith('R4XX')) return telegram.error(400, 'Bad Request: chat not found');
      return undefined;
    };
    gw = await startInProcess({
      server: { adminTokens: [ADMIN_TOKEN, SECOND_ADMIN] },
      hooks: {
        token: undefined,
        tokens: [TOKEN, SECOND_TOKEN],
        maxBodyBytes: 1024,
        mappings: [
          { id: 'ci-note', match: { path: 'ci' }, action: 'wake', wakeMode: 'next-heartbeat', textTemplate: 'CI {{id}}' },
          { id: 'typed', match: { path: 'typed' }, action: 'wake', textTemplate: 'n {{n}}', schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } },
        ],
      },
      agent: { baseUrl: model.baseUrl },
      providers: { telegram: telegram.config },
      delivery: { maxDelaySeconds: 1 },
    });
  });
  after(async () => {
    await gw?.stop();
    await telegram?.close();
    await model?.close();
  });

  it('counts every request once under its route and status, the duration histogram and the commits with it; no label carries a path, key or recipient', async () => {
    const port = Number(new URL(gw.base).port);
    const wake = { text: 'hello', mode: 'next-heartbeat' };
    for (let i = 0; i < 3; i++) expect((await post(gw, 'wake', wake)).status).to.equal(200);
    expect((await post(gw, 'wake', { text: '   ' })).status).to.equal(400);
    expect((await post(gw, 'wake', wake, { authorization: 'Bearer wrong-token' })).status).to.equal(401);
    for (let i = 0; i < 2; i++) {
      expect((await post(gw, 'agent', { message: 'plain', deliver: false, wakeMode: 'next-heartbeat', sessionKey: `hook:secret-session-${i}` })).status).to.equal(202);
    }
    for (let i = 0; i < 2; i++) expect((await post(gw, 'ci', { id: i })).status).to.equal(200);
    // A mapping's own refusal counts under the mapping.
    expect((await post(gw, 'typed', { n: 'not a number' })).status).to.equal(400);
    expect((await fetch(`${gw.hooks}/events?after=0`, { headers: admin })).status).to.equal(200);
    expect((await fetch(`${gw.hooks}/runs`, { headers: admin })).status).to.equal(200);
    // Unmatched: a hook no mapping takes, paths no route takes, a target that cannot be read.
    expect((await post(gw, 'no-such-hook', {})).status).to.equal(404);
    expect((await fetch(`${gw.base}/nowhere/hook:secret-session-9?sessionKey=hook:leak`)).status).to.equal(404);
    expect((await post(gw, 'hook:weird%2Fpath', {}, {})).status).to.equal(401);
    expect((await rawRequest(port, 'GET /%ZZsecret HTTP/1.1\r\nHost: x\r\nConnection: close')).status).to.equal(401);

    const samples = await scrape(gw);
    expect(series(samples, 'hookrelay_requests_total', ['route', 'status'])).to.deep.equal({
      'wake|200': 3, 'wake|400': 1, 'wake|401': 1,
      'agent|202': 2,
      'mapping:ci-note|200': 2,
      'mapping:typed|400': 1,
      'events|200': 1,
      'runs|200': 1,
      'unmatched|404': 2, 'unmatched|401': 2,
    });
    expect(series(samples, 'hookrelay_request_duration_seconds_count', ['route'])).to.deep.equal({
      wake: 5, agent: 2, 'mapping:ci-note': 2, 'mapping:typed': 1, events: 1, runs: 1, unmatched: 4,
    });
    for (const route of ['wake', 'agent', 'mapping:ci-note', 'mapping:typed', 'events', 'runs', 'unmatched']) {
      const buckets = samples.filter((s) => s.name === 'hookrelay_request_duration_seconds_bucket' && s.labels.route === route);
      expect(buckets.map((b) => b.labels.le)).to.deep.equal(['0.0001', '0.00025', '0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf']);
      const counts = buckets.map((b) => b.value);
      expect(counts, `${route}: cumulative`).to.deep.equal([...counts].sort((a, b) => a - b));
      expect(counts.at(-1)).to.equal(series(samples, 'hookrelay_request_duration_seconds_count', ['route'])[route]);
      const sum = series(samples, 'hookrelay_request_duration_seconds_sum', ['route'])[route]!;
      expect(sum, `${route}: sum`).to.be.greaterThan(0).and.lessThan(10);
    }
    // Seven accepted requests (3 wakes, 2 agents, 2 mapped wakes), each one accept call, in 1–7 commits.
    const batches = series(samples, 'hookrelay_commit_batch_size_count', []);
    expect(series(samples, 'hookrelay_commit_batch_size_sum', [])).to.deep.equal({ '': 7 });
    expect(batches['']).to.be.within(1, 7);
    expect(series(samples, 'hookrelay_commit_batch_size_bucket', ['le'])['+Inf']).to.equal(batches['']);

    for (const s of samples.filter((x) => x.name.startsWith('hookrelay_'))) {
      if (s.labels.route !== undefined) expect(s.labels.route).to.match(/^(wake|agent|events|runs|healthz|metrics|unmatched|mapping:ci-note|mapping:typed)$/);
      expect(Object.values(s.labels).join(' ')).to.not.match(/secret|leak|nowhere|weird|hook:|%|\//);
    }
  });

  it('parses as Prometheus text with the process metrics, and counts its own scrapes under `metrics`', async () => {
    const res = await fetch(`${gw.base}/metrics`, { headers: admin });
    const text = await res.text();
    const families = parsePrometheusTextFormat(text);
    const types = Object.fromEntries(families.map((f) => [f.name, f.type]));
    expect(types).to.include({
      hookrelay_requests_total: 'COUNTER',
      hookrelay_request_duration_seconds: 'HISTOGRAM',
      hookrelay_runs: 'GAUGE',
      hookrelay_deliveries_total: 'COUNTER',
      hookrelay_heartbeats_total: 'COUNTER',
      hookrelay_commit_batch_size: 'HISTOGRAM',
      process_resident_memory_bytes: 'GAUGE',
      nodejs_eventloop_lag_seconds: 'GAUGE',
    });
    const samples = parse(text);
    expect(series(samples, 'hookrelay_requests_total', ['route', 'status'])['metrics|200']).to.equal(1);
    expect(samples.find((s) => s.name === 'process_resident_memory_bytes')!.value).to.be.greaterThan(1e6);
  });

  it('hookrelay_runs: all five statuses, 0 included, as the store has them', async () => {
    const zero = series(await scrape(gw), 'hookrelay_runs', ['status']);
    expect(Object.keys(zero).sort()).to.deep.equal(['failed', 'queued', 'running', 'succeeded', 'timed_out']);
    const agent = (message: string, extra: Record<string, unknown> = {}) =>
      post(gw, 'agent', { message, deliver: false, wakeMode: 'next-heartbeat', ...extra }).then((r) => expect(r.status).to.equal(202));
    await agent('case-fail');
    await agent('case-timeout', { timeoutSeconds: 1 });
    await agent('case-hold', { sessionKey: 'hook:held' });
    await agent('plain, behind the held one', { sessionKey: 'hook:held' });
    await settles(gw, 'hookrelay_runs', ['status'], { queued: 1, running: 1, succeeded: 2, failed: 1, timed_out: 1 });
  });

  it('hookrelay_deliveries_total: delivered, failed and retried, by provider', async () => {
    for (const message of ['deliver-ok', 'deliver-5xx', 'deliver-4xx']) {
      const r = await post(gw, 'agent', { message, deliver: true, provider: 'telegram', to: telegram.to, wakeMode: 'next-heartbeat' });
      expect(r.status).to.equal(202);
    }
    await settles(gw, 'hookrelay_deliveries_total', ['provider', 'outcome'], { 'telegram|delivered': 2, 'telegram|failed': 1, 'telegram|retried': 1 });
    expect(tries.get('ROK fine')).to.equal(1);
    expect(tries.get('R5XX once')).to.equal(2);
  });

  it('hookrelay_heartbeats_total: one per heartbeat turn', async () => {
    expect(series(await scrape(gw), 'hookrelay_heartbeats_total', [])).to.deep.equal({ '': 0 });
    const before = model.requests.length;
    expect((await post(gw, 'wake', { text: 'now please', mode: 'now' })).status).to.equal(200);
    await until('the heartbeat turn', async () => (model.requests.slice(before).some((r) => r.user.startsWith('System events')) ? true : undefined));
    await settles(gw, 'hookrelay_heartbeats_total', [], { '': 1 });
  });

  it('takes the admin token as hooks take theirs (every slot, header or query), 401 without it or with a hooks token', async () => {
    const url = `${gw.base}/metrics`;
    expect((await fetch(url)).status).to.equal(401);
    expect((await fetch(url, { headers: { authorization: 'Bearer nope' } })).status).to.equal(401);
    expect((await fetch(url, { headers: auth })).status).to.equal(401);
    expect((await fetch(url, { headers: { authorization: `Bearer ${SECOND_TOKEN}` } })).status).to.equal(401);
    const body = await (await fetch(url)).json();
    expect(body).to.deep.include({ ok: false });
    expect(body.error.code).to.equal('unauthorized');
    expect((await fetch(url, { headers: { authorization: `Bearer ${SECOND_ADMIN}` } })).status).to.equal(200);
    expect((await fetch(url, { headers: { 'x-hookrelay-token': ADMIN_TOKEN } })).status).to.equal(200);
    expect((await fetch(`${url}?token=${ADMIN_TOKEN}`)).status).to.equal(200);
    expect((await fetch(url, { method: 'POST', headers: admin })).status).to.equal(405);
  });

  it('counts failed admin tokens in the budget: 20 failures within the window, then 429; a right token still passes', async () => {
    // A gateway of its own: the tests above guessed where no route exists, which no right
    // credential clears from this address's budget (CONTRACT.md §4).
    const own = await startInProcess();
    try {
      const url = `${own.base}/metrics`;
      for (let i = 0; i < 20; i++) expect((await fetch(url, { headers: { authorization: `Bearer wrong-${i}` } })).status).to.equal(401);
      const limited = await fetch(url, { headers: { authorization: 'Bearer wrong-21' } });
      expect(limited.status).to.equal(429);
      expect(limited.headers.get('retry-after')).to.match(/^\d+$/);
      expect((await fetch(url, { headers: admin })).status).to.equal(200);
    } finally {
      await own.stop();
    }
  });

  it('is served with the hooks off too: it takes the admin token, not theirs', async () => {
    const off = await startInProcess({ hooks: { enabled: false } });
    try {
      expect((await fetch(`${off.base}/metrics`, { headers: admin })).status).to.equal(200);
      expect((await fetch(`${off.base}/metrics`)).status).to.equal(401);
      expect((await fetch(`${off.hooks}/wake`, { method: 'POST', headers: auth, body: '{"text":"x"}' })).status).to.equal(404);
    } finally {
      await off.stop();
    }
  });

  it('server.metrics: false — /metrics is 404 like any unknown path, even with the token', async () => {
    const off = await startInProcess({ server: { metrics: false } });
    try {
      const res = await fetch(`${off.base}/metrics`, { headers: admin });
      expect(res.status).to.equal(404);
      expect(((await res.json()) as any).error.code).to.equal('not_found');
      expect((await fetch(`${off.hooks}/wake`, { method: 'POST', headers: auth, body: '{"text":"x"}' })).status).to.equal(200);
    } finally {
      await off.stop();
    }
  });
});
