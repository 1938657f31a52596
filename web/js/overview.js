// overview.js: the Overview page, in the spirit of Run:ai's: ready nodes
// and GPUs per node pool with their allocation ratio, GPUs allocated and
// idle (where agents measure them), workloads by type and phase, how long
// the pending ones have waited, allocation ratio per department, the
// evictions of the chosen range (counted on the server, linked to the full
// list), and the GPU allocation over that range (max and mean per slot,
// on an axis spanning the whole range). Node pool and department filters
// narrow every panel; the URL keeps them (#/overview?pool=&dept=&range=).
// A researcher sees the figures of their own projects, and says so.

import {get, withQuery, checkAbort} from './api.js';
import {h, fill, fillIn, gpu, pct, meter, notice, errorText, time, ago, badge, duration, num} from './dom.js';
import {evictionsWhere, narrowedBy} from './evictions.js';
import {lineChart, barChart, destroyChart, COLORS} from './charts.js';
import {reasonText} from './reasons.js';

const SERIES_EVERY_MS = 30000;
export const RANGES = {
  min5: {ms: 300e3, slots: 60, label: 'Last 5 minutes'},
  hour: {ms: 3600e3, slots: 120, label: 'Last hour'},
  day: {ms: 86400e3, slots: 144, label: 'Last day'},
  week: {ms: 7 * 86400e3, slots: 168, label: 'Last 7 days'},
};
const PHASE_ORDER = ['Pending', 'Creating', 'Initializing', 'Running', 'Degraded', 'Resuming',
  'Stopping', 'Stopped', 'Deleting', 'Completed', 'Failed'];
const TYPE_ORDER = ['Training', 'Workspace', 'Distributed', 'Inference'];

let el = {};
const state = {pool: '', dept: '', range: 'hour', show: ''};
const SHOW_MAX = 8; // projects drawn at once (one colour each)
let seriesAt = 0;
let seriesKey = '';

function card(id, label, value, sub) {
  return h('div', {class: 'card', id, dataset: {key: id}}, h('div', {class: 'card-label'}, label),
    h('div', {class: 'card-value'}, value), sub ? h('div', {class: 'card-sub'}, sub) : null);
}

function panel(id, title, body, extra) {
  return h('section', {class: 'panel', 'aria-labelledby': `${id}-h`, id},
    h('div', {class: 'panel-head'}, h('h2', {id: `${id}-h`}, title), extra || null), body);
}

function applyParams(params) {
  const r = params.get('range');
  state.range = RANGES[r] ? r : 'hour';
  state.pool = params.get('pool') || '';
  state.dept = params.get('dept') || '';
  state.show = params.get('show') || '';
  seriesAt = 0;
  if (el.range) {
    el.range.value = state.range;
    el.pool.value = state.pool;
    el.dept.value = state.dept;
  }
}

// Values of a TelemetryResponse as [{value: number, groups: {Key: {value, name}}}].
function telemetry(t) {
  return ((t && t.values) || []).map((v) => {
    const g = {};
    for (const x of v.groups || []) g[x.key] = {value: x.value, name: x.name || x.value};
    return {value: Number(v.value), groups: g};
  });
}

export default {
  id: 'overview',
  title: 'Overview',
  applyParams,

  mount(root, ctx, params) {
    applyParams(params);
    const set = (k) => (e) => { ctx.setParams({[k]: e.target.value}); };
    el.range = h('select', {id: 'ov-range', onchange: set('range')},
      Object.entries(RANGES).map(([k, r]) => h('option', {value: k, selected: k === state.range}, r.label)));
    el.pool = h('select', {id: 'ov-pool', onchange: set('pool')}, h('option', {value: ''}, 'All'));
    el.dept = h('select', {id: 'ov-dept', onchange: set('dept')}, h('option', {value: ''}, 'All'));
    el.scope = h('p', {class: 'scope', id: 'ov-scope', 'aria-live': 'polite'});
    el.cards = h('div', {class: 'cards', id: 'ov-cards'});
    el.oversub = h('div', {id: 'ov-oversub', 'aria-live': 'polite'});
    el.pools = h('div', {class: 'table-wrap'});
    el.depts = h('div', {class: 'table-wrap'});
    el.types = h('div', {class: 'table-wrap'});
    el.pendingNote = h('div');
    el.pendingCanvas = h('canvas', {id: 'ov-pending', role: 'img',
      'aria-label': 'Pending workloads by time waited', dataset: {keep: ''}});
    el.preemptions = h('div', {id: 'ov-evictions'});
    el.chartNote = h('div', {id: 'ov-chart-note'});
    el.chartPick = h('div', {id: 'ov-chart-pick'});
    el.ctx = ctx;
    el.canvas = h('canvas', {id: 'ov-alloc', role: 'img', 'aria-label': 'GPU allocation over time',
      dataset: {keep: ''}});
    el.chartBox = h('div', {class: 'chart-box'}, el.canvas);
    el.deptPanel = panel('ov-depts', 'Allocation per department', el.depts);
    fill(root,
      h('div', {class: 'page-head'}, h('h1', {}, 'Overview'),
        h('form', {class: 'filters', role: 'search', 'aria-label': 'Filter the overview',
          onsubmit: (e) => e.preventDefault()},
        h('span', {class: 'filter'}, h('label', {for: 'ov-pool'}, 'Node pool'), el.pool),
        h('span', {class: 'filter', id: 'ov-dept-filter'}, h('label', {for: 'ov-dept'}, 'Department'), el.dept),
        h('span', {class: 'filter'}, h('label', {for: 'ov-range'}, 'Range'), el.range))),
      el.scope,
      el.oversub,
      el.cards,
      h('div', {class: 'grid-2'},
        panel('ov-pools', 'Node pools', el.pools),
        panel('ov-types', 'Workloads by type and phase', el.types)),
      h('div', {class: 'grid-2'},
        panel('ov-pre', 'Evictions', el.preemptions),
        panel('ov-wait', 'Pending workloads by time waited', h('div', {},
          el.pendingNote, el.pendingBox = h('div', {class: 'chart-box small'}, el.pendingCanvas)))),
      el.deptPanel,
      panel('ov-alloc-panel', 'GPU allocation over time', h('div', {}, el.chartPick, el.chartNote, el.chartBox)));
    seriesAt = 0;
  },

  unmount() {
    if (el.canvas) destroyChart(el.canvas);
    if (el.pendingCanvas) destroyChart(el.pendingCanvas);
    el = {};
  },

  async refresh(ctx, signal) {
    const wq = {nodepoolName: state.pool, departmentId: state.dept};
    const opt = (p) => get(p, {signal}).catch((e) => {
      if (e.name === 'AbortError') throw e;
      return {error: e};
    });
    const [pools, nodes, depts, projects, byType, pending, idle, measured] = await Promise.all([
      get('/api/v1/node-pools', {signal}),
      get('/api/v1/nodes', {signal}),
      opt('/api/v1/org-unit/departments'),
      opt('/api/v1/org-unit/projects'),
      opt(withQuery('/api/v1/workloads/telemetry', {telemetryType: 'WORKLOADS_COUNT', groupBy: 'Type,Phase', ...wq})),
      opt(withQuery('/api/v1/workloads/telemetry', {telemetryType: 'PENDING_TIME_DISTRIBUTION', ...wq})),
      opt(withQuery('/api/v1/nodes/telemetry', {telemetryType: 'IDLE_ALLOCATED_GPUS', groupBy: 'Nodepool', nodepoolName: state.pool})),
      opt(withQuery('/api/v1/nodes/telemetry', {telemetryType: 'MEASURED_ALLOCATED_GPUS', groupBy: 'Nodepool', nodepoolName: state.pool})),
    ]);
    checkAbort(signal);
    const poolList = (pools.nodepools || []).slice().sort((a, b) => a.name.localeCompare(b.name));
    const deptList = (depts.departments || []).slice().sort((a, b) => a.name.localeCompare(b.name));
    const projList = projects.projects || [];
    options(el.pool, poolList.map((p) => ({value: p.name, label: p.name})), state.pool);
    options(el.dept, deptList.map((d) => ({value: d.id, label: d.name})), state.dept);
    el.dept.closest('.filter').hidden = !deptList.length;
    const nodeList = (nodes.nodes || []).filter((n) => !state.pool || n.nodePool === state.pool);
    renderScope(ctx, projList, deptList);
    renderOversub(poolList, nodes.nodes || [], deptList, projList);
    const counts = telemetry(byType.error ? null : byType);
    renderCards(ctx, nodeList, counts, idle, measured, deptList, projList);
    renderPools(poolList.filter((p) => !state.pool || p.name === state.pool), nodes.nodes || [], idle, measured);
    renderTypes(byType.error, counts);
    renderPending(pending);
    renderDepts(deptList);
    await Promise.all([
      renderEvictions(signal, deptList).catch((e) => {
        if (e.name !== 'AbortError') fillIn(el.preemptions, notice('error', errorText(e)));
      }),
      Date.now() - seriesAt > SERIES_EVERY_MS || seriesKey !== key()
        ? renderSeries(ctx, poolList, nodeList, projList, signal).catch((e) => {
          if (e.name !== 'AbortError') noChart(notice('error', errorText(e)));
        }) : null,
    ]);
  },
};

const key = () => `${state.pool}|${state.dept}|${state.range}|${state.show}`;

function options(sel, list, value) {
  const want = list.map((o) => `${o.value}=${o.label}`).join('\n');
  if (sel.dataset.list === want && sel.value === value) return;
  sel.dataset.list = want;
  fill(sel, h('option', {value: ''}, 'All'),
    list.map((o) => h('option', {value: o.value, selected: o.value === value}, o.label)));
  sel.value = value;
}

function renderScope(ctx, projects, depts) {
  const bits = [];
  if (!ctx.can.wlReadAll) {
    const names = projects.map((p) => p.name).sort();
    bits.push(h('strong', {}, 'Your projects: '), names.length ? names.join(', ') : 'none',
      '. Workload figures count only these; node pools and GPUs are the whole cluster\'s.');
  }
  if (state.pool) bits.push(bits.length ? ' ' : '', `Node pool ${state.pool} only.`);
  if (state.dept) {
    const d = depts.find((x) => x.id === state.dept);
    bits.push(bits.length ? ' ' : '', `Department ${d ? d.name : state.dept} only.`);
  }
  fillIn(el.scope, ...bits);
  el.scope.hidden = !bits.length;
}

// Quotas beyond the GPUs there: per pool, the departments' quotas (or,
// with no departments, the projects') against the pool's GPUs.
function renderOversub(pools, nodes, depts, projects) {
  const queues = depts.length ? depts : projects;
  const what = depts.length ? 'departments' : 'projects';
  const out = [];
  for (const p of pools.filter((x) => !state.pool || x.name === state.pool)) {
    const gpus = sumOf(nodes.filter((n) => n.nodePool === p.name), (n) => n.gpuInfo && n.gpuInfo.gpuCount);
    const mine = queues.map((q) => ({q, quota: poolNumbers(q, p.name).quota}));
    const one = state.dept ? mine.find((x) => x.q.id === state.dept) : null;
    const total = sumOf(mine.filter((x) => x.quota > 0), (x) => x.quota);
    if (one && one.quota > gpus) {
      out.push(`Department ${one.q.name} has ${gpu(one.quota)} GPUs of quota in node pool ${p.name}, ` +
        `which has ${gpu(gpus)}: its quota cannot all be met.`);
    } else if (!state.dept && total > gpus) {
      out.push(`Node pool ${p.name} is oversubscribed: the ${what}' quotas add up to ${gpu(total)} GPUs, ` +
        `and it has ${gpu(gpus)}. Quotas are not all guaranteed at once.`);
    }
  }
  fillIn(el.oversub, ...out.map((t) => notice('warn', t)));
}

function sumOf(list, f) {
  return list.reduce((s, x) => s + Number(f(x) || 0), 0);
}

function renderCards(ctx, nodes, counts, idle, measured, depts, projects) {
  const ready = nodes.filter((n) => n.status === 'Ready');
  const total = sumOf(nodes, (n) => n.gpuInfo && n.gpuInfo.gpuCount);
  const readyGpus = sumOf(ready, (n) => n.gpuInfo && n.gpuInfo.gpuCount);
  let alloc = sumOf(nodes, (n) => n.allocatedGpus);
  let allocSub = total ? `${pct(alloc, total)} of the GPUs` : '';
  if (state.dept) {
    const d = depts.find((x) => x.id === state.dept);
    alloc = d ? poolNumbers(d, state.pool).alloc : 0;
    allocSub = 'by this department';
  } else if (!ctx.can.wlReadAll) {
    const mine = sumOf(projects, (p) => poolNumbers(p, state.pool).alloc);
    allocSub = `${gpu(mine)} by your projects`;
  }
  const idleN = idle.error ? null : sumOf(telemetry(idle), (v) => v.value);
  const measN = measured.error ? null : sumOf(telemetry(measured), (v) => v.value);
  const phase = (p) => sumOf(counts.filter((c) => c.groups.Phase && c.groups.Phase.value === p), (c) => c.value);
  fillIn(el.cards,
    card('card-gpus', 'GPUs ready', `${gpu(readyGpus)}`,
      `of ${gpu(total)} in ${ready.length} of ${nodes.length} node${nodes.length === 1 ? '' : 's'}`),
    card('card-alloc', 'Allocated GPUs', gpu(alloc), allocSub),
    card('card-idle', 'Idle allocated GPUs', measN ? gpu(idleN) : '-',
      measN ? `of ${gpu(measN)} measured by agents` : 'no agent measures utilisation here'),
    card('card-pending', 'Pending workloads', num(phase('Pending')), 'waiting for GPUs'),
    card('card-running', 'Running workloads', num(phase('Running')), ''));
}

// A queue's GPU numbers, in one pool or summed over all.
export function poolNumbers(q, pool) {
  const st = q.status || {};
  const rows = (st.nodePoolQuotaStatuses || []).filter((x) => !pool || x.nodePoolName === pool);
  const res = (q.resources || []).filter((r) => !pool || (r.nodePool && r.nodePool.name === pool));
  const alloc = sumOf(rows, (x) => x.allocated && x.allocated.gpu);
  const unlimited = res.some((r) => r.gpu && Number(r.gpu.deserved) < 0);
  const quota = unlimited ? -1 : sumOf(res, (r) => r.gpu && r.gpu.deserved);
  return {alloc, quota};
}

function renderPools(pools, nodes, idle, measured) {
  if (!pools.length) {
    fillIn(el.pools, notice('empty', 'No node pools.'));
    return;
  }
  const byPool = (t, name) => {
    if (t.error) return null;
    const v = telemetry(t).find((x) => x.groups.Nodepool && x.groups.Nodepool.value === name);
    return v ? v.value : 0;
  };
  const rows = pools.map((p) => {
    const mine = nodes.filter((n) => n.nodePool === p.name);
    const ready = mine.filter((n) => n.status === 'Ready');
    const total = sumOf(mine, (n) => n.gpuInfo && n.gpuInfo.gpuCount);
    const readyGpus = sumOf(ready, (n) => n.gpuInfo && n.gpuInfo.gpuCount);
    const alloc = sumOf(mine, (n) => n.allocatedGpus);
    const meas = byPool(measured, p.name);
    const td = (label, v, cls) => h('td', {class: cls || null, dataset: {label}}, v);
    return h('tr', {dataset: {key: p.name}},
      h('th', {scope: 'row', class: 'sticky', dataset: {label: 'Node pool'}}, p.name),
      td('Ready nodes', `${ready.length}/${mine.length}`, 'num'),
      td('Ready GPUs', `${gpu(readyGpus)}/${gpu(total)}`, 'num'),
      td('Allocated', gpu(alloc), 'num'),
      td('Idle allocated', meas ? `${gpu(byPool(idle, p.name))} of ${gpu(meas)}` : '-', 'num'),
      td('Allocation ratio', meter(alloc, total, total ? pct(alloc, total) : '-')));
  });
  fillIn(el.pools, h('table', {class: 'data cards-on-phone', id: 'ov-pools-table', 'aria-label': 'Node pools'},
    h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Node pool'),
      h('th', {scope: 'col', class: 'num'}, 'Ready nodes'), h('th', {scope: 'col', class: 'num'}, 'Ready GPUs'),
      h('th', {scope: 'col', class: 'num'}, 'Allocated'), h('th', {scope: 'col', class: 'num'}, 'Idle allocated'),
      h('th', {scope: 'col'}, 'Allocation ratio'))),
    h('tbody', {}, rows)));
}

function renderTypes(error, counts) {
  if (error) {
    fillIn(el.types, notice('error', errorText(error)));
    return;
  }
  const phases = PHASE_ORDER.filter((p) => counts.some((c) => c.groups.Phase && c.groups.Phase.value === p && c.value));
  const types = TYPE_ORDER.filter((t) => counts.some((c) => c.groups.Type && c.groups.Type.value === t && c.value));
  if (!types.length) {
    fillIn(el.types, notice('empty', 'No workloads.'));
    return;
  }
  const n = (t, p) => sumOf(counts.filter((c) => (!t || c.groups.Type.value === t) &&
    (!p || c.groups.Phase.value === p)), (c) => c.value);
  const link = (t, p, v) => (v ? h('a', {href: `#/workloads?${new URLSearchParams(
    Object.entries({type: t, phase: p}).filter(([, x]) => x))}`}, num(v)) : '0');
  fillIn(el.types, h('table', {class: 'data compact', id: 'ov-types-table', 'aria-label': 'Workloads by type and phase'},
    h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Type'),
      phases.map((p) => h('th', {scope: 'col', class: 'num'}, p)), h('th', {scope: 'col', class: 'num'}, 'All'))),
    h('tbody', {}, types.map((t) => h('tr', {dataset: {key: t}}, h('th', {scope: 'row'}, t),
      phases.map((p) => h('td', {class: 'num'}, link(t, p, n(t, p)))),
      h('td', {class: 'num'}, link(t, '', n(t, ''))))))));
}

function renderPending(pending) {
  if (pending.error) {
    destroyChart(el.pendingCanvas);
    el.pendingBox.hidden = true;
    fillIn(el.pendingNote, notice('error', errorText(pending.error)));
    return;
  }
  const v = telemetry(pending);
  const total = sumOf(v, (x) => x.value);
  if (!total) {
    destroyChart(el.pendingCanvas);
    el.pendingBox.hidden = true;
    fillIn(el.pendingNote, notice('empty', 'No workload is pending.'));
    return;
  }
  const longest = v.filter((x) => x.value).map((x) => x.groups.PendingTime).pop();
  // a few long waits beside thousands of short ones: a logarithmic scale
  const counts = v.map((x) => x.value).filter((x) => x > 0);
  const log = Math.max(...counts) >= 20 * Math.min(...counts);
  fillIn(el.pendingNote, h('p', {class: 'muted', id: 'ov-pending-text'},
    `${num(total)} pending; the longest waits are in "${longest.name}".`,
    log ? h('span', {id: 'ov-pending-log'}, ' The scale is logarithmic (1, 10, 100, …), so a few long waits show beside many short ones.') : null),
  h('ul', {class: 'bins', id: 'ov-pending-bins', 'aria-label': 'Pending workloads by time waited'},
    v.filter((x) => x.value).map((x) => h('li', {dataset: {key: x.groups.PendingTime.value}},
      h('span', {class: 'muted'}, `${x.groups.PendingTime.name}: `), h('strong', {}, num(x.value))))));
  el.pendingBox.hidden = false;
  barChart(el.pendingCanvas, v.map((x) => x.groups.PendingTime.name), [
    {label: 'Pending workloads', data: v.map((x) => (log && !x.value ? null : x.value)), color: COLORS.fair}],
  log ? 'Workloads (log scale)' : 'Workloads', {log});
}

function renderDepts(depts) {
  if (!depts.length) {
    el.deptPanel.hidden = true;
    return;
  }
  el.deptPanel.hidden = false;
  fillIn(el.depts, h('table', {class: 'data compact cards-on-phone', id: 'ov-depts-table', 'aria-label': 'Allocation per department'},
    h('thead', {}, h('tr', {}, ['Department', 'GPU quota', 'Allocated', 'Allocation ratio'].map((c, i) =>
      h('th', {scope: 'col', class: i && i < 3 ? 'num' : null}, c)))),
    h('tbody', {}, depts.filter((d) => !state.dept || d.id === state.dept).map((d) => {
      const n = poolNumbers(d, state.pool);
      return h('tr', {dataset: {key: d.name}}, h('th', {scope: 'row', class: 'sticky', dataset: {label: 'Department'}}, d.name),
        h('td', {class: 'num', dataset: {label: 'GPU quota'}}, n.quota < 0 ? 'unlimited' : gpu(n.quota)),
        h('td', {class: 'num', dataset: {label: 'Allocated'}}, gpu(n.alloc)),
        h('td', {dataset: {label: 'Allocation ratio'}}, n.quota > 0 ? meter(n.alloc, n.quota, pct(n.alloc, n.quota))
          : h('span', {class: 'muted'}, n.quota < 0 ? 'no cap' : n.alloc ? 'over (no quota)' : '-')));
    }))));
}

// The evictions of the range: counted by the server, the newest 6 listed;
// with a department or node pool chosen, narrowed by the server.
async function renderEvictions(signal, depts) {
  const r = RANGES[state.range];
  const start = new Date(Date.now() - r.ms).toISOString();
  const {total: n, rows} = await evictionsWhere({start, dept: state.dept, pool: state.pool, limit: 6, signal});
  checkAbort(signal);
  const where = narrowedBy(state.dept, state.pool, depts);
  const q = new URLSearchParams(Object.entries({range: state.range, dept: state.dept, pool: state.pool})
    .filter(([, v]) => v));
  const all = h('a', {href: `#/evictions?${q}`, id: 'ov-evictions-all'},
    n ? `All ${num(n)} eviction${n === 1 ? '' : 's'} →` : 'Evictions →');
  const head = h('p', {class: 'evictions-count'}, h('strong', {id: 'ov-evictions-count'}, num(n)),
    ` eviction${n === 1 ? '' : 's'} in the ${r.label.toLowerCase()}${where} · `, all);
  if (!n) {
    fillIn(el.preemptions, head, notice('empty', `No workload was evicted in the ${r.label.toLowerCase()}${where}.`));
    return;
  }
  fillIn(el.preemptions, head, h('ul', {class: 'events'}, rows.map((e) =>
    h('li', {dataset: {key: e.id}},
      h('div', {class: 'event-head'}, badge(e.reason, 'warn'), ' ',
        h('a', {href: `#/workloads?id=${encodeURIComponent(e.workloadId)}`}, e.workloadName),
        h('span', {class: 'muted'}, ` in ${e.projectName} · `),
        h('time', {datetime: e.createdAt, title: time(e.createdAt)}, ago(e.createdAt))),
      h('div', {class: 'event-msg'}, reasonText(e.message))))));
}

// The slots of the range: n times from start to end, as the server splits it.
export function slots(start, end, n) {
  const step = (end - start) / (n - 1);
  return Array.from({length: n}, (_, i) => Math.round(start + step * i));
}

// A slot's time as the axis writes it for a range (a key of RANGES).
export function slotLabel(t, range) {
  const d = new Date(t);
  const p = (x) => String(x).padStart(2, '0');
  const hm = `${p(d.getHours())}:${p(d.getMinutes())}`;
  if (range === 'week') return `${p(d.getDate())}/${p(d.getMonth() + 1)} ${hm}`;
  return range === 'min5' ? `${hm}:${p(d.getSeconds())}` : hm;
}

const label = (t) => slotLabel(t, state.range);

// One measurement's values placed on the slots (null where none): each
// value goes to the slot nearest its time.
export function onSlots(times, m) {
  const out = times.map(() => null);
  const step = times.length > 1 ? (times[times.length - 1] - times[0]) / (times.length - 1) : 1;
  for (const v of (m && m.values) || []) {
    const i = Math.round((new Date(v.timestamp).getTime() - times[0]) / step);
    if (i >= 0 && i < out.length) out[i] = Number(v.value);
  }
  return out;
}

const agg = (r, type, a) => (r.measurements || []).find((m) => m.type === type &&
  ((m.labels && m.labels.aggregation) || 'last') === a);

// The allocation over the range: the cluster's (or the department's) max
// and mean per slot, the projects with the most allocated, and the GPUs
// there now.
async function renderSeries(ctx, pools, nodes, projects, signal) {
  const r = RANGES[state.range];
  const end = Date.now();
  const start = end - r.ms;
  const times = slots(start, end, r.slots);
  const q = {start: new Date(start).toISOString(), end: new Date(end).toISOString(),
    numberOfSamples: r.slots, nodepoolName: state.pool, aggregation: 'max,mean'};
  const whole = state.dept
    ? withQuery(`/api/v1/org-unit/departments/${encodeURIComponent(state.dept)}/metrics`, {...q, metricType: 'GPU_ALLOCATION'})
    : withQuery(`/api/v1/clusters/${encodeURIComponent(ctx.clusterId)}/metrics`, {...q, metricType: 'ALLOCATED_GPU'});
  const type = state.dept ? 'GPU_ALLOCATION' : 'ALLOCATED_GPU';
  const candidates = projects.filter((p) => !state.dept || p.parentId === state.dept)
    .map((p) => ({p, a: poolNumbers(p, state.pool).alloc}))
    .sort((a, b) => b.a - a.a || a.p.name.localeCompare(b.p.name));
  const picked = state.show ? state.show.split(',').filter(Boolean) : null;
  const top = candidates.filter((x) => x.a > 0 || !ctx.can.wlReadAll).slice(0, 5);
  const shown = picked ? candidates.filter((x) => picked.includes(x.p.name)).slice(0, SHOW_MAX) : top;
  renderPick(candidates, shown, picked, top);
  const [total, ...per] = await Promise.all([
    ctx.can.wlReadAll || state.dept ? get(whole, {signal}).catch((e) => ({error: e})) : null,
    ...shown.map((x) => get(withQuery(`/api/v1/org-unit/projects/${encodeURIComponent(x.p.id)}/metrics`,
      {...q, metricType: 'GPU_ALLOCATION', aggregation: 'mean'}), {signal}).catch((e) => ({error: e}))),
  ]);
  checkAbort(signal);
  if (total && total.error) {
    if (total.error.name === 'AbortError') throw total.error;
    noChart(notice(total.error.status === 404 ? 'info' : 'error', errorText(total.error)));
    return;
  }
  const capacity = sumOf(nodes, (n) => n.gpuInfo && n.gpuInfo.gpuCount);
  const series = [];
  if (total) {
    series.push({label: 'Allocated GPUs (max)', data: onSlots(times, agg(total, type, 'max')),
      color: COLORS.total, thin: true, dashed: true});
    series.push({label: 'Allocated GPUs (mean)', data: onSlots(times, agg(total, type, 'mean')),
      color: COLORS.total, fill: true});
  }
  shown.forEach((x, i) => {
    if (per[i] && !per[i].error) {
      series.push({label: `${x.p.name} (mean)`, data: onSlots(times, agg(per[i], 'GPU_ALLOCATION', 'mean')),
        color: COLORS.series[i % COLORS.series.length], thin: true});
    }
  });
  if (!state.dept) {
    series.push({label: 'GPUs in the pool (now)', data: times.map(() => capacity), color: COLORS.quota,
      dashed: true, thin: true});
  }
  if (!series.some((s) => s.data.some((v) => v !== null && v > 0)) &&
      !series.some((s) => s.data.some((v) => v !== null && !s.label.startsWith('GPUs')))) {
    noChart(notice('empty', 'No samples recorded in this range yet.'));
    return;
  }
  const covered = series[0] ? series[0].data.filter((v) => v !== null).length : 0;
  fillIn(el.chartNote, h('p', {class: 'muted chart-caption'},
    `${r.label}, ${r.slots} slots of ${duration(Math.round(r.ms / (r.slots - 1) / 1000))}; ` +
    `each slot shows the highest and the mean allocation within it` +
    (covered < r.slots ? `; samples cover ${covered} of them.` : '.')));
  el.chartBox.hidden = false;
  lineChart(el.canvas, times.map(label), series, 'GPUs');
  seriesAt = Date.now();
  seriesKey = key();
}

// Which projects the chart draws, said above it: the 5 with the most
// GPUs allocated now unless the user picked others (#/overview?show=a,b).
function renderPick(candidates, shown, picked, top) {
  const ctx = el.ctx;
  const names = shown.map((x) => x.p.name);
  const choose = (list) => ctx.setParams({show: list.length ? list.join(',') : null});
  const lead = picked
    ? `Projects drawn: ${names.join(', ') || 'none'} (your choice, at most ${SHOW_MAX}).`
    : `Projects drawn: the ${top.length === 5 ? '5' : top.length} with the most GPUs allocated now` +
      `${top.length ? ` (${names.join(', ')})` : ''}, of ${candidates.length}.`;
  fillIn(el.chartPick, h('div', {class: 'chart-pick-row'},
    h('span', {class: 'muted', id: 'ov-chart-projects'}, lead, ' '),
    h('details', {class: 'chart-pick columns', id: 'ov-pick', dataset: {key: 'pick'}},
      h('summary', {}, 'Choose projects'),
      h('div', {class: 'columns-menu', role: 'group', 'aria-label': 'Projects drawn on the chart'},
        candidates.map((x) => h('label', {dataset: {key: x.p.name}},
          h('input', {type: 'checkbox', name: `show-${x.p.name}`, checked: names.includes(x.p.name),
            disabled: !names.includes(x.p.name) && names.length >= SHOW_MAX,
            onchange: (e) => choose(e.target.checked ? [...names, x.p.name]
              : names.filter((n) => n !== x.p.name))}),
          ` ${x.p.name} (${gpu(x.a)})`)),
        picked ? h('button', {type: 'button', class: 'small', id: 'ov-pick-top', dataset: {key: 'top'},
          onclick: () => choose([])}, 'Back to the top 5') : null))));
}

// Says why there is no chart, instead of drawing one.
function noChart(why) {
  destroyChart(el.canvas);
  el.chartBox.hidden = true;
  fillIn(el.chartNote, why);
  seriesAt = Date.now();
  seriesKey = key();
}
