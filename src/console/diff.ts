import { compileConfig } from '../compile-config.js';
import { ConfigError, type ConfigProblem } from '../config/errors.js';
import { isPlainObject, parseConfigText } from '../config/read.js';
import { createEngine } from '../engine/engine.js';
import { diffCountsText, diffLineText, diffRequests, keptRequests, type DiffReport } from '../fixtures/diff.js';
import { fixtureContext } from '../fixtures/run-fixture.js';
import type { Exchange } from '../http/exchange.js';
import { html, type Html } from './html.js';
import { layout } from './layout.js';
import { answerPage } from './pages.js';
import { readBody } from './read-body.js';
import type { PageDeps } from './routes.js';

/** A pasted config, as form data; the requests compared: `hookrelay diff`'s default, the most a page runs. */
const PASTED_MAX_BYTES = 1024 * 1024;
const DIFF_LIMIT = 500;
/** Both sides draw this where a request draws an id (a session key's uuid), as `hookrelay diff` does. */
const STAND_IN = { uuid: () => '00000000-0000-7000-8000-000000000000' };
/** Where `${VAR}` may stand in a pasted config: secrets the dry run signs with, never printed. A variable elsewhere could print the server's environment. */
const SECRET_PATH = /\.verify\.(secret|secrets\[\d+\]|verifyToken)$/;

/** GET `/console/diff`: the form. */
export function diffForm(_deps: PageDeps, ex: Exchange): void {
  answerPage(ex, 200, diffPage(''));
}

/** POST `/console/diff`: `hookrelay diff` on a pasted config (CONTRACT.md §16); nothing is dispatched or stored. */
export async function diffRun(deps: PageDeps, ex: Exchange): Promise<void> {
  const text = new URLSearchParams((await readBody(ex.req, PASTED_MAX_BYTES)).toString('utf8')).get('config') ?? '';
  let next;
  try {
    const raw = parseConfigText(text, 'pasted.yaml');
    const found = { problems: [] as ConfigProblem[], names: new Set<string>() };
    variables(raw, '', found);
    if (found.problems.length > 0) throw new ConfigError(found.problems);
    // Only the secrets' variables are read; any other is unset, its key waived outside the mappings.
    const env = Object.fromEntries([...found.names].map((n) => [n, process.env[n]]));
    // The current store and transform folder are compared, whatever the paste says of them.
    raw.dataDir = deps.config.dataDir;
    if (isPlainObject(raw.hooks)) raw.hooks.transformsDir = deps.config.hooks.transformsDir;
    next = await compileConfig(raw, `${deps.config.dataDir}/pasted.yaml`, env, STAND_IN, (path) => path.startsWith('hooks.mappings'));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    answerPage(ex, 200, diffPage(text, html`<p class="problem">The pasted config is invalid:</p>
<ul class="problems" id="problems">${e.problems.map((p) => html`<li class="mono">${p.path}: ${p.message}</li>`)}</ul>`));
    return;
  }
  const current = await createEngine(deps.config, STAND_IN);
  let report: DiffReport;
  try {
    const now = new Date();
    const rows = await keptRequests(deps.store, deps.hooksPath, DIFF_LIMIT);
    report = await diffRequests(fixtureContext(deps.config, current, () => now), fixtureContext(next.loaded.config, next.engine, () => now), rows);
  } finally {
    await Promise.all([current.close(), next.engine.close()]);
  }
  answerPage(ex, 200, diffPage(text, html`<h2>What would change</h2>
${report.lines.length === 0 ? html`<p class="empty">No outcome changes.</p>` : html`<ul class="diff" id="diff">${report.lines.map((l) => html`<li class="mono">${diffLineText(l)}</li>`)}</ul>`}
<p id="counts">${diffCountsText(report)}</p>`));
}

function diffPage(pasted: string, result?: Html): Html {
  return layout('Diff', 'mappings', html`<p class="crumbs"><a href="/console/mappings">Mappings</a> /</p>
<h1>Before you change a mapping</h1>
<p class="hint">Paste a whole config: the last ${DIFF_LIMIT} requests the log kept a body of go through the dry run of the config being served and of this one, and each request whose outcome would change is listed, as <code>hookrelay diff</code> does. Nothing is dispatched, stored or reloaded; its <code>dataDir</code>, <code>store</code> and <code>transformsDir</code> are the served config's, and <code>\${VAR}</code> is read only in a <code>verify</code> secret.</p>
<form method="post" action="/console/diff" class="diff-form">
<textarea name="config" rows="20" cols="100" spellcheck="false" required>${pasted}</textarea>
<button type="submit">Compare</button>
</form>
${result ?? ''}`);
}

/** The variables of `verify` secrets, and a problem for each `${VAR}` elsewhere in a mapping. */
function variables(value: unknown, path: string, found: { problems: ConfigProblem[]; names: Set<string> }): void {
  if (typeof value === 'string') {
    if (!value.includes('${')) return;
    if (SECRET_PATH.test(path)) for (const m of value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)) found.names.add(m[1]!);
    else if (path.startsWith('.hooks.mappings')) found.problems.push({ path: path.slice(1), message: 'the console expands ${VAR} only in a verify secret: paste the value here' });
    return;
  }
  if (Array.isArray(value)) value.forEach((v, i) => variables(v, `${path}[${i}]`, found));
  else if (isPlainObject(value)) for (const [k, v] of Object.entries(value)) variables(v, `${path}.${k}`, found);
}
