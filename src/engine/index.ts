/**
 * The mapping engine (STYLE.md: compile once, evaluate many). `createEngine` at load,
 * `engine.map()` per request; `dropPrototypeKeys` for the HTTP layer's parsed bodies.
 */
export type { Action, AgentAction, HookRequest, MapResult, WakeAction } from './action.js';
export type { TransformInput } from './context.js';
export { createEngine, type Engine, type EngineOptions } from './engine.js';
export { DEFAULT_JSONATA_LIMITS, type JsonataLimits } from './jsonata.js';
export { dropPrototypeKeys, isPrototypeKey } from './prototype-keys.js';
export { PROVIDERS, THINKING_LEVELS, WAKE_MODES, MAX_TIMEOUT_SECONDS } from './validate.js';
