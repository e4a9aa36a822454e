import { uuidv7 } from '../ids.js';
import type { ErrorObject } from 'ajv';
import type { Config, ProviderOrLast, WakeMode } from '../config/types.js';
import { MAX_TIMEOUT_SECONDS, PROVIDERS, sessionKeyRule, unconfiguredProvider, wholeSeconds } from '../config/schema.js';
import { actionCheckers } from './action-schemas.js';
import { HookError } from '../errors.js';
import type { AgentAction, WakeAction } from '../action.js';
import { callbackUrlProblem, compileHostRule } from '../callback-url.js';

/** Where an action's text came from and whether it may skip the untrusted-content fence. */
export interface ActionOrigin {
  source: string;
  unsafe: boolean;
}

/** The one validation step for direct bodies and mapping results alike (CONTRACT.md §5–6); throws HookError. */
export interface ActionValidator {
  wake(body: unknown, origin: ActionOrigin): WakeAction;
  agent(body: unknown, origin: ActionOrigin, deliverDefault: boolean): AgentAction;
}

const FIELD_RULES: Record<string, string> = {
  text: 'text must be a non-empty string',
  message: 'message must be a non-empty string',
  name: 'name must be a string',
  sessionKey: 'sessionKey must be a string',
  deliver: 'deliver must be true or false',
  to: 'to must be a string',
  model: 'model must be a string',
  timeoutSeconds: `timeoutSeconds must be a positive number of seconds, at most ${MAX_TIMEOUT_SECONDS}`,
  agentId: 'agentId must be a non-empty string',
  waitForCompletion: 'waitForCompletion must be true or false',
};

const { wake: validateWakeBody, agent: validateAgentBody } = actionCheckers();

interface WakeBody {
  text: string;
  mode?: WakeMode | null;
}

/** An `/agent` body as its schema admits it: the action's fields, each optional and nullable. */
type AgentBody = { message: string; channel?: ProviderOrLast | null } & {
  [F in 'name' | 'sessionKey' | 'wakeMode' | 'deliver' | 'provider' | 'to' | 'model' | 'thinking' | 'timeoutSeconds' | 'agentId' | 'sessionMode']?: AgentAction[F] | null;
};

function invalid(message: string): HookError {
  return new HookError('invalid_payload', message);
}

function describe(error: ErrorObject, body: unknown): string {
  if (error.keyword === 'required') return `${String(error.params.missingProperty)} is required`;
  const field = error.instancePath.slice(1);
  if (field === '') return 'the body must be a JSON object';
  if (error.keyword === 'pattern') return `${field} must not be empty or blank`;
  if (error.keyword === 'enum') return `${field} must be one of: ${(error.params.allowedValues as unknown[]).filter((v) => v !== null).join(', ')}`;
  if ((body as Record<string, unknown>)[field] === null && (field === 'text' || field === 'message')) return `${field} is required`;
  return FIELD_RULES[field] ?? `${field} is invalid`;
}

function optionalText(value: string | null | undefined): string | undefined {
  if (value === undefined || value === null) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

const WAKE_STRINGS = ['text'] as const;
const AGENT_STRINGS = ['message', 'name', 'to', 'model'] as const;

function fold(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/** Builds the validator for one configuration (session key prefixes, model aliases and allow-list). */
export function createValidator(config: Config, uuid: () => string = uuidv7): ActionValidator {
  const prefixes = config.hooks.allowedSessionKeyPrefixes.map(fold);
  const maxText = config.hooks.maxTextLength;
  const prefixRule = `sessionKey must start with one of: ${config.hooks.allowedSessionKeyPrefixes.join(', ')}`;
  const defaultSessionKey = config.hooks.defaultSessionKey;
  const agentId = config.agent.id;
  const aliases = config.agent.aliases;
  // An allowed alias admits its target by name too (README "agent.allowedModels").
  const allowedModels = new Set(config.agent.allowedModels.flatMap((m) => (Object.hasOwn(aliases, m) ? [m, aliases[m]!] : [m])));
  const modelRule = `model is not in agent.allowedModels (allowed: ${config.agent.allowedModels.join(', ')})`;
  // A provider that cannot deliver is refused up front (CONTRACT.md §9), with what to configure.
  const providerRules = new Map<string, string>();
  if (config.runtime.kind === 'local') for (const p of PROVIDERS) {
    const problem = unconfiguredProvider(p, config.providers);
    if (problem) providerRules.set(p, `provider ${p} is not configured: ${problem}`);
  }

  function sessionKeyOf(given: string | null | undefined): string {
    if (given === undefined || given === null) return defaultSessionKey || `hook:${uuid()}`;
    // Stored as checked: look-alike spellings name one session (Unicode UAX #15, TR36 §2.10).
    const key = given.trim().normalize('NFKC');
    const rule = sessionKeyRule(key);
    if (rule) throw invalid(`sessionKey ${rule}`);
    for (const prefix of prefixes) if (fold(key.slice(0, prefix.length)) === prefix) return key;
    throw new HookError('session_key_not_allowed', prefixRule);
  }

  function modelOf(given: string | null | undefined): string | undefined {
    if (given === undefined || given === null) return undefined;
    const requested = given.trim();
    const resolved = Object.hasOwn(aliases, requested) ? aliases[requested]! : requested;
    if (allowedModels.size > 0 && !allowedModels.has(requested) && !allowedModels.has(resolved)) {
      throw new HookError('model_not_allowed', modelRule);
    }
    return resolved;
  }

  function checkLengths(body: Record<string, unknown>, fields: readonly string[]): void {
    for (const field of fields) {
      const value = body[field];
      if (typeof value === 'string' && value.length > maxText) {
        throw invalid(`${field} is longer than ${maxText} characters (hooks.maxTextLength): send or render less, or raise hooks.maxTextLength`);
      }
    }
  }

  return {
    wake(body, origin) {
      if (!validateWakeBody(body)) throw invalid(describe(validateWakeBody.errors![0]!, body));
      checkLengths(body as Record<string, unknown>, WAKE_STRINGS);
      const b = body as WakeBody;
      return { kind: 'wake', text: b.text.trim(), mode: b.mode ?? 'now', source: origin.source, unsafe: origin.unsafe };
    },

    agent(body, origin, deliverDefault) {
      if (!validateAgentBody(body)) throw invalid(describe(validateAgentBody.errors![0]!, body));
      checkLengths(body as Record<string, unknown>, AGENT_STRINGS);
      const b = body as AgentBody;
      if (b.provider != null && b.channel != null && b.provider !== b.channel) {
        throw invalid('provider and channel disagree: channel is an alias of provider, send one of them');
      }
      if (b.agentId != null && b.agentId.trim().toLowerCase() !== agentId.toLowerCase()) {
        throw invalid(`agentId names no agent here: the only agent is agent.id (${JSON.stringify(agentId)})`);
      }
      const provider = b.provider ?? b.channel ?? 'last';
      const deliver = b.deliver ?? deliverDefault;
      const to = optionalText(b.to);
      if (deliver && provider !== 'last' && to === undefined) {
        throw invalid(`to is required when deliver is true and provider is ${provider}`);
      }
      const providerRule = deliver ? providerRules.get(provider) : undefined;
      if (providerRule) throw invalid(providerRule);
      const action = { kind: 'agent', message: b.message.trim() } as AgentAction;
      const name = optionalText(b.name);
      if (name !== undefined) action.name = name;
      action.sessionKey = sessionKeyOf(b.sessionKey);
      if (b.sessionKey != null) action.sessionKeyGiven = true;
      if (b.sessionMode != null) action.sessionMode = b.sessionMode;
      if (b.agentId != null) action.agentId = agentId;
      action.wakeMode = b.wakeMode ?? 'now';
      action.deliver = deliver;
      action.provider = provider;
      if (to !== undefined) action.to = to;
      const model = modelOf(b.model);
      if (model !== undefined) action.model = model;
      if (b.thinking != null) action.thinking = b.thinking;
      if (b.timeoutSeconds != null) action.timeoutSeconds = wholeSeconds(b.timeoutSeconds);
      action.source = origin.source;
      action.unsafe = origin.unsafe;
      return action;
    },
  };
}

/** Reads `callbackUrl` of a direct `POST {path}/agent` body (docs/callbacks.md). */
export function callbackField(config: Readonly<Config>): (body: unknown) => string | undefined {
  const allowed = compileHostRule(config.hooks.callbackHosts);
  const secret = config.hooks.callbackSecret !== '';
  const forward = config.runtime.kind === 'forward';
  return (body) => {
    const url = (body as { callbackUrl?: unknown } | null | undefined)?.callbackUrl;
    if (url === undefined || url === null) return undefined;
    if (typeof url !== 'string') throw invalid('callbackUrl must be a string: an http:// or https:// URL');
    if (!secret) throw invalid('callbackUrl is not accepted: this gateway has no hooks.callbackSecret to sign callbacks with (ask its operator to set one)');
    if (forward) throw invalid('callbackUrl is not available with runtime.kind: forward (the run is carried out upstream)');
    const problem = callbackUrlProblem(url.trim(), allowed);
    if (problem) throw invalid(`callbackUrl ${problem}`);
    return url.trim();
  };
}
