import { ConfigError, isAtOrBelow, type ConfigProblem } from '../config/errors.js';
import type { Config, MappingConfig } from '../config/types.js';
import type { Action } from '../action.js';
import { compileMapping, type CompileDeps, type CompiledMapping, type HookRequest, type MapResult } from './compile-mapping.js';
import { DEFAULT_JSONATA_LIMITS, type JsonataLimits } from './jsonata.js';
import type { StepBudget } from './jsonata-budget.js';
import { createSchemaCompiler } from './payload-schema.js';
import { createTransformPool, type PoolSettings } from './transform-pool.js';
import { callbackField, createValidator, type ActionValidator } from './validate.js';
import { HookError } from '../errors.js';
import type { WhenFailure } from './mapping-answers.js';
import { createMatcher } from './match.js';
import { createExplainer, type Explanation } from './explain.js';
import { decider, type Decision, type DecidePorts, type DecideRequest } from './decide.js';
import type { Payload } from '../transform-types.js';

/** `forEach: "*"`: one action per element of a payload that is itself an array. */
const EACH_ELEMENT = '*';

export type { WhenFailure };

/** Injection points for specs. */
export interface EngineOptions {
  /** Makes the `hook:<uuid>` session keys; default a time-ordered UUIDv7 (ids.ts). */
  uuid?: () => string;
  /** JSONata guardrails; default {@link DEFAULT_JSONATA_LIMITS}. */
  jsonata?: Partial<JsonataLimits>;
}

/** The mapping engine: built once from the config, then called per request; no Koa, no network, no file reads. */
export interface Engine {
  /** Mapping ids in match order (user mappings, then presets), for logs. */
  readonly mappings: readonly string[];
  /** The one call per request (decide.ts). */
  decide(req: DecideRequest, ports?: DecidePorts): Promise<Decision>;
  /** Every mapping on the request's path in order, matched or the first condition that failed (CONTRACT.md §16); the slow path only. */
  explain(req: MatchRequest): Promise<Explanation>;
  /** The methods the mappings take on `{path}/NAME` (CONTRACT.md §12); a NAME no mapping can take takes POST. */
  methods(name: string): MappedMethods;
  /** Stops the transform workers. */
  close(): Promise<void>;
}

/** The methods of a NAME ({@link Engine.methods}): the `Allow` header's text, and each one. */
export interface MappedMethods {
  readonly allow: string;
  readonly GET: boolean;
  readonly POST: boolean;
}

/** The methods of each NAME a mapping names, and of any other, in one pass (a mapping with no `match.path` takes every NAME). */
function methodsByName(mappings: readonly CompiledMapping[]): (name: string) => MappedMethods {
  const any = { GET: false, POST: false };
  const named = new Map<string, { GET: boolean; POST: boolean }>();
  for (const m of mappings) {
    const path = m.match.path;
    if (path === undefined) any[m.method] = true;
    else if (named.has(path)) named.get(path)![m.method] = true;
    else named.set(path, { GET: m.method === 'GET', POST: m.method === 'POST' });
  }
  const methodsOf = (takes: { GET: boolean; POST: boolean }): MappedMethods => {
    const GET = takes.GET || any.GET;
    const POST = !GET || takes.POST || any.POST;
    return Object.freeze({ allow: [GET && 'GET', POST && 'POST'].filter(Boolean).join(', '), GET, POST });
  };
  const byName = new Map([...named].map(([name, takes]) => [name, methodsOf(takes)]));
  const other = methodsOf({ GET: false, POST: false });
  return (name) => byName.get(name) ?? other;
}

/** What matching needs of a request. */
export type MatchRequest = Pick<HookRequest, 'name' | 'payload' | 'headers' | 'withheld' | 'query' | 'method'>;

/** The settings of `hooks` a compile needs. */
type CompileSettings = PoolSettings & Pick<Config['hooks'], 'allowUnsafeExternalContent'>;

/** Compiles every mapping (transforms in a new worker pool, which the caller closes), skipping the parts `skip` names; without `validator`, only for the problems. */
async function compileAll(mappings: readonly MappingConfig[], hooks: CompileSettings, opts: EngineOptions, skip: (path: string) => boolean, validator?: ActionValidator) {
  const at = (i: number) => `hooks.mappings[${i}]`;
  const transformSpecs = mappings.flatMap((m, i) => (m.transform && !skip(`${at(i)}.transform`) ? [m.transform] : []));
  // The workers load while the templates compile.
  const ready = createTransformPool(transformSpecs, hooks);
  const deps: CompileDeps = {
    loadTransform: async (spec) => (await ready).load(spec),
    jsonataLimits: { ...DEFAULT_JSONATA_LIMITS, ...opts.jsonata },
    compileSchema: createSchemaCompiler(),
    validator,
    allowUnsafeExternalContent: hooks.allowUnsafeExternalContent,
  };
  // One list per mapping, joined in mapping order: a transform's problem arrives later than the rest.
  const lists = mappings.map((): ConfigProblem[] => []);
  const compiled = await Promise.all(mappings.map((m, i) => compileMapping(m, at(i), deps, lists[i]!, skip)));
  return { compiled, problems: lists.flat(), transforms: await ready };
}

/** Compiles every mapping of `config.hooks.mappings`; throws one ConfigError naming each problem by its YAML path. */
export async function createEngine(config: Config, opts: EngineOptions = {}): Promise<Engine> {
  const { hooks } = config;
  const { maxSteps } = { ...DEFAULT_JSONATA_LIMITS, ...opts.jsonata };
  const validator = createValidator(config, opts.uuid);
  const { compiled, problems, transforms } = await compileAll(hooks.mappings, hooks, opts, () => false, validator);
  if (problems.length > 0) {
    await transforms.close();
    throw new ConfigError(problems);
  }
  const mappings = compiled as CompiledMapping[];
  const match = createMatcher(mappings);
  const methods = methodsByName(mappings);
  const callbackOf = callbackField(config);
  const direct = { wake: { source: 'wake', unsafe: hooks.allowUnsafeExternalContent }, agent: { source: 'agent', unsafe: hooks.allowUnsafeExternalContent } };

  async function mapEach(mapping: CompiledMapping, req: HookRequest, now: string, key: string, budget: StepBudget): Promise<MapResult> {
    const list = itemsOf(req.payload, key);
    // Missing (or null) and empty mean "nothing to do"; any other value is a sender's mistake
    // that a 204 would hide (CONTRACT.md §6).
    if (list === undefined || list === null) return undefined;
    if (!Array.isArray(list)) throw new HookError('invalid_payload', `payload/${key}: must be an array (the mapping's forEach)`);
    if (list.length === 0) return undefined;
    const count = Math.min(list.length, hooks.maxFanOut);
    const pending = list.slice(0, count).map((item, i) => mapping.act(req, now, item, i, budget));
    const actions = (await Promise.all(pending)).filter((a): a is Action => a !== null);
    if (actions.length === 0) return undefined;
    return list.length > count ? { actions, dropped: list.length - count } : { actions };
  }

  async function mapWith(req: HookRequest, mapping: CompiledMapping): Promise<MapResult> {
    mapping.checkPayload?.(req.payload);
    const now = req.now.toISOString();
    if (mapping.respond) return { answer: await mapping.respond(req, now) };
    // One budget for all the request's JSONata: a batch is judged by its own work (jsonata-budget.ts).
    const budget: StepBudget = { left: maxSteps };
    if (mapping.forEach !== undefined) return mapEach(mapping, req, now, mapping.forEach, budget);
    const action = await mapping.act(req, now, undefined, -1, budget);
    return action === null ? undefined : { actions: [action] };
  }

  const wake = (body: unknown) => validator.wake(body, direct.wake);
  const agent = (body: unknown) => {
    const action = validator.agent(body, direct.agent, true);
    const url = callbackOf(body);
    if (url !== undefined) action.callbackUrl = url;
    return action;
  };
  const explain = createExplainer(mappings);
  return {
    mappings: Object.freeze(mappings.map((m) => m.id)),
    decide: decider({ match, map: mapWith, wake, agent, explain }, hooks),
    explain,
    methods,
    close: transforms.close,
  };
}

/** What `forEach: KEY` iterates: the payload's own key `KEY`, or with `*` the payload itself, a top-level array (CONTRACT.md §6, §15). */
function itemsOf(payload: Payload, key: string): unknown {
  if (key === EACH_ELEMENT) {
    if (!Array.isArray(payload)) throw new HookError('invalid_payload', 'payload: must be a JSON array (the mapping\'s forEach: "*" takes one action per element of a top-level array)');
    return payload;
  }
  if (Array.isArray(payload)) throw new HookError('invalid_payload', `payload: is a JSON array, not an object with the key "${key}": forEach: "*" takes one action per element of a top-level array`);
  return Object.hasOwn(payload, key) ? payload[key] : undefined;
}

/** The compile problems of a draft config the loader refused, skipping the parts it refused, so one pass reports all (CONTRACT.md §2). */
export async function compileProblems(draft: Record<string, any>, loaderProblems: readonly ConfigProblem[], opts: EngineOptions = {}): Promise<ConfigProblem[]> {
  const hooks = draft.hooks;
  if (hooks === null || typeof hooks !== 'object' || !Array.isArray(hooks.mappings)) return [];
  const broken = (path: string) => loaderProblems.some((p) => isAtOrBelow(p.path, path));
  // Transforms need a usable transformsDir and pool settings; a mapping that is not a map has nothing to compile.
  const settingsBroken = ['hooks.transformsDir', 'hooks.transformPoolSize', 'hooks.transformTimeoutMs', 'hooks.transformMaxMemoryMb', 'hooks.maxTextLength'].some(broken);
  const skip = (path: string) => broken(path) || (settingsBroken && path.endsWith('.transform'));
  const mappings = hooks.mappings.map((m: unknown) => (m !== null && typeof m === 'object' && !Array.isArray(m) ? m : {})) as MappingConfig[];
  const { problems, transforms } = await compileAll(mappings, hooks, opts, skip);
  await transforms.close();
  return problems;
}
