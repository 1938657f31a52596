// analytics.js: the Analytics page, for the admin looking back over a
// range: the cluster's (or a node pool's) GPUs over time (in the pool,
// allocated, unallocated, and allocated but measured idle); per project or
// department, GPUs allocated against those in use (allocation x measured
// utilisation) and against the quota, as a chart and a table, and each
// one's allocation and utilisation over time; how long pending workloads
// have waited, and the longest waits now. Every chart offers its data as
// CSV. The figures
// are the series allotd records every sample period
// (GET /api/v1/clusters/{uuid}/metrics, with groupBy=Project|Department).
// URL: #/analytics?range=&pool=&group=.

import {get, withQuery, checkAbort} from './api.js';
import {h, fill, fillIn, gpu, num, notice, duration, time, ago, csv, download} from './dom.js';
import {lineChart, barChart, COLORS} from './charts.js';
import {RANGES, slots, slotLabel, onSlots} from './overview.js';

const GROUPS = {Project: 'Projects', Department: 'Departments'};
const DRAWN = 8;                  // entities drawn on the allocation chart
let el = {};
const state = {range: 'hour', pool: '', group: 'Project'};
const data = {};                  // chart id -> {header, rows}: what its CSV holds

function applyParams(params) {
  state.range = RANGES[params.get('range')] ? params.get('range') : 'hour';
  state.pool = params.get('pool') || '';
  state.group = GROUPS[params.get('group')] ? params.get('group') : 'Project';
  if (el.range) {
    el.range.value = state.range;
    el.pool.value = state.pool;
    el.group.value = state.group;
  }
}

const label = (t) => slotLabel(t, state.range);

const mean = (xs) => {
  const v = xs.filter((x) => x !== null);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
};
const lastOf = (xs) => [...xs].reverse().find((x) => x !== null) ?? null;
const fixed = (v, d = 2) => (v === null ? '' : Number(v).toFixed(d));

// A panel around chart `key`, with the button that downloads its data.
function panel(key, title, body, note) {
  const id = `${key}-panel`;
  return h('section', {class: 'panel', id, 'aria-labelledby': `${id}-h`},
    h('div', {class: 'panel-head'}, h('h2', {id: `${id}-h`}, title),
      h('button', {type: 'button', class: 'small', id: `${key}-csv`, onclick: () => saveCsv(key)}, 'Download CSV')),
    note ? h('p', {class: 'muted chart-caption'}, note) : null, body);
}

function saveCsv(id) {
  const d = data[id];
  if (d) download(`allot-${id}-${state.range}.csv`, csv(d.header, d.rows));
}

// The CSV of a line chart: one row per slot, one column per series.
function keepLines(id, times, series) {
  data[id] = {header: ['time', ...series.map((s) => s.label)],
    rows: times.map((t, i) => [new Date(t).toISOString(), ...series.map((s) => s.data[i])])};
}

// The range's metrics of the cluster (or pool) and of every project or
// department, on the range's slots.
async function load(ctx, signal) {
  const r = RANGES[state.range];
  const end = Date.now();
  const start = end - r.ms;
  const q = {start: new Date(start).toISOString(), end: new Date(end).toISOString(),
    numberOfSamples: r.slots, nodepoolName: state.pool};
  const path = `/api/v1/clusters/${encodeURIComponent(ctx.clusterId)}/metrics`;
  const [cluster, grouped] = await Promise.all([
    get(withQuery(path, {...q, metricType: ['TOTAL_GPU', 'ALLOCATED_GPU', 'UNALLOCATED_GPU',
      'IDLE_ALLOCATED_GPUS', 'AVG_WORKLOAD_WAIT_TIME', 'GPU_UTILIZATION']}), {signal}),
    get(withQuery(path, {...q, groupBy: state.group, metricType: ['ALLOCATED_GPU', 'GPU_QUOTA',
      'GPU_UTILIZATION', 'IDLE_ALLOCATED_GPUS']}), {signal}),
  ]);
  return {r, times: slots(start, end, r.slots), cluster, grouped};
}

function renderCluster(times, cluster) {
  const m = (t) => onSlots(times, (cluster.measurements || []).find((x) => x.type === t));
  const series = [
    {label: 'GPUs', data: m('TOTAL_GPU'), color: COLORS.quota, dashed: true, thin: true},
    {label: 'Allocated', data: m('ALLOCATED_GPU'), color: COLORS.allocated, fill: true},
    {label: 'Unallocated (idle)', data: m('UNALLOCATED_GPU'), color: COLORS.total},
    {label: 'Allocated but idle (0% measured)', data: m('IDLE_ALLOCATED_GPUS'), color: COLORS.fair},
  ];
  keepLines('an-cluster', times, series);
  lineChart(el.cluster, times.map(label), series, 'GPUs');
  const wait = [{label: 'Average wait of pending workloads (s)', data: m('AVG_WORKLOAD_WAIT_TIME'),
    color: COLORS.series[1]}];
  keepLines('an-wait', times, wait);
  lineChart(el.wait, times.map(label), wait, 'seconds');
}

// Per project (or department): its series on the slots and their figures.
function entities(times, grouped) {
  const key = state.group === 'Project' ? 'project' : 'department';
  const by = new Map();
  for (const m of grouped.measurements || []) {
    const name = m.labels && m.labels[key];
    if (!name) continue;
    if (!by.has(name)) by.set(name, {name});
    by.get(name)[m.type] = onSlots(times, m);
  }
  return [...by.values()].map((e) => {
    const alloc = e.ALLOCATED_GPU || times.map(() => null);
    const util = e.GPU_UTILIZATION || times.map(() => null);
    const used = alloc.map((a, i) => (a !== null && util[i] !== null ? (a * util[i]) / 100 : null));
    return {name: e.name, alloc, used, util, quota: lastOf(e.GPU_QUOTA || []),
      allocNow: lastOf(alloc), allocMean: mean(alloc), usedMean: mean(used), utilMean: mean(util),
      idleNow: lastOf(e.IDLE_ALLOCATED_GPUS || [])};
  }).sort((a, b) => (b.allocMean || 0) - (a.allocMean || 0) || a.name.localeCompare(b.name));
}

function renderUsage(list) {
  const names = list.map((e) => e.name);
  const quota = list.map((e) => (e.quota !== null && e.quota >= 0 ? e.quota : null));
  const bars = [
    {label: 'Quota', data: quota, color: COLORS.quota},
    {label: 'Allocated (mean)', data: list.map((e) => e.allocMean), color: COLORS.allocated},
    {label: 'In use (mean, measured)', data: list.map((e) => e.usedMean), color: COLORS.series[2]},
  ];
  data['an-usage'] = {header: [state.group, 'quota', 'allocated now', 'allocated mean', 'in use mean',
    'utilisation mean %', 'idle allocated now'],
  rows: list.map((e) => [e.name, e.quota, e.allocNow, fixed(e.allocMean, 3), fixed(e.usedMean, 3),
    fixed(e.utilMean), e.idleNow])};
  barChart(el.usage, names, bars, 'GPUs');
  const cols = [state.group, 'Quota', 'Allocated now', 'Allocated (mean)', 'In use (mean)',
    'Utilisation (mean)', 'Idle allocated now'];
  const dash = (v, f) => (v === null || v === undefined ? '-' : f(v));
  fillIn(el.usageTable, h('table', {class: 'data cards-on-phone', id: 'an-usage-table',
    'aria-label': `${GROUPS[state.group]}: GPUs allocated and in use`},
  h('thead', {}, h('tr', {}, cols.map((c) => h('th', {scope: 'col'}, c)))),
  h('tbody', {}, list.map((e) => h('tr', {dataset: {key: e.name}},
    h('th', {scope: 'row', dataset: {label: cols[0]}}, e.name),
    h('td', {class: 'num', dataset: {label: cols[1]}}, dash(e.quota, (v) => (v < 0 ? 'unlimited' : gpu(v)))),
    h('td', {class: 'num', dataset: {label: cols[2]}}, dash(e.allocNow, gpu)),
    h('td', {class: 'num', dataset: {label: cols[3]}}, dash(e.allocMean, gpu)),
    h('td', {class: 'num', dataset: {label: cols[4]}}, dash(e.usedMean, gpu)),
    h('td', {class: 'num', dataset: {label: cols[5]}}, dash(e.utilMean, (v) => `${fixed(v, 0)}%`)),
    h('td', {class: 'num', dataset: {label: cols[6]}}, dash(e.idleNow, num)))))));
}

function renderAlloc(times, list) {
  const series = list.slice(0, DRAWN).map((e, i) => ({label: e.name, data: e.alloc,
    color: COLORS.series[i % COLORS.series.length], thin: true}));
  fillIn(el.allocNote, `${GROUPS[state.group]} drawn: ${list.length > DRAWN
    ? `the ${DRAWN} with the most GPUs allocated on average over the range, of ${list.length}`
    : `all ${list.length}`} (the CSV holds every one).`);
  keepLines('an-alloc', times, list.map((e) => ({label: e.name, data: e.alloc})));
  lineChart(el.alloc, times.map(label), series, 'GPUs');
}

// Utilisation over time: of every measured GPU (of the pool), and of the
// devices each project or department holds, for those measured.
function renderUtil(times, cluster, list) {
  const all = onSlots(times, (cluster.measurements || []).find((x) => x.type === 'GPU_UTILIZATION'));
  const measured = list.filter((e) => e.util.some((v) => v !== null));
  const series = [{label: 'Every measured GPU', data: all, color: COLORS.total, fill: true},
    ...measured.slice(0, DRAWN).map((e, i) => ({label: e.name, data: e.util,
      color: COLORS.series[i % COLORS.series.length], thin: true}))];
  keepLines('an-util', times, [series[0], ...measured.map((e) => ({label: e.name, data: e.util}))]);
  fillIn(el.utilNote, measured.length ? null
    : notice('empty', `No ${GROUPS[state.group].toLowerCase().replace(/s$/, '')} holds a device an agent measures.`));
  lineChart(el.util, times.map(label), series, '%');
}

async function renderLongest(signal) {
  const l = await get(withQuery('/api/v1/workloads', {filterBy: 'phase==Pending', sortBy: 'phaseUpdatedAt',
    sortOrder: 'asc', limit: 10}), {signal});
  checkAbort(signal);
  const rows = l.workloads || [];
  if (!rows.length) {
    fillIn(el.longest, notice('empty', 'No workload is pending now.'));
    return;
  }
  const cols = ['Workload', 'Project', 'Pending since', 'Waited'];
  fillIn(el.longest, h('table', {class: 'data cards-on-phone', id: 'an-longest', 'aria-label': 'The longest waits'},
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', {scope: 'col'}, c)))),
    h('tbody', {}, rows.map((w) => h('tr', {dataset: {key: w.workloadId}},
      h('th', {scope: 'row', dataset: {label: cols[0]}},
        h('a', {href: `#/workloads?id=${encodeURIComponent(w.workloadId)}`}, w.name)),
      h('td', {dataset: {label: cols[1]}}, w.projectName),
      h('td', {dataset: {label: cols[2]}}, h('time', {datetime: w.phaseUpdatedAt, title: ago(w.phaseUpdatedAt)},
        time(w.phaseUpdatedAt))),
      h('td', {class: 'num', dataset: {label: cols[3]}},
        duration(Math.max(0, Math.round((Date.now() - new Date(w.phaseUpdatedAt)) / 1000)))))))));
}

export default {
  id: 'analytics',
  title: 'Analytics',
  applyParams,

  mount(root, ctx, params) {
    applyParams(params);
    const select = (id, label, options, value, key) => {
      const s = h('select', {id, onchange: (e) => ctx.setParams({[key]: e.target.value || null})},
        options.map(([v, t]) => h('option', {value: v, selected: v === value}, t)));
      return [s, h('span', {class: 'filter'}, h('label', {for: id}, label), s)];
    };
    let f1; let f2; let f3;
    [el.range, f1] = select('an-range', 'Range', Object.entries(RANGES).map(([k, r]) => [k, r.label]), state.range, 'range');
    [el.pool, f2] = select('an-pool', 'Node pool', [['', 'All node pools']], state.pool, 'pool');
    [el.group, f3] = select('an-group', 'Per', Object.entries(GROUPS), state.group, 'group');
    el.cluster = h('canvas', {id: 'an-cluster', role: 'img', 'aria-label': 'GPUs over time'});
    el.usage = h('canvas', {id: 'an-usage', role: 'img', 'aria-label': 'GPUs allocated and in use'});
    el.alloc = h('canvas', {id: 'an-alloc', role: 'img', 'aria-label': 'Allocation over time'});
    el.wait = h('canvas', {id: 'an-wait', role: 'img', 'aria-label': 'Average wait over time'});
    el.util = h('canvas', {id: 'an-util', role: 'img', 'aria-label': 'Utilisation over time'});
    el.utilNote = h('div', {id: 'an-util-note'});
    el.usageTable = h('div', {class: 'table-wrap'});
    el.allocNote = h('p', {class: 'muted chart-caption', id: 'an-alloc-note'});
    el.longest = h('div', {class: 'table-wrap'});
    el.note = h('div', {id: 'an-note'});
    fill(root,
      h('div', {class: 'page-head'}, h('h1', {}, 'Analytics'), h('div', {class: 'filters'}, f1, f2, f3)),
      el.note,
      panel('an-cluster', 'GPUs over time', h('div', {class: 'chart-box'}, el.cluster),
        'The GPUs of ready nodes, those allocated to pods, those left unallocated (idle), and those ' +
        'allocated that their agents measure at 0% utilisation (only nodes with an agent are measured).'),
      panel('an-usage', 'Allocated against in use', h('div', {}, h('div', {class: 'chart-box'}, el.usage),
        el.usageTable),
      'Quota now; GPUs allocated, and in use (allocation x the utilisation agents measure on its devices), ' +
        'on average over the range.'),
      panel('an-alloc', 'Allocation over time', h('div', {}, el.allocNote, h('div', {class: 'chart-box'}, el.alloc))),
      panel('an-util', 'Utilisation over time', h('div', {}, el.utilNote, h('div', {class: 'chart-box'}, el.util)),
        'GPU utilisation as agents measure it, in percent: the mean over every measured GPU (of the pool), ' +
        'and over the devices each one\'s pods hold.'),
      panel('an-wait', 'Waiting', h('div', {}, h('div', {class: 'chart-box'}, el.wait),
        h('h3', {}, 'The longest waits now'), el.longest),
      'The average time the pending workloads had waited, over the range.'));
  },

  unmount() {
    el = {};
  },

  async refresh(ctx, signal) {
    const pools = await get('/api/v1/node-pools', {signal}).catch((e) => {
      if (e.name === 'AbortError') throw e;
      return {};
    });
    const names = (pools.nodepools || []).map((p) => p.name).sort((a, b) => a.localeCompare(b));
    fillIn(el.pool, h('option', {value: ''}, 'All node pools'),
      names.map((n) => h('option', {value: n, selected: n === state.pool}, n)));
    el.pool.value = state.pool;
    const {times, cluster, grouped} = await load(ctx, signal);
    checkAbort(signal);
    const list = entities(times, grouped);
    fillIn(el.note, list.length ? null : notice('empty', `No ${GROUPS[state.group].toLowerCase()} to show.`));
    renderCluster(times, cluster);
    renderUsage(list);
    renderAlloc(times, list);
    renderUtil(times, cluster, list);
    await renderLongest(signal);
  },
};
