// The status page (O4): reads /status/data every 2 s while open and draws it with DOM calls only
// (no HTML strings: every value is text). A token, when the gateway asks for one, stays in this
// tab's sessionStorage and goes out as a Bearer header to this origin alone.
'use strict';

// `?refresh=<ms>` (250 at least) for a closer look, as the browser test does.
const REFRESH_MS = Math.max(250, Number(new URLSearchParams(location.search).get('refresh')) || 2000);
const $ = (selector) => document.querySelector(selector);
let latest;
let timer;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (key === 'class') node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children)
    node.append(child instanceof Node ? child : document.createTextNode(String(child ?? '')));
  return node;
}

function duration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.floor(ms / 1000);
  if (s < 120) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m} min`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

function time(at) {
  return new Date(at).toLocaleTimeString([], { hour12: false });
}

/** A small SVG of a series: calls per second (blue), p50 (green) and p95 (amber) on a log scale. */
function sparkline(window) {
  const width = 180;
  const height = 36;
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('class', 'spark');
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  svg.setAttribute('role', 'img');
  const peak = Math.max(1, ...window.map((b) => b.rate));
  const slowest = Math.log10(Math.max(10, ...window.map((b) => b.p95 ?? 0)) + 1);
  const line = (cls, value) => {
    const points = [];
    window.forEach((b, i) => {
      const v = value(b);
      if (v === undefined) return;
      points.push(
        `${((i / (window.length - 1)) * width).toFixed(1)},${(height - 2 - v * (height - 4)).toFixed(1)}`,
      );
    });
    if (points.length === 0) return;
    const node = document.createElementNS(ns, 'polyline');
    node.setAttribute('class', cls);
    node.setAttribute('points', points.join(' '));
    svg.append(node);
  };
  line('rate', (b) => b.rate / peak);
  line('p50', (b) => (b.p50 === undefined ? undefined : Math.log10(b.p50 + 1) / slowest));
  line('p95', (b) => (b.p95 === undefined ? undefined : Math.log10(b.p95 + 1) / slowest));
  const last = window.filter((b) => b.rate > 0).at(-1);
  const title = document.createElementNS(ns, 'title');
  title.textContent = last
    ? `last 10 s with calls: ${last.rate.toFixed(1)} calls/s, p50 ≤ ${last.p50 ?? '?'} ms, p95 ≤ ${last.p95 ?? '?'} ms`
    : 'no calls in 15 minutes';
  svg.append(title);
  return svg;
}

/**
 * One line above the table: how many servers are up, and since when each other one is not; and
 * the shared store, when there is one, and since when it is unreachable.
 */
function summary(data) {
  const down = data.servers.filter((s) => s.state !== 'ready');
  const head = `${data.servers.length - down.length} of ${data.servers.length} servers ready`;
  const store = data.store;
  const stored =
    store === undefined
      ? ''
      : store.ok
        ? `; store ${store.where} connected`
        : `; store ${store.where} unreachable${store.since !== undefined ? ` for ${duration(data.now - store.since)}` : ''} (${store.error ?? 'no answer'}): rate-limited calls are refused`;
  if (down.length === 0) return `${head}${stored}`;
  return `${head}; ${down.map((s) => `${s.name} ${s.state} for ${duration(data.now - s.since)}`).join(', ')}${stored}`;
}

function renderServers(data) {
  $('#summary').textContent = summary(data);
  const healthy = data.servers.every((s) => s.state === 'ready') && data.store?.ok !== false;
  $('#summary').className = healthy ? 'summary ok' : 'summary failed';
  const body = $('#servers tbody');
  body.replaceChildren(
    ...data.servers.map((s) =>
      el(
        'tr',
        { 'data-server': s.name },
        el('td', {}, s.name),
        el('td', { class: `state state-${s.state}` }, s.state),
        el('td', {}, [s.era, s.transport].filter(Boolean).join(' / ')),
        el('td', {}, s.tools),
        el('td', {}, s.in_flight),
        el('td', {}, s.queued),
        el('td', {}, s.restarts),
        el('td', {}, duration(data.now - s.since)),
        el('td', {}, sparkline(s.window)),
        el(
          'td',
          { class: s.state === 'ready' ? 'error past' : 'error' },
          s.state !== 'ready'
            ? (s.last_error ?? '')
            : s.last_failure
              ? `last failure ${time(s.last_failure.at)}: ${s.last_failure.error}`
              : '',
        ),
      ),
    ),
  );
}

function renderCalls(data) {
  const failuresOnly = $('#failures-only').checked;
  const calls = failuresOnly ? data.calls.filter((c) => c.outcome !== 'ok') : data.calls;
  $('#calls tbody').replaceChildren(
    ...calls
      .slice(0, 100)
      .map((c) =>
        el(
          'tr',
          { class: c.outcome === 'ok' ? 'ok' : 'failed' },
          el('td', {}, time(c.at)),
          el('td', {}, c.principal ?? ''),
          el('td', {}, c.tool),
          el('td', {}, c.server),
          el('td', { class: 'outcome' }, c.outcome),
          el('td', {}, c.ms === undefined || c.ms === null ? '' : Math.round(c.ms)),
        ),
      ),
  );
}

function renderTools(data) {
  const words = $('#filter').value.toLowerCase().split(/\s+/).filter(Boolean);
  const tools = data.tools.filter((t) =>
    words.every((w) => t.name.toLowerCase().includes(w) || t.server.toLowerCase().includes(w)),
  );
  $('#tool-count').textContent = `(${tools.length} of ${data.tools.length})`;
  $('#tools tbody').replaceChildren(
    ...tools
      .slice(0, 500)
      .map((t) =>
        el(
          'tr',
          {},
          el('td', {}, t.name),
          el('td', {}, t.server),
          el(
            'td',
            {},
            t.read_only ? el('span', { class: 'tag' }, 'read-only') : '',
            t.destructive ? el('span', { class: 'tag destructive' }, 'destructive') : '',
          ),
          el('td', {}, t.listed ? 'listed' : `search (${data.expose})`),
        ),
      ),
  );
}

// Issue 47: the skills (SEP-2640) each server listed last; the section shows once there are any.
function renderSkills(data) {
  const skills = data.skills ?? [];
  $('#skills-section').hidden = skills.length === 0;
  $('#skill-count').textContent = `(${skills.length})`;
  $('#skills tbody').replaceChildren(
    ...skills.map((s) =>
      el(
        'tr',
        {},
        el('td', { title: s.uri }, s.name),
        el('td', {}, s.server),
        el('td', {}, s.files),
        el('td', {}, s.description),
      ),
    ),
  );
}

function render(data) {
  latest = data;
  $('#meta').textContent = [
    `version ${data.version}`,
    data.replica_id ? `replica ${data.replica_id}` : '',
    `up ${duration(data.now - data.started)}`,
    `catalog ${data.catalog_hash}`,
    `expose ${data.expose}`,
    `updated ${time(data.now)}`,
  ]
    .filter(Boolean)
    .join(' · ');
  renderServers(data);
  renderCalls(data);
  renderTools(data);
  renderSkills(data);
  $('#problems').replaceChildren(...data.problems.map((p) => el('li', {}, p)));
  $('#login').hidden = true;
  $('#main').hidden = false;
}

async function refresh() {
  clearTimeout(timer);
  const token = sessionStorage.getItem('mcp-normalizer-token');
  try {
    const response = await fetch('/status/data', {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      cache: 'no-store',
    });
    if (response.status === 401 || response.status === 403) {
      $('#main').hidden = true;
      $('#login').hidden = false;
      // O4: behind http.auth the gateway signs a person in at its identity provider.
      const refusal = await response.json().catch(() => ({}));
      $('#sign-in').hidden = typeof refusal.sign_in !== 'string';
      if (typeof refusal.sign_in === 'string') $('#sign-in-link').setAttribute('href', refusal.sign_in);
      $('#login-reason').textContent =
        response.status === 401
          ? 'This page needs a token.'
          : 'This token may not read the status page (http.auth.admins).';
      $('#meta').textContent = `${response.status}`;
      return;
    }
    render(await response.json());
  } catch (error) {
    $('#meta').textContent = `the gateway did not answer (${error.message}); retrying`;
  }
  if (!document.hidden) timer = setTimeout(refresh, REFRESH_MS);
}

document.addEventListener('DOMContentLoaded', () => {
  $('#filter').addEventListener('input', () => latest && renderTools(latest));
  $('#failures-only').addEventListener('change', () => latest && renderCalls(latest));
  $('#login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    sessionStorage.setItem('mcp-normalizer-token', $('#token').value);
    $('#token').value = '';
    void refresh();
  });
  // Nothing is asked while the tab is hidden.
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) void refresh();
  });
  void refresh();
});
