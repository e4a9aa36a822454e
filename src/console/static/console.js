// hookrelay console: local times, the status filter, live events (server-sent events) and the
// playground. Everything from the gateway is inserted with textContent, never as markup.
'use strict';

function localTimes(root) {
  for (const t of root.querySelectorAll('time[datetime]')) {
    const d = new Date(t.getAttribute('datetime'));
    if (!Number.isNaN(d.getTime())) {
      t.title = t.getAttribute('datetime');
      t.textContent = d.toLocaleString();
    }
  }
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function badge(status) {
  return el('span', status.replace('_', ' '), 'badge badge-' + status.replace(/[^a-z_]/g, ''));
}

function cell(child, className) {
  const td = el('td', undefined, className);
  td.append(child);
  return td;
}

function eventRow(e) {
  const time = el('time', e.at);
  time.setAttribute('datetime', e.at);
  let source = e.source;
  if (source.startsWith('run:')) {
    source = el('a', e.source);
    source.href = '/console/runs/' + encodeURIComponent(e.source.slice(4));
  }
  const tr = el('tr', undefined, 'fresh');
  tr.append(el('td', String(e.seq), 'mono'), cell(time), cell(badge(e.kind)), cell(source, 'mono'), cell(el('div', e.text, 'text')));
  localTimes(tr);
  return tr;
}

function liveEvents(table) {
  const body = table.querySelector('tbody');
  const live = document.getElementById('live');
  const empty = document.getElementById('no-events');
  const stream = new EventSource('/console/events/stream?after=' + encodeURIComponent(table.dataset.after));
  const state = (s, text) => { live.dataset.state = s; live.textContent = text; };
  stream.onopen = () => state('open', 'live');
  stream.onerror = () => state('closed', 'reconnecting…');
  stream.addEventListener('event', (m) => {
    body.insertBefore(eventRow(JSON.parse(m.data)), body.firstChild);
    if (empty) empty.hidden = true;
  });
}

function playground(form) {
  const out = document.getElementById('playground-output');
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    out.dataset.state = 'busy';
    out.textContent = 'Rendering…';
    try {
      const res = await fetch('/console/playground', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: data.get('name'), method: data.get('method'), payload: data.get('payload'), headers: data.get('headers'), query: data.get('query') }),
      });
      if (res.status === 401) { location.href = '/console/login'; return; }
      const answer = await res.json();
      if (!answer.ok) { out.dataset.state = 'problem'; out.textContent = answer.error.code + ': ' + answer.error.message; }
      else if (answer.problem !== undefined) { out.dataset.state = 'problem'; out.textContent = answer.problem; }
      else { out.dataset.state = 'ok'; out.textContent = JSON.stringify(answer.output, null, 2); }
    } catch (err) {
      out.dataset.state = 'problem';
      out.textContent = 'The console could not reach the gateway: ' + err.message;
    }
  });
}

document.addEventListener('DOMContentLoaded', () => {
  localTimes(document);
  for (const select of document.querySelectorAll('select[data-autosubmit]')) select.addEventListener('change', () => select.form.submit());
  const events = document.getElementById('events');
  if (events) liveEvents(events);
  const form = document.getElementById('playground');
  if (form) playground(form);
});
