import type { RequestRecord } from '../store/records.js';
import { explanationLines, type Explanation } from '../match-explanation.js';
import { failureText } from '../failure.js';
import { html, type Html } from './html.js';
import { cell, field, filterSelect, layout, pager, time } from './layout.js';

const STATUS_CLASSES = [2, 3, 4, 5] as const;

/** What the requests page was asked for. */
export interface RequestsFilter {
  statusClass?: number;
  route?: string;
  before?: number;
}

/** A status code, coloured by its class (2xx green, 4xx amber, 5xx red). */
function statusBadge(status: number): Html {
  return html`<span class="badge badge-http${Math.floor(status / 100)}">${status}</span>`;
}

/** Signature failures, idempotent replays and console replays, as small markers. */
function markers(r: RequestRecord): Html {
  return html`${r.replayOf !== undefined ? html`<a class="marker marker-replay" href="/console/requests/${r.replayOf}" title="a console replay of request #${r.replayOf}">replay of #${r.replayOf}</a>` : ''}
${r.replayed ? html`<span class="marker marker-idempotent" title="answered with the first answer of its idempotency key">idempotent replay</span>` : ''}
${r.error === 'invalid_signature' || r.error === 'stale_signature' ? html`<span class="marker marker-signature">signature: ${r.error}</span>` : ''}`;
}

/** The actions a request brought: links to its runs, its event ids. */
function actions(r: RequestRecord): Html {
  if (r.runIds.length === 0 && r.eventIds.length === 0) return html`<span class="none">—</span>`;
  return html`${r.runIds.map((id) => html`<a class="mono action" href="/console/runs/${encodeURIComponent(id)}">run ${id.slice(-8)}</a> `)}${r.eventIds.map((id) => html`<span class="mono action" title="${id}">event ${id.slice(-8)}</span> `)}`;
}

/** The request log, newest first: filtered by status class and route, paged on with `before` (a seq). */
export function requestsPage(rows: RequestRecord[], filter: RequestsFilter, routes: readonly string[], pageSize: number): Html {
  const base: Record<string, string> = {};
  if (filter.statusClass !== undefined) base.status = `${filter.statusClass}xx`;
  if (filter.route !== undefined) base.route = filter.route;
  const query = (extra: Record<string, string>) => `/console/requests?${new URLSearchParams({ ...base, ...extra })}`;
  const last = rows[rows.length - 1];
  return layout('Requests', 'requests', html`<div class="heading">
<h1>Requests</h1>
<form method="get" action="/console/requests" class="filter">
${filterSelect('status', 'Status', STATUS_CLASSES.map((c) => ({ value: `${c}xx`, text: `${c}xx` })), base.status)}
${filterSelect('route', 'Route', routes.map((r) => ({ value: r, text: cell(r) })), filter.route)}
<noscript><button type="submit">Filter</button></noscript>
</form>
</div>
<p class="hint">Every answered request under the hooks path, newest first (refused ones appear within a fraction of a second). Reload for new ones.</p>
${rows.length === 0
    ? html`<p class="empty">No requests${filter.before !== undefined ? ' before that one' : ''} yet.</p>`
    : html`<div class="scroll"><table class="requests" id="requests">
<thead><tr><th>#</th><th>Time</th><th>Route</th><th>Status</th><th>Duration</th><th>Actions</th><th></th></tr></thead>
<tbody>
${rows.map((r) => html`<tr>
<td class="mono"><a href="/console/requests/${r.seq}">${r.seq}</a></td>
<td>${time(r.at)}</td>
<td class="mono">${r.method} ${cell(r.route)}${r.sender === undefined ? '' : html` <span class="sender" title="the hooks token it came with">${cell(r.sender)}</span>`}</td>
<td>${statusBadge(r.status)}${r.error ? html` <code class="code"${r.failures ? html` title="${r.failures.map(failureText).join('\n')}"` : ''}>${r.error}</code>` : ''}</td>
<td class="num">${r.ms.toFixed(1)} ms</td>
<td>${actions(r)}</td>
<td>${markers(r)}</td>
</tr>`)}
</tbody></table></div>`}
${pager(filter.before !== undefined ? query({}) : undefined, last && rows.length === pageSize ? query({ before: String(last.seq) }) : undefined)}`);
}

/** Why no mapping took the request, as it was when it came (CONTRACT.md §16). */
function explanation(e: Explanation): Html {
  return html`<h2>Why no mapping matched</h2>
<p class="hint">${e.mappings === 0 ? 'No mapping takes this path.' : html`The ${e.mappings === 1 ? 'one mapping' : `${e.mappings} mappings`} on this path when it came, in match order, each with the first condition it failed (as <code>hookrelay test --explain</code> says it).`}</p>
${e.mappings === 0 ? '' : html`<ol class="explanation" id="explanation">${explanationLines(e).map((line) => html`<li class="mono">${line}</li>`)}</ol>`}`;
}

/** One request: its fields, its kept body with the replay button (or why it cannot be replayed), and its replays. */
export function requestPage(r: RequestRecord, replays: RequestRecord[], notReplayable?: string): Html {
  return layout(`Request #${r.seq}`, 'requests', html`<p class="crumbs"><a href="/console/requests">Requests</a> /</p>
<h1>Request #${r.seq} ${statusBadge(r.status)}</h1>
<p>${markers(r)}</p>
<dl class="facts" id="request">
${field('Time', time(r.at))}
${field('Request id', r.requestId && html`<span class="mono">${r.requestId}</span>`)}
${field('Method and path', html`<span class="mono">${r.method} ${r.path}</span>`)}
${field('Route', html`<span class="mono">${r.route}</span>`)}
${field('Sender', r.sender && html`<span class="mono sender">${r.sender}</span>`)}
${field('Status', html`${statusBadge(r.status)}${r.error ? html` <code class="code">${r.error}</code>` : ''}`)}
${r.failures ? field('Cause', html`<ul class="failures" id="failures">${r.failures.map((f) => html`<li><code class="code">${failureText(f)}</code></li>`)}</ul>`) : ''}
${field('Duration', `${r.ms.toFixed(1)} ms`)}
${field('Actions', actions(r))}
${field('Content-Type', r.contentType)}
${field('User-Agent', r.userAgent)}
${field('Replay of', r.replayOf === undefined ? undefined : html`<a href="/console/requests/${r.replayOf}">#${r.replayOf}</a>`)}
</dl>
${r.explanation === undefined ? '' : explanation(r.explanation)}
<h2>Body</h2>
${r.body === undefined
    ? html`<p class="none">Not kept (hooks.keepBodies is 0, the request had none, or it was purged after its days).</p>`
    : html`<pre class="text" id="body">${r.body}</pre>
${r.headers === undefined ? '' : html`<h2>Headers</h2>
<p class="hint">Kept with the body, credentials and signatures removed; sent again by Replay.</p>
<pre class="text" id="headers">${Object.entries(r.headers).map(([k, v]) => `${k}: ${v}`).join('\n')}</pre>`}
${r.query === undefined ? '' : html`<p>Query: <code class="mono" id="query">${r.query}</code></p>`}
<p class="hint">Kept until ${time(r.bodyUntil)}. <a href="/console/fixture/${r.seq}" id="fixture" download="fixture-${r.seq}.json">Download as a fixture</a> for <code>hookrelay test --fixtures</code> (credentials removed, what it comes to now as its expectation).</p>
${notReplayable === undefined ? html`<form method="post" action="/console/replay/${r.seq}" class="replay">
<button type="submit">Replay</button>
<span class="hint">Sends this body again, as a new request, to the route it reached (${r.path}), through the current mappings; never answered as an idempotent repeat.</span>
</form>` : html`<p class="hint" id="not-replayable">Cannot be replayed: ${notReplayable}.</p>`}`}
${replays.length === 0 ? '' : html`<h2>Replays</h2>
<ul class="replays">${replays.map((p) => html`<li><a href="/console/requests/${p.seq}">#${p.seq}</a> ${time(p.at)} ${statusBadge(p.status)} ${actions(p)}</li>`)}</ul>`}`);
}
