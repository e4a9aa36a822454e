import { dryRun, DryRunProblem } from '../dry-run.js';
import { HookError } from '../errors.js';
import { answerJson } from '../http/answer.js';
import type { Exchange } from '../http/exchange.js';
import { readBody } from './read-body.js';
import type { PageDeps } from './routes.js';

/**
 * POST `/console/playground`: `{name, method?, payload, headers, query}` → `{ok, output}` (`hookrelay test`'s)
 * or `{ok, problem}`: a payload rendered through the mappings; nothing is dispatched or stored.
 */
export async function playground(deps: PageDeps, ex: Exchange): Promise<void> {
  // The body is a payload, headers and a query in JSON: room for a payload of maxBodyBytes, escaped.
  const raw = await readBody(ex.req, deps.maxBodyBytes * 2 + 16 * 1024);
  let input: { name?: unknown; method?: unknown; payload?: unknown; headers?: unknown; query?: unknown };
  try {
    input = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HookError('invalid_json', 'the playground request is not JSON');
  }
  const headers = headerLines(text(input.headers, 'headers'));
  const method = text(input.method, 'method') || 'POST';
  if (method !== 'GET' && method !== 'POST') throw new HookError('invalid_payload', 'method: must be GET or POST');
  try {
    const output = await dryRun(deps.engine, deps.hooksPath, {
      name: text(input.name, 'name').replace(/^\/+/, ''),
      method,
      body: Buffer.from(text(input.payload, 'payload'), 'utf8'),
      headers,
      query: text(input.query, 'query').replace(/^\?/, ''),
      now: new Date(),
    });
    answerJson(ex, 200, { ok: true, output });
  } catch (e) {
    if (!(e instanceof DryRunProblem)) throw e;
    // What the mapping refused, as `hookrelay test` says it (without the cause: it stays in the CLI).
    answerJson(ex, 200, { ok: true, problem: e.message });
  }
}

/** A field of the playground request: a string, or '' when absent. */
function text(v: unknown, field: string): string {
  if (v === undefined) return '';
  if (typeof v !== 'string') throw new HookError('invalid_payload', `${field}: must be a string`);
  return v;
}

/** Headers typed one `name: value` a line; names lower-cased. */
function headerLines(lines: string): Record<string, string> {
  const headers: Record<string, string> = {};
  lines.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new HookError('invalid_payload', `headers line ${i + 1}: expected "name: value"`);
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  });
  return headers;
}
