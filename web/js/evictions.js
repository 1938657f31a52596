// evictions.js: every eviction (reclaim, preemption, stale gang) of a time
// range across the workloads the user may read, newest first, a page at a
// time from GET /api/v1/evictions; the Overview links here. Narrowed to a
// department or a node pool (as the Overview's filters narrow it), the
// list is filtered here: by the evicted workload's project, and by the
// pool of the nodes it ran on (its last placement event before the
// eviction), since the server's list takes neither filter.
// URL: #/evictions?range=&page=&dept=&pool=.

import {get, withQuery, checkAbort} from './api.js';
import {h, fill, fillIn, time, ago, badge, notice, num} from './dom.js';
import {RANGES} from './overview.js';
import {reasonText} from './reasons.js';

const SIZE = 50;
const SCAN_MAX = 5000;   // evictions read to narrow a range (10 pages of 500)
const PLACE_MAX = 300;   // evictions whose pool is looked up, newest first
let el = {};
const state = {range: 'day', page: 1, dept: '', pool: ''};
const poolOfEviction = new Map(); // eviction id -> pool name ('' unknown)

function applyParams(params) {
  state.range = RANGES[params.get('range')] ? params.get('range') : 'day';
  state.page = Math.max(1, Number(params.get('page')) || 1);
  state.dept = params.get('dept') || '';
  state.pool = params.get('pool') || '';
}

// The node pool an evicted workload was running in: the nodes named by
// its last placement event (Running, Scheduled, Moved) before the
// eviction, mapped to their pools. Cached: an eviction does not change.
async function poolOf(e, nodePool, signal) {
  if (poolOfEviction.has(e.id)) return poolOfEviction.get(e.id);
  const r = await get(withQuery(`/api/v1/workloads/${encodeURIComponent(e.workloadId)}/events`,
    {sortOrder: 'desc', limit: 200}), {signal}).catch((x) => {
    if (x.name === 'AbortError') throw x;
    return {events: []};
  });
  const at = new Date(e.createdAt).getTime();
  let pool = '';
  for (const ev of r.events || []) {
    if (new Date(ev.createdAt).getTime() > at) continue;
    let names = [];
    const placed = /placed on ([^;]*)/.exec(ev.message || '');
    const moved = /moved to (\S+) by/.exec(ev.message || '');
    if (['Running', 'Scheduled'].includes(ev.reason) && placed) names = placed[1].trim().split(/\s+/);
    else if (ev.reason === 'Moved' && moved) names = [moved[1]];
    else continue;
    pool = names.map((n) => nodePool.get(n)).find(Boolean) || '';
    break;
  }
  poolOfEviction.set(e.id, pool);
  return pool;
}

// The evictions since `start`, newest first, narrowed to the projects of
// department `dept` and to node pool `pool` (either may be ''). Returns
// {rows, total, exact}: exact is false when the range held more than
// could be read or placed, and total is then a lower bound.
export async function evictionsWhere({start, dept, pool, projects, nodes, signal}) {
  const mine = dept ? new Set(projects.filter((p) => p.parentId === dept).map((p) => String(p.id))) : null;
  const all = [];
  let exact = true;
  for (let offset = 0; ; offset += 500) {
    const r = await get(withQuery('/api/v1/evictions', {start, offset, limit: 500}), {signal});
    all.push(...(r.evictions || []).filter((e) => !mine || mine.has(String(e.projectId))));
    if (r.next === undefined || r.next === null) break;
    if (offset + 500 >= SCAN_MAX) { exact = false; break; }
  }
  checkAbort(signal);
  if (!pool) return {rows: all, total: all.length, exact};
  const nodePool = new Map(nodes.map((n) => [n.name, n.nodePool]));
  const todo = all.slice(0, PLACE_MAX);
  if (all.length > PLACE_MAX) exact = false;
  for (let i = 0; i < todo.length; i += 8) {
    await Promise.all(todo.slice(i, i + 8).map((e) => poolOf(e, nodePool, signal)));
  }
  checkAbort(signal);
  const rows = todo.filter((e) => poolOfEviction.get(e.id) === pool);
  return {rows, total: rows.length, exact};
}

// "in department D and node pool P" for what narrows a list, or ''.
export function narrowedBy(dept, pool, depts) {
  const d = dept ? depts.find((x) => x.id === dept) : null;
  const bits = [];
  if (dept) bits.push(`department ${d ? d.name : dept}`);
  if (pool) bits.push(`node pool ${pool}`);
  return bits.length ? ` in ${bits.join(' and ')}` : '';
}

export default {
  id: 'evictions',
  title: 'Evictions',
  applyParams,

  mount(root, ctx, params) {
    applyParams(params);
    el.range = h('select', {id: 'ev-range', onchange: (e) => ctx.setParams({range: e.target.value, page: null})},
      Object.entries(RANGES).map(([k, r]) => h('option', {value: k, selected: k === state.range}, r.label)));
    el.pager = h('div', {class: 'pager'});
    el.list = h('div', {class: 'table-wrap'});
    fill(root,
      h('div', {class: 'page-head'}, h('h1', {}, 'Evictions'),
        h('span', {class: 'filter'}, h('label', {for: 'ev-range'}, 'Range'), el.range)),
      h('p', {class: 'muted'}, 'Workloads stopped by the scheduler to give GPUs back to a project below its ' +
        'share (Reclaimed), to a higher priority in the same project (Preempted), or because a gang ' +
        'lost its minimum (StaleGang). They return to Pending and run again when they fit.'),
      el.pager, el.list);
  },

  unmount() {
    el = {};
  },

  async refresh(ctx, signal) {
    el.range.value = state.range;
    const start = new Date(Date.now() - RANGES[state.range].ms).toISOString();
    const label = RANGES[state.range].label.toLowerCase();
    let total;
    let rows;
    let more;
    let where = '';
    let exact = true;
    if (state.dept || state.pool) {
      const [pj, dp, nd] = await Promise.all([
        get('/api/v1/org-unit/projects', {signal}), get('/api/v1/org-unit/departments', {signal}).catch(() => ({})),
        get('/api/v1/nodes', {signal})]);
      const n = await evictionsWhere({start, dept: state.dept, pool: state.pool, projects: pj.projects || [],
        nodes: nd.nodes || [], signal});
      total = n.total;
      exact = n.exact;
      rows = n.rows.slice((state.page - 1) * SIZE, state.page * SIZE);
      more = state.page * SIZE < n.rows.length;
      where = narrowedBy(state.dept, state.pool, dp.departments || []);
    } else {
      const [count, list] = await Promise.all([
        get(withQuery('/api/v1/evictions/count', {start}), {signal}),
        get(withQuery('/api/v1/evictions', {start, offset: (state.page - 1) * SIZE, limit: SIZE}), {signal}),
      ]);
      total = Number(count.count || 0);
      rows = list.evictions || [];
      more = list.next !== undefined && list.next !== null;
    }
    const from = rows.length ? (state.page - 1) * SIZE + 1 : 0;
    fillIn(el.pager,
      h('button', {type: 'button', disabled: state.page <= 1, id: 'ev-prev',
        onclick: () => ctx.setParams({page: state.page - 1 > 1 ? state.page - 1 : null})}, '‹ Previous'),
      h('span', {class: 'range', id: 'ev-range-text'}, `${num(from)}–${num(from ? from + rows.length - 1 : 0)} of ` +
        `${exact ? '' : 'at least '}${num(total)} in the ${label}${where}`),
      h('button', {type: 'button', disabled: !more, id: 'ev-next',
        onclick: () => ctx.setParams({page: state.page + 1})}, 'Next ›'),
      state.dept || state.pool ? h('a', {href: `#/evictions?range=${state.range}`, id: 'ev-all'}, 'Every department and pool') : null);
    if (!rows.length) {
      fillIn(el.list, notice('empty', `No workload was evicted in the ${label}${where}.`));
      return;
    }
    const cols = ['Time', 'Reason', 'Workload', 'Type', 'Project', 'Message'];
    fillIn(el.list, h('table', {class: 'data cards-on-phone wrap', id: 'evictions-table', 'aria-label': 'Evictions'},
      h('thead', {}, h('tr', {}, cols.map((c) => h('th', {scope: 'col'}, c)))),
      h('tbody', {}, rows.map((e) => h('tr', {dataset: {key: e.id}},
        h('td', {dataset: {label: cols[0]}}, h('time', {datetime: e.createdAt, title: ago(e.createdAt)}, time(e.createdAt))),
        h('td', {dataset: {label: cols[1]}}, badge(e.reason, 'warn')),
        h('th', {scope: 'row', dataset: {label: cols[2]}},
          h('a', {href: `#/workloads?id=${encodeURIComponent(e.workloadId)}`}, e.workloadName)),
        h('td', {dataset: {label: cols[3]}}, e.workloadType || '-'),
        h('td', {dataset: {label: cols[4]}}, e.projectName),
        h('td', {class: 'msg', dataset: {label: cols[5]}}, reasonText(e.message)))))));
  },
};
