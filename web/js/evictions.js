// evictions.js: every eviction (reclaim, preemption, stale gang) of a time
// range across the workloads the user may read, newest first, a page at a
// time from GET /api/v1/evictions; the Overview links here.
// URL: #/evictions?range=&page=.

import {get, withQuery} from './api.js';
import {h, fill, fillIn, time, ago, badge, notice} from './dom.js';
import {RANGES} from './overview.js';
import {reasonText} from './reasons.js';

const SIZE = 50;
let el = {};
const state = {range: 'day', page: 1};

function applyParams(params) {
  state.range = RANGES[params.get('range')] ? params.get('range') : 'day';
  state.page = Math.max(1, Number(params.get('page')) || 1);
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
    const [count, list] = await Promise.all([
      get(withQuery('/api/v1/evictions/count', {start}), {signal}),
      get(withQuery('/api/v1/evictions', {start, offset: (state.page - 1) * SIZE, limit: SIZE}), {signal}),
    ]);
    const total = Number(count.count || 0);
    const rows = list.evictions || [];
    const from = rows.length ? (state.page - 1) * SIZE + 1 : 0;
    fillIn(el.pager,
      h('button', {type: 'button', disabled: state.page <= 1, id: 'ev-prev',
        onclick: () => ctx.setParams({page: state.page - 1 > 1 ? state.page - 1 : null})}, '‹ Previous'),
      h('span', {class: 'range', id: 'ev-range-text'}, `${from}–${from ? from + rows.length - 1 : 0} of ${total} ` +
        `in the ${RANGES[state.range].label.toLowerCase()}`),
      h('button', {type: 'button', disabled: list.next === undefined || list.next === null, id: 'ev-next',
        onclick: () => ctx.setParams({page: state.page + 1})}, 'Next ›'));
    if (!rows.length) {
      fillIn(el.list, notice('empty', `No workload was evicted in the ${RANGES[state.range].label.toLowerCase()}.`));
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
