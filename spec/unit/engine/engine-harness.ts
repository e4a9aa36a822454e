import { expect } from 'chai';
import { ConfigError } from '../../../src/config/errors.js';
import { HookError } from '../../../src/errors.js';
import type { Action } from '../../../src/action.js';
import type { HookRequest } from '../../../src/engine/compile-mapping.js';
import type { MappingAnswer } from '../../../src/mapping-answer.js';
import { createEngine, type Engine } from '../../../src/engine/engine.js';
import { makeConfig, type ConfigInput, type MappingInput } from './make-config.js';

/** Shared helpers of the engine specs: requests, engines from mapping lists, outcome accessors. */

export const NOW = new Date('2024-06-01T12:00:00Z');

export function request(name: string, payload: Record<string, unknown>, extra: Partial<HookRequest> = {}): HookRequest {
  return { name, payload, headers: {}, query: {}, url: `/hooks/${name}`, now: NOW, ...extra };
}

export function engineWith(mappings: MappingInput[], input: ConfigInput = {}): Promise<Engine> {
  return createEngine(makeConfig({ ...input, hooks: { ...input.hooks, mappings } }), { uuid: () => 'uuid-1', jsonata: { maxSteps: 20_000 } });
}

export async function configProblems(mappings: MappingInput[], input: ConfigInput = {}): Promise<string[]> {
  const err = await engineWith(mappings, input).then(() => undefined, (e: unknown) => e);
  expect(err).to.be.instanceOf(ConfigError);
  return (err as ConfigError).problems.map((p) => `${p.path}: ${p.message}`);
}

/** The outcome of {@link map}. */
export type Mapped =
  | { type: 'actions'; mappingId: string; actions: Action[]; dropped?: number }
  | { type: 'skipped'; mappingId: string }
  | { type: 'respond'; mappingId: string; answer: MappingAnswer }
  | { type: 'no_match' };

/** What matched and came of a request to `{hooks.path}/NAME`, through the engine's one entry, decide(); a refusal is thrown. */
export async function map(engine: Engine, req: HookRequest): Promise<Mapped> {
  const d = await engine.decide({
    route: 'mapped',
    name: req.name,
    method: req.method ?? 'POST',
    path: `/hooks/${req.name}`,
    query: new URLSearchParams(req.query).toString(),
    headers: { ...req.withheld, ...req.headers },
    body: new Uint8Array(),
    payload: () => req.payload,
    who: {},
    now: req.now,
  });
  if (d.type === 'refused') throw d.error;
  if (d.type === 'no_match') return { type: 'no_match' };
  if (d.type === 'respond') return d.own ? { type: 'respond', mappingId: d.mappingId!, answer: d.own } : { type: 'skipped', mappingId: d.mappingId! };
  if (d.type !== 'act') throw new Error(`unexpected decision ${d.type}`);
  return { type: 'actions', mappingId: d.mappingId!, actions: d.actions, ...(d.dropped ? { dropped: d.dropped } : {}) };
}

/** The action of a direct `/wake` or `/agent` body, through decide(); a refusal is thrown. */
export async function direct(engine: Engine, route: 'wake' | 'agent', body: Record<string, unknown>): Promise<Action> {
  const d = await engine.decide({ route, name: route, method: 'POST', path: `/hooks/${route}`, query: '', headers: {}, body: new Uint8Array(), payload: () => body, who: {}, now: NOW });
  if (d.type === 'refused') throw d.error;
  if (d.type !== 'act') throw new Error(`unexpected decision ${d.type}`);
  return d.actions[0]!;
}

export async function mapError(engine: Engine, req: HookRequest): Promise<HookError> {
  const err = await map(engine, req).then(() => undefined, (e: unknown) => e);
  expect(err).to.be.instanceOf(HookError);
  return err as HookError;
}

export function idOf(result: Mapped): string | undefined {
  return result.type === 'no_match' ? undefined : result.mappingId;
}

export function actionsOf(result: Mapped) {
  expect(result.type).to.equal('actions');
  return (result as Extract<Mapped, { type: 'actions' }>).actions;
}
