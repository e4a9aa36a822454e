import { printable } from '../printable.js';
import { html, type Html } from './html.js';

/** The console's pages in the order of the navigation: what arrived first, then what it became. */
export const NAV = [
  { page: 'requests', href: '/console/requests', label: 'Requests' },
  { page: 'runs', href: '/console/', label: 'Runs' },
  { page: 'events', href: '/console/events', label: 'Events' },
  { page: 'mappings', href: '/console/mappings', label: 'Mappings' },
] as const;

export type NavPage = (typeof NAV)[number]['page'];

/** A whole page: the head (CSS and JS from the console's own static files only), the header and navigation, `body`. */
export function layout(title: string, active: NavPage | undefined, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/console/static/favicon.svg" type="image/svg+xml">
<title>${title} · hookrelay</title>
<link rel="stylesheet" href="/console/static/console.css">
<script src="/console/static/console.js" defer></script>
</head>
<body>
<header class="top">
<a class="brand" href="/console/">hookrelay</a>
${active === undefined ? '' : html`<nav>${NAV.map((n) => html`<a href="${n.href}"${n.page === active ? html` aria-current="page"` : ''}>${n.label}</a>`)}</nav>
<form method="post" action="/console/logout" class="logout"><button type="submit">Sign out</button></form>`}
</header>
<main>
${body}
</main>
</body>
</html>
`;
}

/** An ISO time, shown in the viewer's local time by console.js (the ISO text until then). */
export function time(iso: string | undefined): Html {
  return iso ? html`<time datetime="${iso}">${iso}</time>` : html`<span class="none">—</span>`;
}

/** A status badge; its class picks the colour. */
export function badge(status: string | undefined): Html {
  return status ? html`<span class="badge badge-${status}">${status.replace('_', ' ')}</span>` : html`<span class="none">—</span>`;
}

/** A `<dt>`/`<dd>` pair of a record page; an absent or empty value shows as a dash. */
export function field(label: string, value: Html | string | undefined): Html {
  return html`<dt>${label}</dt><dd>${value === undefined || value === '' ? html`<span class="none">—</span>` : value}</dd>`;
}

/** A list filter: a select that submits its form on change (console.js), "all" first. */
export function filterSelect(name: string, label: string, options: readonly { value: string; text: string }[], selected: string | undefined): Html {
  return html`<label for="${name}">${label}</label>
<select id="${name}" name="${name}" data-autosubmit>
<option value="">all</option>
${options.map((o) => html`<option value="${o.value}"${o.value === selected ? html` selected` : ''}>${o.text}</option>`)}
</select>`;
}

/** A list's paging links: back to the newest when paged on, on to older ones when the page was full. */
export function pager(newest: string | undefined, older: string | undefined): Html {
  return html`<nav class="pager">
${newest ? html`<a href="${newest}">← Newest</a>` : ''}
${older ? html`<a href="${older}">Older →</a>` : ''}
</nav>`;
}

/** Characters a list cell shows of one value; the record's own page shows it whole. */
export const CELL_MAX = 80;

/** A value as a list cell shows it: at most {@link CELL_MAX} characters, ending with `…` when cut; control characters escaped (printable.ts). */
export function cell(text: string): string {
  return printable(text, CELL_MAX);
}
