import type { ConfigProblem } from './errors.js';
import { isPlainObject, type Obj } from './read.js';
import type { Config } from './types.js';

/**
 * The two kinds of credential (CONTRACT.md §4): one spelling each, an admin token never equal
 * to a hooks token, and scoped routes that name `wake`, `agent` or a mapping. Never echoes a token.
 */
export function credentialProblems(cfg: Config): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const server = cfg.server as Obj;
  const hooks = cfg.hooks as Obj;
  if (!isPlainObject(server) || !isPlainObject(hooks)) return problems;
  if (server.adminTokens !== undefined && server.adminToken) problems.push({ path: 'server.adminTokens', message: 'give server.adminToken or server.adminTokens (a list, for rotation), not both' });
  const entries: unknown[] = Array.isArray(hooks.tokens) ? hooks.tokens : [hooks.token];
  const hookTokens = new Set(entries.map((e) => (isPlainObject(e) ? e.token : e)).filter((t) => typeof t === 'string' && t !== ''));
  const admins: [unknown, string][] = Array.isArray(server.adminTokens)
    ? server.adminTokens.map((t: unknown, i: number) => [t, `server.adminTokens[${i}]`])
    : [[server.adminToken, 'server.adminToken']];
  for (const [token, path] of admins) {
    if (typeof token === 'string' && hookTokens.has(token)) problems.push({ path, message: 'is also a hooks token: the admin token reads events, runs and metrics, so it must be a secret of its own that no sender holds' });
  }
  if (!Array.isArray(hooks.tokens)) return problems;
  const seen = new Map<unknown, number>();
  hooks.tokens.forEach((e: unknown, i: number) => {
    const t = isPlainObject(e) ? e.token : e;
    if (typeof t !== 'string') return;
    if (seen.has(t)) problems.push({ path: `hooks.tokens[${i}]`, message: `has the same token as hooks.tokens[${seen.get(t)}]: give each sender its own` });
    else seen.set(t, i);
  });
  const known = new Set(['wake', 'agent', ...(Array.isArray(hooks.mappings) ? hooks.mappings : []).map((m: unknown) => (isPlainObject(m) ? m.id : undefined))]);
  hooks.tokens.forEach((e: unknown, i: number) => {
    if (!isPlainObject(e) || !Array.isArray(e.routes)) return;
    e.routes.forEach((r: unknown, j: number) => {
      if (typeof r === 'string' && !known.has(r)) {
        problems.push({ path: `hooks.tokens[${i}].routes[${j}]`, message: `"${r.slice(0, 100)}" names no route: use wake, agent or a mapping id (${[...known].filter((k) => typeof k === 'string').slice(0, 20).join(', ')})` });
      }
    });
  });
  return problems;
}
