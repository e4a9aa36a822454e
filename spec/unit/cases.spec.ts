import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../src/config/errors.js';
import { configFromObject } from '../../src/config/load.js';
import { HookError } from '../../src/errors.js';
import { createEngine } from '../../src/engine/engine.js';
import { direct, map, type Mapped } from './engine/engine-harness.js';
import { makeConfig, type ConfigInput } from './engine/make-config.js';

/**
 * Data-driven mapping cases (STYLE.md principle 10, after the JSONata test suite):
 * every `spec/cases/<group>/*.json` is one request against one config and its expected outcome.
 *
 *   { "name": "…",
 *     "config": { "hooks": { "mappings": [ … ] }, "agent": { … } },   // merged onto the defaults
 *     "request": { "name": "github", "method"?: "GET", "payload": { … }, "headers"?: { … }, "query"?: { … } }
 *              | { "direct": "wake" | "agent", "body": … },
 *     "expect": { "action": { …subset… } } | { "actions": [ …subsets… ], "dropped"?: n }
 *             | { "skipped": true } | { "no_match": true } | { "respond": { …subset of the answer… } }
 *             | { "error": "<code>", "message"?: "<exact message>" }
 *             | { "configError": ["hooks.mappings[0].messageTemplate", …] } }
 *
 * Session keys made up by the engine are `hook:uuid-1`; `now` is 2024-01-01T00:00:00.000Z.
 * A config that names `hooks.presets` goes through the real loader (which reads the shipped
 * preset files); the others are merged onto the defaults without it.
 */
interface Case {
  name: string;
  config?: ConfigInput;
  request: {
    name?: string;
    method?: 'GET' | 'POST';
    payload?: Record<string, unknown> | unknown[];
    headers?: Record<string, string>;
    query?: Record<string, string>;
    direct?: 'wake' | 'agent';
    body?: unknown;
  };
  expect: {
    action?: Record<string, unknown>;
    actions?: Record<string, unknown>[];
    dropped?: number;
    skipped?: boolean;
    no_match?: boolean;
    respond?: Record<string, unknown>;
    error?: string;
    message?: string;
    configError?: string[];
  };
}

const CASES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'cases');
const NOW = new Date('2024-01-01T00:00:00Z');

function loadCases(): Map<string, { file: string; spec: Case }[]> {
  const groups = new Map<string, { file: string; spec: Case }[]>();
  const files = (readdirSync(CASES_DIR, { recursive: true }) as string[]).filter((f) => f.endsWith('.json')).sort();
  for (const file of files) {
    const group = dirname(file);
    const spec = JSON.parse(readFileSync(join(CASES_DIR, file), 'utf8')) as Case;
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group)!.push({ file, spec });
  }
  return groups;
}

async function run(spec: Case): Promise<Mapped | Record<string, unknown>> {
  const config = spec.config?.hooks?.presets
    ? configFromObject({ hooks: { token: 't', ...spec.config.hooks }, agent: spec.config.agent }, '/srv/hookrelay/hookrelay.yaml', {}).config
    : makeConfig(spec.config);
  const engine = await createEngine(config, { uuid: () => 'uuid-1', jsonata: { maxSteps: 20_000 } });
  const r = spec.request;
  try {
    if (r.direct !== undefined) return { type: 'actions', actions: [await direct(engine, r.direct, r.body as Record<string, unknown>)] };
    const name = r.name ?? '';
    return await map(engine, { name, method: r.method, payload: r.payload ?? {}, headers: r.headers ?? {}, query: r.query ?? {}, url: `/hooks/${name}`, now: NOW });
  } finally {
    await engine.close(); // its transform workers
  }
}

function check(spec: Case, outcome: unknown): void {
  const want = spec.expect;
  if (want.configError) {
    expect(outcome, 'expected a ConfigError').to.be.instanceOf(ConfigError);
    expect((outcome as ConfigError).problems.map((p) => p.path)).to.deep.equal(want.configError);
    return;
  }
  if (want.error) {
    expect(outcome, 'expected a HookError').to.be.instanceOf(HookError);
    const err = outcome as HookError;
    expect(err.code, err.message).to.equal(want.error);
    if (want.message !== undefined) expect(err.message).to.equal(want.message);
    return;
  }
  if (outcome instanceof Error) throw outcome;
  const result = outcome as Record<string, unknown>;
  if (want.no_match) return void expect(result.type).to.equal('no_match');
  if (want.skipped) return void expect(result.type).to.equal('skipped');
  if (want.respond) {
    expect(result.type, JSON.stringify(result)).to.equal('respond');
    return void expect(result.answer).to.deep.include(want.respond);
  }
  expect(result.type).to.equal('actions');
  const expected = want.actions ?? [want.action!];
  const actual = result.actions as Record<string, unknown>[];
  expect(actual, JSON.stringify(actual)).to.have.length(expected.length);
  expected.forEach((subset, i) => expect(actual[i], `action ${i}`).to.deep.include(subset));
  if (want.dropped !== undefined) expect(result.dropped).to.equal(want.dropped);
}

describe('spec/cases (data-driven mapping cases)', () => {
  for (const [group, cases] of loadCases()) {
    describe(group, () => {
      for (const { file, spec } of cases) {
        it(`${spec.name} (${relative('.', file)})`, async () => {
          const outcome = await run(spec).catch((err: unknown) => err);
          check(spec, outcome);
        });
      }
    });
  }
});
