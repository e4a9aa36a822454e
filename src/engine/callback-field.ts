import { callbackUrlProblem, compileHostRule } from '../callback-url.js';
import type { Config } from '../config/types.js';
import { HookError } from '../errors.js';

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

function invalid(message: string): HookError {
  return new HookError('invalid_payload', message);
}
