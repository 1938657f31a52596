// evictions.js: every eviction (reclaim, preemption, stale gang) of a time
// range across the workloads the user may read, newest first, a page at a
// time from GET /api/v1/evictions; the Overview links here. Narrowed to a
// department or a node pool (as the Overview's filters narrow it) by the
// server (departmentId, nodepoolName: the pool the evicted pods ran in).
// URL: #/evictions?range=&page=&dept=&pool=.

import {get, withQuery} from './api.js';
import {h, fill, fillIn, time, ago, badge, notice, num} from './dom.js';
import {RANGES} from './overview.js';
import {reasonText} from './reasons.js';

const SIZE = 50;
let el = {};
const state = {range: 'day', page: 1, dept: '', pool: ''};

function applyParams(params) {
  state.range = RANGES[params.get('range')] ? params.get('range') : 'day';
  state.page = Math.max(1, Number(params.get('page')) || 1);
  state.dept = params.get('dept') || '';
  state.pool = params.get('pool') || '';
}

// The count of the evictions since `start` in department `dept` and node
// pool `pool` (either may be ''), and `limit` of them from `offset`,
// newest first: {total, rows, more}.
export async function evictionsWhere({start, dept, pool, offset = 0, limit, signal}) {
  const q = {start, departmentId: dept, nodepoolName: pool};
  const [count, list] = await Promise.all([
    get(withQuery('/api/v1/evictions/count', q), {signal}),
    get(withQuery('/api/v1/evictions', {...q, offset, limit}), {signal}),
  ]);
  return {total: Number(count.count || 0), rows: list.evictions || [],
    more: list.next !== undefined && list.next !== null};
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
    const [n, dp] = await Promise.all([
      evictionsWhere({start, dept: state.dept, pool: state.pool, offset: (state.page - 1) * SIZE, limit: SIZE, signal}),
      state.dept ? get('/api/v1/org-unit/departments', {signal}).catch(() => ({})) : {},
    ]);
    const {total, rows, more} = n;
    const where = narrowedBy(state.dept, state.pool, dp.departments || []);
    const from = rows.length ? (state.page - 1) * SIZE + 1 : 0;
    fillIn(el.pager,
      h('button', {type: 'button', disabled: state.page <= 1, id: 'ev-prev',
        onclick: () => ctx.setParams({page: state.page - 1 > 1 ? state.page - 1 : null})}, '‹ Previous'),
      h('span', {class: 'range', id: 'ev-range-text'}, `${num(from)}–${num(from ? from + rows.length - 1 : 0)} of ` +
        `${num(total)} in the ${label}${where}`),
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
