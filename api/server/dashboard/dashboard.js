// gpusched's dashboard: reads the visibility API beside the page every
// 2 s and draws the GPU map, the quota bars, the pending list and the
// recent decisions. Plain JavaScript, no framework, nothing fetched from
// elsewhere: the page's own path tells where the API is
// (.../v1alpha1/dashboard/ for the cluster, .../v1alpha1/namespaces/NS/
// dashboard/ for one namespace), so every request is authorized for
// whoever opened it, and a panel they may not see says so (403).
//
// The GPU map is map.js's. An ES module, as map.js: both are files of the
// page's own origin, which is all the CSP allows. Tests read
// document.body.dataset: rendered
// (after each full render), firstRenderMs (performance.now() at the
// first: from navigation to the map drawn), fetchMs and renderMs (the
// last poll's reads and drawing), and each pending row's
// data-reason-code.
import { onMapMove, renderMap } from './map.js';

const POLL_MS = 2000;
const PENDING_LIMIT = 200;
const COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2',
  '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#2f6f9f', '#8cd17d',
  '#d37295'];

const scope = scopeOf(location.pathname);
const state = { colors: new Map(), renders: 0 };

// The API's path and the namespace from the page's own path.
function scopeOf(path) {
  const at = path.lastIndexOf('/dashboard');
  const base = at < 0 ? '' : path.slice(0, at);
  const m = base.match(/^(.*)\/namespaces\/([^/]+)$/);
  return m ? { root: m[1], ns: decodeURIComponent(m[2]), base }
    : { root: base, ns: '', base };
}

function esc(text) {
  return String(text ?? '').replace(/[&<>"']/g, (c) => ({
    '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
  })[c]);
}

// One GET of the API: {ok, status, data, message}. Never throws.
async function getJson(path) {
  try {
    const r = await fetch(path, {
      headers: { Accept: 'application/json' }, cache: 'no-cache',
      credentials: 'same-origin',
    });
    let data = null;
    try { data = await r.json(); } catch (e) { data = null; }
    const message = data && data.kind === 'Status' ? data.message : '';
    return { ok: r.ok, status: r.status, data, message };
  } catch (e) {
    return { ok: false, status: 0, data: null, message: String(e) };
  }
}

function nsPath(resource) {
  return `${scope.root}/namespaces/${encodeURIComponent(scope.ns)}/${resource}`;
}

async function loadPending(queues, cqs) {
  let lists;
  if (scope.ns && queues.ok) {
    lists = queues.data.items.map((q) => getJson(`${nsPath('localqueues')}/` +
      `${encodeURIComponent(q.metadata.name)}/pendingworkloads?limit=${PENDING_LIMIT}`)
      .then((r) => ({ r, cq: q.status.clusterQueue })));
  } else if (cqs.ok) {
    lists = cqs.data.items.map((q) => getJson(`${scope.root}/clusterqueues/` +
      `${encodeURIComponent(q.metadata.name)}/pendingworkloads?limit=${PENDING_LIMIT}`)
      .then((r) => ({ r, cq: q.metadata.name })));
  } else {
    return { ok: false, status: (scope.ns ? queues : cqs).status,
      message: (scope.ns ? queues : cqs).message, items: [] };
  }
  const answers = await Promise.all(lists);
  const bad = answers.find((a) => !a.r.ok);
  const items = [];
  for (const a of answers) {
    if (!a.r.ok) continue;
    for (const item of a.r.data.items) items.push({ ...item, clusterQueue: a.cq });
  }
  return { ok: !bad, status: bad ? bad.r.status : 200,
    message: bad ? bad.r.message : '', items };
}

async function loadAll() {
  const [nodes, cqs, cohorts, decisions, queues] = await Promise.all([
    getJson(`${scope.root}/gpunodes`),
    getJson(`${scope.root}/clusterqueues`),
    getJson(`${scope.root}/cohorts`),
    getJson(scope.ns ? nsPath('decisions') : `${scope.root}/decisions`),
    scope.ns ? getJson(nsPath('localqueues')) : Promise.resolve(null),
  ]);
  const pending = await loadPending(queues, cqs);
  return { nodes, cqs, cohorts, decisions, queues, pending };
}

// ---- notes and the banner ------------------------------------------------

const STANDBY = 'standby: this replica does not decide; the deciding ' +
  'replica serves the queues (the page retries every 2 s)';

function isStandby(r) {
  return r && r.status === 503 && /stands by/.test(r.message || '');
}

// A panel's note for an answer it could not use; hidden when it could.
function note(id, r, what) {
  const el = document.getElementById(id);
  if (!r || r.ok) { el.hidden = true; return; }
  let text;
  if (r.status === 403) {
    text = `You may not see ${what} (403): ${r.message}`;
  } else if (isStandby(r)) {
    text = `${what}: ${STANDBY}`;
  } else {
    text = `${what} could not be read (${r.status || 'no answer'})` +
      (r.message ? `: ${r.message}` : '');
  }
  el.textContent = text;
  el.hidden = false;
}

function renderBanner(standby) {
  const el = document.getElementById('banner');
  el.textContent = standby ? STANDBY : '';
  el.hidden = !standby;
}

// With two replicas kube-apiserver's Service may send one request of a
// poll to each: a panel the standby answered keeps what the deciding
// replica last said, and the banner tells.
function keepDecided(fresh, before) {
  const all = { ...fresh };
  for (const key of Object.keys(fresh)) {
    if (isStandby(fresh[key]) && before && before[key] && before[key].ok) {
      all[key] = before[key];
    }
  }
  return all;
}

// ---- colours ---------------------------------------------------------------

// One colour per ClusterQueue, by its place in the sorted names, so a
// queue keeps its colour from one poll to the next.
function assignColors(all) {
  const names = new Set();
  if (all.cqs.ok) for (const q of all.cqs.data.items) names.add(q.metadata.name);
  state.draNodes = false;
  if (all.nodes.ok) {
    for (const n of all.nodes.data.items) {
      for (const p of n.status.pods) if (p.clusterQueue) names.add(p.clusterQueue);
      if (n.status.gpuSource === 'DRA') state.draNodes = true;
    }
  }
  const sorted = [...names].sort();
  state.colors = new Map(sorted.map((name, i) => [name, i < COLORS.length
    ? COLORS[i] : `hsl(${(i * 137.5) % 360} 55% 55%)`]));
}

function renderLegend() {
  const keys = [...state.colors].map(([name, color]) =>
    `<span class="key"><span class="swatch" data-color="${esc(color)}"></span>` +
    `${esc(name)}</span>`);
  keys.push('<span class="key"><span class="swatch outside"></span>outside the queues</span>');
  keys.push('<span class="key"><span class="swatch free"></span>free</span>');
  keys.push('<span class="key"><span class="swatch unhealthy"></span>unhealthy GPU or node' +
    ' (incl. tainted DRA devices)</span>');
  if (state.draNodes) {
    keys.push('<span class="key"><span class="swatch dra"></span>GPUs from DRA (corner mark)</span>');
  }
  const legend = document.getElementById('map-legend');
  legend.innerHTML = keys.join('');
  // Colours through the CSSOM: the CSP allows no inline style attribute.
  for (const s of legend.querySelectorAll('[data-color]')) {
    s.style.background = s.dataset.color;
  }
}

// ---- quota -------------------------------------------------------------------

function amount(resource, v) {
  if (v == null) return '–';
  if (resource === 'cpu') return `${+(v / 1000).toFixed(1)} cores`;
  if (resource === 'memory') return `${+(v / 2 ** 30).toFixed(1)} GiB`;
  return String(v);
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

// Used within nominal, borrowed beyond it, lent out of the unused part,
// and a mark at nominal; the scale holds the most it may reach.
function quotaBar(r, color) {
  const top = Math.max(1, r.used, r.nominal + (r.borrowingLimit ?? 0), r.nominal);
  const pct = (v) => `${(100 * Math.max(0, v)) / top}%`;
  const bar = el('div', 'bar');
  const own = Math.min(r.used, r.nominal);
  const parts = [['used', 0, own], ['borrowed', r.nominal, r.used - r.nominal],
    ['lent', r.nominal - r.lent, r.lent]];
  for (const [cls, from, size] of parts) {
    if (size <= 0) continue;
    const s = el('span', cls);
    s.style.left = pct(from);
    s.style.width = pct(size);
    if (color && cls === 'used') s.style.background = color;
    bar.append(s);
  }
  const mark = el('span', 'nominal');
  mark.style.left = pct(r.nominal);
  bar.append(mark);
  return bar;
}

function quotaLine(flavor, r, color) {
  const line = el('div', 'line');
  line.append(el('div', 'line-label', `${r.name} (${flavor})`), quotaBar(r, color));
  let text = `${amount(r.name, r.used)} of ${amount(r.name, r.nominal)}`;
  if (r.borrowed) text += ` · borrowed ${amount(r.name, r.borrowed)}`;
  if (r.lent) text += ` · lent ${amount(r.name, r.lent)}`;
  if (r.borrowingLimit != null) text += ` · may borrow ${amount(r.name, r.borrowingLimit)}`;
  const label = el('div', 'line-text', text);
  label.title = `used ${text}`;
  line.append(label);
  return line;
}

// GPUs and MIG instances first, then the rest; a line with neither quota
// nor use says nothing.
function usageLines(usage) {
  const lines = [];
  for (const f of usage || []) {
    for (const r of f.resources) {
      if (r.nominal || r.used || r.borrowingLimit) lines.push([f.name, r]);
    }
  }
  const rank = (r) => (r.name.startsWith('nvidia.com/') ? 0 : 1);
  return lines.sort((a, b) => rank(a[1]) - rank(b[1]));
}

function queueBlock(name, meta, usage, color) {
  const block = el('div', 'queue');
  const head = el('div');
  head.append(el('span', 'queue-name', name), el('span', 'queue-meta', meta));
  block.append(head);
  for (const [flavor, r] of usageLines(usage)) block.append(quotaLine(flavor, r, color));
  return block;
}

function renderQuota(all) {
  note('quota-note', all.cqs, 'ClusterQueues (cluster-wide)');
  note('cohort-note', all.cohorts, 'cohorts (cluster-wide)');
  const quota = document.getElementById('quota');
  quota.replaceChildren();
  if (all.cqs.ok) {
    for (const q of all.cqs.data.items) {
      const s = q.status;
      quota.append(queueBlock(q.metadata.name, `${s.cohort ? `cohort ${s.cohort} · ` : ''}` +
        `${s.pendingWorkloads} pending, ${s.admittedWorkloads} admitted`,
      s.flavorsUsage, state.colors.get(q.metadata.name)));
    }
  } else if (all.queues && all.queues.ok) {
    for (const q of all.queues.data.items) {
      const s = q.status;
      quota.append(queueBlock(`${scope.ns}/${q.metadata.name}`, `LocalQueue of ClusterQueue ` +
        `${s.clusterQueue} · ${s.pendingWorkloads} pending, ${s.admittedWorkloads} admitted`, []));
    }
  }
  if (!quota.children.length && (all.cqs.ok || (all.queues && all.queues.ok))) {
    quota.append(el('p', 'empty', 'no queues: gpusched runs without --policy'));
  }
  const cohorts = document.getElementById('cohorts');
  cohorts.replaceChildren();
  if (all.cohorts.ok) {
    for (const c of all.cohorts.data.items) {
      cohorts.append(queueBlock(c.metadata.name,
        c.status && c.status.parent ? `parent ${c.status.parent}` : '', c.status && c.status.flavorsUsage));
    }
    if (!all.cohorts.data.items.length) {
      cohorts.append(el('p', 'empty', 'no cohorts: each ClusterQueue keeps its own quota'));
    }
  }
}

// ---- pending and decisions ----------------------------------------------------

// "in 12m", as kubectl prints ages.
function human(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 180) return `${m}m`;
  const h = Math.round(m / 60);
  return h < 48 ? `${h}h` : `${Math.round(h / 24)}d`;
}

function startText(w) {
  if (w.expectedStart) {
    const at = Date.parse(w.expectedStart);
    let text = at <= Date.now() ? 'now' : `in ${human(at - Date.now())}`;
    if (w.latestStart) text += `, at the latest in ${human(Date.parse(w.latestStart) - Date.now())}`;
    return text;
  }
  if (w.startUnknownReason) return `unknown: ${w.startUnknownReason}`;
  return 'unknown: no forecast yet';
}

function pendingRow(w) {
  const key = `${w.metadata.namespace}/${w.metadata.name}`;
  const position = scope.ns ? `${w.positionInLocalQueue} (CQ ${w.positionInClusterQueue})`
    : String(w.positionInClusterQueue);
  return `<tr data-workload="${esc(key)}" data-reason-code="${esc(w.reasonCode)}">` +
    `<td class="num">${esc(position)}</td><td class="key">${esc(key)}</td>` +
    `<td class="key">${esc(w.localQueueName)} → ${esc(w.clusterQueue)}</td>` +
    `<td class="num">${esc(w.priority)}</td>` +
    `<td><span class="code">${esc(w.reasonCode)}</span></td>` +
    `<td class="msg">${esc(w.message || '')}</td><td>${esc(startText(w))}</td></tr>`;
}

function renderPending(pending) {
  note('pending-note', pending, scope.ns ? `the pending workloads of ${scope.ns}`
    : 'the pending workloads (clusterqueues, cluster-wide)');
  const items = [...pending.items].sort((a, b) =>
    a.clusterQueue.localeCompare(b.clusterQueue) ||
    a.positionInClusterQueue - b.positionInClusterQueue);
  document.getElementById('pending-summary').textContent =
    `${items.length} waiting${items.length >= PENDING_LIMIT ? ' (first ' + PENDING_LIMIT + ' of each queue)' : ''}`;
  document.querySelector('#pending tbody').innerHTML = items.length
    ? items.map(pendingRow).join('')
    : '<tr class="empty"><td colspan="7">nothing waits</td></tr>';
}

function decisionRow(d) {
  const key = `${d.metadata.namespace}/${d.metadata.name}`;
  return `<tr data-decision="${esc(d.decision)}" data-workload="${esc(key)}">` +
    `<td class="num">${esc(new Date(d.time).toLocaleTimeString())}</td>` +
    `<td><span class="code ${esc(d.decision)}">${esc(d.decision)}</span></td>` +
    `<td class="key">${esc(key)}</td><td>${esc(d.clusterQueue)}</td>` +
    `<td><span class="code">${esc(d.reasonCode)}</span></td>` +
    `<td class="msg">${esc(d.message)}</td></tr>`;
}

function renderDecisions(result) {
  note('decisions-note', result, scope.ns ? `the decisions of ${scope.ns}`
    : 'the decisions (cluster-wide)');
  const items = result.ok ? result.data.items : [];
  document.querySelector('#decisions tbody').innerHTML = items.length
    ? items.map(decisionRow).join('')
    : '<tr class="empty"><td colspan="6">no admission, preemption or eviction yet</td></tr>';
}

// ---- the loop ------------------------------------------------------------------

function render(all, standby) {
  const began = performance.now();
  renderBanner(standby);
  assignColors(all);
  renderLegend();
  note('map-note', all.nodes, 'the GPU map (gpunodes, cluster-wide)');
  renderMap(all.nodes, state.colors);
  renderQuota(all);
  renderPending(all.pending);
  renderDecisions(all.decisions);
  state.renders++;
  const body = document.body.dataset;
  body.renderMs = (performance.now() - began).toFixed(1);
  if (!body.firstRenderMs) body.firstRenderMs = performance.now().toFixed(1);
  body.renderCount = String(state.renders);
  body.rendered = 'true';
  const updated = document.getElementById('updated');
  updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
  updated.classList.remove('stale');
}

async function poll() {
  try {
    const began = performance.now();
    const fresh = await loadAll();
    document.body.dataset.fetchMs = (performance.now() - began).toFixed(1);
    state.last = keepDecided(fresh, state.last);
    render(state.last, Object.values(fresh).some(isStandby));
  } catch (e) {
    // A bug of the page, not an answer of the API: say so where it shows.
    const updated = document.getElementById('updated');
    updated.textContent = `not updated: ${e}`;
    updated.classList.add('stale');
    throw e;
  } finally {
    setTimeout(schedule, POLL_MS);
  }
}

// A tab in the background reads nothing: its next poll waits until it is
// shown again.
function schedule() {
  if (document.hidden) {
    document.addEventListener('visibilitychange', schedule, { once: true });
    return;
  }
  poll();
}

function start() {
  document.getElementById('scope').textContent =
    scope.ns ? `namespace ${scope.ns}` : 'cluster';
  document.title = scope.ns ? `gpusched · ${scope.ns}` : 'gpusched';
  document.getElementById('map').addEventListener('mousemove', onMapMove);
  document.getElementById('map').addEventListener('mouseleave', () => {
    document.getElementById('map-tip').hidden = true;
  });
  let resized = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resized);
    resized = setTimeout(() => {
      if (state.last) renderMap(state.last.nodes, state.colors);
    }, 150);
  });
  poll();
}

start();
