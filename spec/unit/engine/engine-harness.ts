import { expect } from 'chai';
import { ConfigError } from '../../../src/config/errors.js';
import { HookError } from '../../../src/errors.js';
import type { HookRequest, MapResult } from '../../../src/engine/mapping-step.js';
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

export async function mapError(engine: Engine, req: HookRequest): Promise<HookError> {
  const err = await engine.map(req).then(() => undefined, (e: unknown) => e);
  expect(err).to.be.instanceOf(HookError);
  return err as HookError;
}

export function idOf(result: MapResult): string | undefined {
  return result.type === 'no_match' ? undefined : result.mappingId;
}

export function actionsOf(result: MapResult) {
  expect(result.type).to.equal('actions');
  return (result as Extract<MapResult, { type: 'actions' }>).actions;
}
