import { callbackUrlProblem, compileHostRule } from '../callback-url.js';
import type { ConfigProblem } from './errors.js';
import { isPlainObject } from './read.js';
import type { Config } from './types.js';

/** A mapping's `callback` needs a secret, a URL a request's `callbackUrl` could name, an agent run, and a local runtime (in forward mode the run never ends here). */
export function callbackProblems(cfg: Config): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (!isPlainObject(cfg.hooks)) return problems;
  const hosts = Array.isArray(cfg.hooks.callbackHosts) ? cfg.hooks.callbackHosts : [];
  hosts.forEach((entry, i) => {
    try {
      compileHostRule([entry]);
    } catch (err) {
      problems.push({ path: `hooks.callbackHosts[${i}]`, message: (err as Error).message });
    }
  });
  const rule = problems.length === 0 ? compileHostRule(hosts) : undefined;
  const forward = isPlainObject(cfg.runtime) && cfg.runtime.kind === 'forward';
  (Array.isArray(cfg.hooks.mappings) ? cfg.hooks.mappings : []).forEach((m, i) => {
    if (!isPlainObject(m) || !isPlainObject(m.callback)) return;
    const path = `hooks.mappings[${i}].callback`;
    if (m.action === 'wake') problems.push({ path, message: 'is for agent mappings: a wake has no run to report on' });
    if (!cfg.hooks.callbackSecret) problems.push({ path, message: 'needs hooks.callbackSecret (a whsec_ secret) to sign callbacks with' });
    if (forward) problems.push({ path, message: 'is not available with runtime.kind: forward: the run is carried out upstream and never ends here' });
    const problem = rule && typeof m.callback.url === 'string' ? callbackUrlProblem(m.callback.url, rule) : undefined;
    if (problem) problems.push({ path: `${path}.url`, message: problem });
  });
  return problems;
}
