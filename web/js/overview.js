// overview.js: the Overview page: GPUs total / allocated / idle per node
// pool, workload counts, GPU allocation over time (from the projects'
// metrics time series, summed), and recent preemptions (from the events of
// the most recently changed workloads).

import {get, withQuery, checkAbort} from './api.js';
import {h, fill, gpu, meter, notice, errorText, time, ago, badge} from './dom.js';
import {lineChart, destroyChart, COLORS} from './charts.js';

const PREEMPTION_REASONS = new Set(['Reclaimed', 'Preempted', 'Evicted']);
const SERIES_EVERY_MS = 30000;
const RANGES = {
  min5: {ms: 300e3, samples: 60, label: 'Last 5 minutes'},
  hour: {ms: 3600e3, samples: 120, label: 'Last hour'},
  day: {ms: 86400e3, samples: 144, label: 'Last day'},
};

let el = {};
let range = 'hour';
let seriesAt = 0;
const eventCache = new Map(); // workload id -> {key, events}

function card(label, value, sub) {
  return h('div', {class: 'card'}, h('div', {class: 'card-label'}, label),
    h('div', {class: 'card-value'}, value), sub ? h('div', {class: 'card-sub'}, sub) : null);
}

export default {
  id: 'overview',
  title: 'Overview',

  mount(root, ctx) {
    const rangeSel = h('select', {id: 'ov-range', 'aria-label': 'Time range'},
      Object.entries(RANGES).map(([k, r]) => h('option', {value: k, selected: k === range}, r.label)));
    rangeSel.addEventListener('change', () => { range = rangeSel.value; seriesAt = 0; ctx.kick(); });
    el = {
      cards: h('div', {class: 'cards', 'aria-live': 'polite'}),
      pools: h('div'),
      chartNote: h('div'),
      chartBox: null,
      canvas: h('canvas', {id: 'ov-alloc', role: 'img', 'aria-label': 'GPU allocation over time'}),
      preemptions: h('div'),
    };
    fill(root,
      h('h1', {}, 'Overview'),
      el.cards,
      h('div', {class: 'grid-2'},
        h('section', {class: 'panel', 'aria-labelledby': 'ov-pools-h'},
          h('h2', {id: 'ov-pools-h'}, 'GPUs per node pool'), el.pools),
        h('section', {class: 'panel', 'aria-labelledby': 'ov-pre-h'},
          h('h2', {id: 'ov-pre-h'}, 'Recent preemptions'), el.preemptions)),
      h('section', {class: 'panel', 'aria-labelledby': 'ov-alloc-h'},
        h('div', {class: 'panel-head'}, h('h2', {id: 'ov-alloc-h'}, 'GPU allocation over time'),
          h('label', {for: 'ov-range', class: 'inline'}, 'Range '), rangeSel),
        el.chartNote, el.chartBox = h('div', {class: 'chart-box'}, el.canvas)));
    seriesAt = 0;
  },

  unmount() {
    if (el.canvas) destroyChart(el.canvas);
    el = {};
  },

  async refresh(ctx, signal) {
    const [pools, nodes, pending, running] = await Promise.all([
      get('/api/v1/node-pools', {signal}),
      get('/api/v1/nodes', {signal}),
      get(withQuery('/api/v1/workloads/count', {filterBy: 'phase==Pending'}), {signal}),
      get(withQuery('/api/v1/workloads/count', {filterBy: 'phase==Running'}), {signal}),
    ]);
    renderCards(pools.nodepools || [], pending.count, running.count);
    renderPools(pools.nodepools || [], nodes.nodes || []);
    await Promise.all([
      renderPreemptions(signal).catch((e) => {
        if (e.name !== 'AbortError') fill(el.preemptions, notice('error', errorText(e)));
      }),
      Date.now() - seriesAt > SERIES_EVERY_MS ? renderSeries(pools.nodepools || [], signal)
        .catch((e) => {
          if (e.name !== 'AbortError') noChart(notice('error', errorText(e)));
        }) : null,
    ]);
  },
};

function renderCards(pools, pending, running) {
  let total = 0;
  let alloc = 0;
  for (const p of pools) {
    total += Number(p.gpus || 0);
    alloc += Number(p.allocatedGpus || 0);
  }
  fill(el.cards,
    card('GPUs', gpu(total), `${pools.length} node pool${pools.length === 1 ? '' : 's'}`),
    card('Allocated GPUs', gpu(alloc), total ? `${Math.round((100 * alloc) / total)}% of all` : ''),
    card('Idle GPUs', gpu(Math.max(0, total - alloc)), 'free to allocate'),
    card('Pending workloads', String(pending ?? '-'), 'waiting for GPUs'),
    card('Running workloads', String(running ?? '-'), ''));
}

function renderPools(pools, nodes) {
  if (!pools.length) {
    fill(el.pools, notice('empty', 'No node pools.'));
    return;
  }
  const rows = pools.map((p) => {
    const mine = nodes.filter((n) => n.nodePool === p.name);
    const ready = mine.filter((n) => n.status === 'Ready').length;
    const total = Number(p.gpus || 0);
    const alloc = Number(p.allocatedGpus || 0);
    return h('tr', {dataset: {key: p.name}},
      h('th', {scope: 'row'}, p.name),
      h('td', {class: 'num'}, `${ready}/${mine.length}`),
      h('td', {class: 'num'}, gpu(total)),
      h('td', {class: 'num'}, gpu(alloc)),
      h('td', {class: 'num'}, gpu(Math.max(0, total - alloc))),
      h('td', {}, meter(alloc, total, `${gpu(alloc)} of ${gpu(total)} allocated`)));
  });
  fill(el.pools, h('table', {class: 'data', 'aria-label': 'GPUs per node pool'},
    h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Node pool'),
      h('th', {scope: 'col', class: 'num'}, 'Ready nodes'), h('th', {scope: 'col', class: 'num'}, 'GPUs'),
      h('th', {scope: 'col', class: 'num'}, 'Allocated'), h('th', {scope: 'col', class: 'num'}, 'Idle'),
      h('th', {scope: 'col'}, 'Usage'))),
    h('tbody', {}, rows)));
}

// The events of the 20 most recently changed workloads, cached until the
// workload changes again; preemption events of the last day, newest first.
async function renderPreemptions(signal) {
  const list = await get(withQuery('/api/v1/workloads',
    {sortBy: 'phaseUpdatedAt', sortOrder: 'desc', limit: 20}), {signal});
  const found = [];
  await Promise.all((list.workloads || []).map(async (w) => {
    const key = `${w.phaseUpdatedAt}|${w.updatedAt}`;
    let c = eventCache.get(w.id);
    if (!c || c.key !== key) {
      const ev = await get(withQuery(`/api/v1/workloads/${encodeURIComponent(w.id)}/events`,
        {sortOrder: 'desc', limit: 20}), {signal});
      c = {key, events: ev.events || []};
      eventCache.set(w.id, c);
    }
    for (const e of c.events) if (PREEMPTION_REASONS.has(e.reason)) found.push({w, e});
  }));
  const dayAgo = Date.now() - 86400e3;
  const recent = found.filter((x) => new Date(x.e.createdAt).getTime() >= dayAgo)
    .sort((a, b) => (a.e.createdAt < b.e.createdAt ? 1 : -1)).slice(0, 8);
  if (!recent.length) {
    fill(el.preemptions, notice('empty', 'No preemptions in the last day.'));
    return;
  }
  fill(el.preemptions, h('ul', {class: 'events'}, recent.map(({w, e}) => h('li', {},
    h('div', {class: 'event-head'}, badge(e.reason, 'warn'), ' ',
      h('a', {href: `#/workloads?id=${encodeURIComponent(w.id)}`}, w.name),
      h('span', {class: 'muted'}, ` in ${w.projectName} · `),
      h('time', {datetime: e.createdAt, title: time(e.createdAt)}, ago(e.createdAt))),
    h('div', {class: 'event-msg'}, e.message)))));
}

// Sums GPU_ALLOCATION of every visible project per timestamp; draws the
// total, the largest projects, and the current capacity.
async function renderSeries(pools, signal) {
  const r = RANGES[range];
  const end = new Date();
  const start = new Date(end.getTime() - r.ms);
  const projects = (await get('/api/v1/org-unit/projects', {signal})).projects || [];
  checkAbort(signal);
  if (!projects.length) {
    noChart(notice('empty', 'No projects yet: nothing is allocated.'));
    return;
  }
  const results = await Promise.all(projects.slice(0, 50).map((p) =>
    get(withQuery(`/api/v1/org-unit/projects/${encodeURIComponent(p.id)}/metrics`, {
      metricType: 'GPU_ALLOCATION', start: start.toISOString(), end: end.toISOString(),
      numberOfSamples: r.samples}), {signal})
      .then((m) => ({p, m}), (e) => ({p, e}))));
  checkAbort(signal);
  const failed = results.find((x) => x.e && x.e.name !== 'AbortError');
  if (failed && results.every((x) => x.e)) {
    const e = failed.e;
    noChart(notice(e.status === 404 ? 'info' : 'error',
      e.status === 404
        ? `No allocation history to show: this server has no metrics time series ` +
          `(GET /api/v1/org-unit/projects/{id}/metrics answered 404).`
        : errorText(e)));
    return;
  }
  const stamps = new Set();
  const perProject = [];
  for (const {p, m} of results) {
    if (!m) continue;
    const meas = (m.measurements || []).find((x) => x.type === 'GPU_ALLOCATION');
    const byTs = new Map();
    for (const v of (meas && meas.values) || []) {
      byTs.set(v.timestamp, Number(v.value));
      stamps.add(v.timestamp);
    }
    perProject.push({p, byTs});
  }
  const ts = [...stamps].sort();
  if (!ts.length) {
    noChart(notice('empty', 'No samples recorded in this range yet.'));
    return;
  }
  const labels = ts.map((t) => {
    const d = new Date(t);
    const hm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
    return range === 'day' ? hm : `${hm}:${String(d.getSeconds()).padStart(2, '0')}`;
  });
  const total = ts.map((t) => perProject.reduce((s, x) => s + (x.byTs.get(t) || 0), 0));
  const capacity = pools.reduce((s, p) => s + Number(p.gpus || 0), 0);
  const top = perProject.map((x) => ({...x, peak: Math.max(0, ...x.byTs.values())}))
    .filter((x) => x.peak > 0).sort((a, b) => b.peak - a.peak).slice(0, 6);
  const series = [
    {label: 'All projects', data: total, color: COLORS.total, fill: true},
    ...top.map((x, i) => ({label: x.p.name, data: ts.map((t) => x.byTs.get(t) ?? null),
      color: COLORS.series[i % COLORS.series.length]})),
    {label: 'GPUs in the cluster (now)', data: ts.map(() => capacity), color: COLORS.quota, dashed: true},
  ];
  fill(el.chartNote, failed ? notice('error', `Some projects' series are missing: ${errorText(failed.e)}`) : null);
  el.chartBox.hidden = false;
  lineChart(el.canvas, labels, series, 'GPUs');
  seriesAt = Date.now();
}

// Says why there is no chart, instead of drawing one.
function noChart(why) {
  destroyChart(el.canvas);
  el.chartBox.hidden = true;
  fill(el.chartNote, why);
  seriesAt = Date.now();
}
