import type { MappingConfig } from '../config/types.js';
import { answer } from '../http/answer.js';
import type { Exchange } from '../http/exchange.js';
import { isCredentialName } from '../credentials.js';
import { RUN_STATUSES, type EventRecord, type RunRecord } from '../store/records.js';
import { html, type Html } from './html.js';
import { badge, cell, field, filterSelect, layout, pager, time } from './layout.js';

/** Answers with a console page (through the listener's one answer(), http/answer.ts). */
export function answerPage(ex: Exchange, status: number, page: Html): void {
  answer(ex, status, { 'content-type': 'text/html; charset=utf-8' }, page.text);
}

/** 303: after a POST the browser GETs the target (RFC 9110 §15.4.4); an empty text body, as Koa's ctx.redirect() sends. */
export function redirect(ex: Exchange, location: string): void {
  answer(ex, 303, { location, 'content-type': 'text/plain; charset=utf-8' }, '');
}

/** Where this server's admin token is: the file `serve` generated, or the config key and file (never the token). */
export type AdminTokenAt = { file: string } | { key: 'server.adminToken' | 'server.adminTokens'; configFile: string };

/** The sign-in page: where this server's admin token is, and `problem`: why the last try was refused. */
export function loginPage(at?: AdminTokenAt, problem?: string): Html {
  return layout('Sign in', undefined, html`<section class="signin">
<h1>Sign in</h1>
<p>Paste the admin token: <code>server.adminToken</code> (or one of <code>server.adminTokens</code>), or, when none is configured, the one <code>serve</code> generated in <code>{dataDir}/admin-token</code>. A hooks token only sends, it does not sign in.</p>
${at === undefined ? '' : 'file' in at
    ? html`<p class="token-at">This server generated its admin token: it is in the file <code>${at.file}</code> on the server (<code>cat ${at.file}</code>).</p>`
    : html`<p class="token-at">This server's admin token is <code>${at.key}</code> in <code>${at.configFile}</code>.</p>`}
${problem ? html`<p class="problem" role="alert">${problem}</p>` : ''}
<form method="post" action="/console/login">
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button>
</form>
</section>`);
}

/** The runs table: newest first, filtered by `status`, paged on with `before`. */
export function runsPage(runs: RunRecord[], status: string | undefined, before: string | undefined, pageSize: number): Html {
  const query = (extra: Record<string, string>) => `/console/?${new URLSearchParams({ ...(status ? { status } : {}), ...extra })}`;
  const last = runs[runs.length - 1];
  return layout('Runs', 'runs', html`<div class="heading">
<h1>Runs</h1>
<form method="get" action="/console/" class="filter">
${filterSelect('status', 'Status', RUN_STATUSES.map((s) => ({ value: s, text: s.replace('_', ' ') })), status)}
<noscript><button type="submit">Filter</button></noscript>
</form>
</div>
${runs.length === 0
    ? html`<p class="empty">No ${status ? status.replace('_', ' ') : ''} runs${before ? ' before that one' : ''} yet.</p>`
    : html`<div class="scroll"><table class="runs">
<thead><tr><th>Accepted</th><th>Status</th><th>Name</th><th>Session</th><th>Model</th><th>Delivery</th></tr></thead>
<tbody>
${runs.map((r) => html`<tr>
<td>${time(r.createdAt)}</td>
<td>${badge(r.status)}</td>
<td><a href="/console/runs/${encodeURIComponent(r.runId)}">${r.name ? cell(r.name) : html`<span class="id">${r.runId}</span>`}</a></td>
<td class="mono">${cell(r.sessionKey)}</td>
<td class="mono">${r.model === undefined ? html`<span class="none">default</span>` : cell(r.model)}</td>
<td>${r.delivery ? html`${badge(r.delivery.status)} <span class="mono">${cell(r.delivery.target)}</span>` : html`<span class="none">—</span>`}</td>
</tr>`)}
</tbody></table></div>`}
${pager(before ? query({}) : undefined, last && runs.length === pageSize ? query({ before: last.runId }) : undefined)}`);
}

/** One run: what it was asked, what it answered, how it ended, and its delivery. */
export function runPage(r: RunRecord): Html {
  const d = r.delivery;
  return layout(`Run ${r.name ?? r.runId}`, 'runs', html`<p class="crumbs"><a href="/console/">Runs</a> /</p>
<h1>${r.name || 'Run'} ${badge(r.status)}</h1>
<dl class="facts">
${field('Run id', html`<span class="mono">${r.runId}</span>`)}
${field('Session', html`<span class="mono">${r.sessionKey}</span>`)}
${field('Model', r.model)}
${field('Thinking', r.thinking)}
${field('Source', r.source)}
${field('Accepted', time(r.createdAt))}
${field('Started', r.startedAt && time(r.startedAt))}
${field('Ended', r.endedAt && time(r.endedAt))}
</dl>
<h2>Message</h2>
<pre class="text">${r.message}</pre>
<h2>Reply</h2>
${r.reply === undefined ? html`<p class="none">No reply${r.status === 'queued' || r.status === 'running' ? ' yet' : ''}.</p>` : html`<pre class="text">${r.reply}</pre>`}
${r.error === undefined ? '' : html`<h2>Error</h2><p class="problem"><code>${r.errorCode ?? 'error'}</code> ${r.error}</p>`}
<h2>Delivery</h2>
${d ? html`<dl class="facts delivery">
${field('Status', badge(d.status))}
${field('Target', html`<span class="mono">${d.target}</span>`)}
${field('Attempts', String(d.attempts))}
${field('Last error', d.error)}
${field('Delivered to', r.deliveredTo)}
</dl>` : html`<p class="none">${r.deliver ? 'Not put into the outbox (no reply to deliver, or only HEARTBEAT_OK).' : 'Not asked to deliver its reply.'}</p>`}`);
}

/** The main session's events, newest first; console.js adds new ones live from `/console/events/stream?after=`. */
export function eventsPage(events: EventRecord[], after: number): Html {
  return layout('Events', 'events', html`<div class="heading">
<h1>Events</h1>
<p class="live" id="live" data-state="connecting">connecting…</p>
</div>
<p class="hint">The main session's events: wakes, run summaries and heartbeat replies. New ones appear as they are committed.</p>
<div class="scroll"><table class="events" id="events" data-after="${after}">
<thead><tr><th>#</th><th>Time</th><th>Kind</th><th>Source</th><th>Text</th></tr></thead>
<tbody>
${[...events].reverse().map((e) => html`<tr>
<td class="mono">${e.seq}</td>
<td>${time(e.at)}</td>
<td>${badge(e.kind)}</td>
<td class="mono">${sourceLink(e.source)}</td>
<td><div class="text">${e.text}</div></td>
</tr>`)}
</tbody></table></div>
<p class="empty" id="no-events"${events.length ? html` hidden` : ''}>No events yet.</p>`);
}

/** A summary's source names its run: link to it. */
function sourceLink(source: string): Html | string {
  return source.startsWith('run:') ? html`<a href="/console/runs/${encodeURIComponent(source.slice(4))}">${cell(source)}</a>` : cell(source);
}

/** A mapping's flow control (docs/flow-control.md): its limits, and a pause or resume button (a POST of this page, same-origin checked). */
function flowCell(m: MappingConfig, paused: boolean): Html {
  const limits = [m.concurrency === undefined ? '' : `concurrency ${m.concurrency}`, m.ratePerMinute === undefined ? '' : `${m.ratePerMinute}/min`].filter(Boolean).join(', ');
  const verb = paused ? 'resume' : 'pause';
  return html`${paused ? html`${badge('paused')} ` : ''}${limits}<form method="post" action="/console/${verb}/${encodeURIComponent(m.id)}" class="flow">
<button type="submit">${paused ? 'Resume' : 'Pause'}</button></form>`;
}

/** The mappings in match order, and the playground. Never a secret: of `verify` only its scheme. */
export function mappingsPage(mappings: readonly MappingConfig[], hooksPath: string, paused: ReadonlySet<string> = new Set()): Html {
  const names = [...new Set(mappings.map((m) => m.match.path).filter((p): p is string => p !== undefined))];
  return layout('Mappings', 'mappings', html`<h1>Mappings</h1>
<p class="hint">In match order: the first that matches <code>POST ${hooksPath}/NAME</code> wins. <a href="/console/diff" id="diff-link">Before you change a mapping</a>: see what a new config would do to the requests the log kept.</p>
${mappings.length === 0 ? html`<p class="empty">No mappings (hooks.mappings and hooks.presets are empty).</p>` : html`<div class="scroll"><table class="mappings">
<thead><tr><th>Id</th><th>Match</th><th>Action</th><th>Engine</th><th>Verifies</th><th>Transform</th><th>forEach</th><th>Flow</th></tr></thead>
<tbody>
${mappings.map((m) => html`<tr>
<td class="mono">${cell(m.id)}</td>
<td class="mono">${cell(matchText(m, hooksPath))}</td>
<td>${badge(m.action)}</td>
<td>${m.engine}</td>
<td>${m.verify ? html`${m.verify.scheme}${m.auth === 'signature' ? ' (instead of the token)' : ''}` : html`<span class="none">no</span>`}</td>
<td class="mono">${m.transform ? cell(`${m.transform.module}${m.transform.export ? `#${m.transform.export}` : ''}`) : html`<span class="none">no</span>`}</td>
<td class="mono">${m.forEach === undefined ? html`<span class="none">no</span>` : cell(m.forEach)}</td>
<td>${flowCell(m, paused.has(m.id))}</td>
</tr>`)}
</tbody></table></div>`}
<h2 id="playground-title">Playground</h2>
<p class="hint">Renders a payload through the mappings exactly as <code>hookrelay test</code> does. Nothing is dispatched or stored.</p>
<form id="playground" class="playground" method="post" action="/console/playground">
<label for="pg-method">Method</label>
<select id="pg-method" name="method"><option>POST</option><option>GET</option></select>
<label for="pg-name">${hooksPath}/</label>
<input id="pg-name" name="name" list="pg-names" required placeholder="NAME" value="${names[0] ?? ''}">
<datalist id="pg-names">${names.map((n) => html`<option value="${n}">`)}</datalist>
<label for="pg-payload">Payload (JSON; a GET's payload is its query)</label>
<textarea id="pg-payload" name="payload" rows="10" spellcheck="false">{}</textarea>
<div class="pair">
<div><label for="pg-headers">Headers, one <code>name: value</code> a line</label>
<textarea id="pg-headers" name="headers" rows="3" spellcheck="false"></textarea></div>
<div><label for="pg-query">Query string</label>
<input id="pg-query" name="query" placeholder="a=1&amp;b=2" spellcheck="false"></div>
</div>
<button type="submit">Render</button>
</form>
<h3>Result</h3>
<pre id="playground-output" class="output" aria-live="polite">Press Render.</pre>`);
}

function matchText(m: MappingConfig, hooksPath: string): string {
  const parts = [m.match.path === undefined ? `${hooksPath}/*` : `${hooksPath}/${m.match.path}`];
  if (m.match.method === 'GET') parts.unshift('GET');
  if (m.match.source !== undefined) parts.push(`source=${m.match.source}`);
  // A mapping may match on a sender's secret (X-Gitlab-Token): its value is not shown (CONTRACT.md §8).
  for (const [k, v] of Object.entries(m.match.headers ?? {})) parts.push(`${k}: ${isCredentialName(k) ? '[redacted]' : v}`);
  if (m.match.when !== undefined) parts.push(`when ${m.match.when}`);
  return parts.join(' · ');
}

/** A page for what is not there (an unknown console path or run). */
export function notFoundPage(what: string, title = 'Not found'): Html {
  return layout(title, 'runs', html`<h1>${title}</h1><p>${what}</p><p><a href="/console/">Back to the runs</a></p>`);
}
