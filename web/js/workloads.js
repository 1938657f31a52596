// workloads.js: the Workloads page: the table with the UI's columns, its
// filters (project, status, type, name), sort and server-side pagination
// (only one page of rows is ever fetched or drawn, so 10,000 workloads cost
// what 50 do), a column chooser, CSV export of every matching row; the
// detail pane (status with the pending reason in words, pods with their
// devices and measured GPU use, events, logs that can follow the newest
// line; suspend / resume / delete). Everything is refreshed in place
// (dom.js morph): focus, selection and scroll survive the 5 s refresh.
// Filters, sort, page and the selected workload live in the URL
// (#/workloads?project=&phase=&type=&q=&sort=&order=&page=&size=&id=).
// The submission form is in submit.js.

import {api, get, withQuery, checkAbort} from './api.js';
import {h, fill, fillIn, gpu, num, time, ago, badge, notice, errorText, confirmDialog, csv, download} from './dom.js';
import {pendingReason, reasonView, reasonTag} from './reasons.js';
import {submitForm} from './submit.js';

export const PHASES = ['Creating', 'Pending', 'Initializing', 'Running', 'Stopping', 'Stopped',
  'Resuming', 'Degraded', 'Deleting', 'Completed', 'Failed'];
export const TYPES = ['Training', 'Workspace', 'Distributed', 'Inference'];
const PATH_OF_TYPE = {Training: 'trainings', Workspace: 'workspaces', Distributed: 'distributed',
  Inference: 'inferences'};
const SIZES = [25, 50, 100, 200];
const COLS_KEY = 'allot.workloads.columns';

// The columns: key, header, sortBy field, cell, CSV value; `opt` columns
// give way to the detail pane.
const COLUMNS = [
  {key: 'name', label: 'Workload', sort: 'name', fixed: true},
  {key: 'type', label: 'Type', sort: 'type', opt: true, cell: (w) => w.type},
  {key: 'preemptible', label: 'Preemptible', opt: true, cell: (w) => (w.preemptible ? 'Yes' : 'No')},
  {key: 'status', label: 'Status', sort: 'phase'},
  {key: 'project', label: 'Project', sort: 'projectName', cell: (w) => w.projectName},
  {key: 'department', label: 'Department', sort: 'departmentName', opt: true, hidden: true,
    cell: (w) => w.departmentName || '-'},
  {key: 'createdBy', label: 'Created by', sort: 'submittedBy', opt: true,
    cell: (w) => w.submittedBy || '-'},
  {key: 'pods', label: 'Running/Requested pods', num: true, cell: (w) => podsText(w)},
  {key: 'created', label: 'Creation time', sort: 'createdAt', opt: true},
  {key: 'gpu', label: 'GPU request / allocation', sort: 'requestedGPU', num: true,
    cell: (w) => `${gpuRequest(w)} / ${gpu(w.allocatedResources && w.allocatedResources.gpu)}`},
  {key: 'node', label: 'Node'},
];

const DEFAULTS = {project: '', phase: '', type: '', q: '', sort: 'createdAt', order: 'desc', page: 1,
  size: 50, id: ''};
const state = {...DEFAULTS, total: null};
let el = {};
let projects = [];
const nodeCache = new Map(); // workload id -> {key, text}
const logState = {id: null, follow: true, text: null, opened: null};
const selected = new Set(); // workload ids ticked for a bulk delete
let bulkRun = null;         // {stop} while a bulk delete runs

function hiddenColumns() {
  try {
    const saved = JSON.parse(localStorage.getItem(COLS_KEY) || 'null');
    if (Array.isArray(saved)) return new Set(saved);
  } catch { /* the defaults */ }
  return new Set(COLUMNS.filter((c) => c.hidden).map((c) => c.key));
}

function podsText(w) {
  const req = w.requestedPods || {};
  return `${w.runningPods ?? 0}/${req.number ?? '-'}`;
}

export function gpuRequest(w) {
  const r = w.workloadRequestedResources || {};
  const g = r.gpu && r.gpu.request;
  if (r.gpuRequestType === 'memory' || (r.gpuMemory && r.gpuMemory.request && (g === undefined || g === null))) {
    return String((r.gpuMemory && r.gpuMemory.request) || g || '-');
  }
  if (g === undefined || g === null) return '-';
  return gpu(g);
}

function applyParams(params) {
  for (const k of Object.keys(DEFAULTS)) {
    const v = params.get(k);
    state[k] = v === null ? DEFAULTS[k] : typeof DEFAULTS[k] === 'number' ? Number(v) || DEFAULTS[k] : v;
  }
  if (!SIZES.includes(state.size)) state.size = DEFAULTS.size;
  if (state.order !== 'asc' && state.order !== 'desc') state.order = 'desc';
  if (el.search && document.activeElement !== el.search) el.search.value = state.q;
}

function filterBy() {
  const f = [];
  if (state.project) f.push(`projectName==${state.project}`);
  if (state.phase) f.push(`phase==${state.phase}`);
  if (state.type) f.push(`type==${state.type}`);
  const s = state.q.replace(/[,]/g, '').trim();
  if (s) f.push(`name=@${s}`);
  return f;
}

// URL parameters that differ from the defaults (page back to 1 on a filter).
function go(ctx, change, push = true) {
  const next = {...state, ...change};
  if (['project', 'phase', 'type', 'q'].some((k) => k in change && change[k] !== state[k])) selected.clear();
  const out = {};
  for (const k of Object.keys(DEFAULTS)) out[k] = next[k] === DEFAULTS[k] ? null : next[k];
  ctx.setParams(out, {push}); // applies them and refreshes
}

function select(id, label, options, value, onchange) {
  return [h('label', {for: id}, label), h('select', {id, onchange: (e) => onchange(e.target.value)},
    h('option', {value: ''}, 'All'),
    options.map((o) => h('option', {value: o, selected: o === value}, o)))];
}

export default {
  id: 'workloads',
  title: 'Workloads',
  applyParams: (params) => applyParams(params),

  mount(root, ctx, params) {
    applyParams(params);
    el.search = h('input', {id: 'wl-search', type: 'search', value: state.q,
      placeholder: 'part of a name', autocomplete: 'off'});
    let timer = null;
    el.search.oninput = () => {
      clearTimeout(timer);
      timer = setTimeout(() => go(ctx, {q: el.search.value, page: 1}, false), 300);
    };
    el.filters = h('form', {class: 'filters', role: 'search', 'aria-label': 'Filter workloads',
      onsubmit: (e) => e.preventDefault()});
    el.pager = h('div', {class: 'pager'});
    el.table = h('div', {class: 'table-wrap', id: 'wl-table-wrap'});
    el.detail = h('aside', {class: 'detail', id: 'wl-detail', 'aria-label': 'Workload details',
      hidden: true});
    el.layout = h('div', {class: 'split'}, h('div', {class: 'split-main'}, el.table), el.detail);
    el.exporting = h('span', {class: 'muted', 'aria-live': 'polite'});
    el.bulk = h('div', {class: 'bulk', id: 'wl-bulk', hidden: !ctx.can.wlWrite});
    el.onKey = (e) => {
      if (e.key !== 'Escape' || !state.id || document.querySelector('dialog[open]')) return;
      e.preventDefault();
      closeDetail(ctx);
    };
    document.addEventListener('keydown', el.onKey);
    fill(root,
      h('div', {class: 'page-head'}, h('h1', {}, 'Workloads'),
        h('div', {class: 'head-actions'}, el.exporting,
          h('button', {type: 'button', id: 'wl-export', onclick: () => exportCsv(ctx)}, 'Export CSV'),
          ctx.can.wlWrite ? h('button', {type: 'button', class: 'primary', id: 'submit-workload',
            onclick: () => submitForm(ctx, projects, state.project,
              (id) => go(ctx, {id}))}, 'Submit workload') : null)),
      el.filters, el.bulk, el.pager, el.layout);
    renderFilters(ctx);
  },

  unmount() {
    if (el.onKey) document.removeEventListener('keydown', el.onKey);
    el = {};
    selected.clear();
    document.body.classList.remove('sheet-open');
    logState.id = null;
    logState.text = null;
  },

  async refresh(ctx, signal) {
    const offset = (state.page - 1) * state.size;
    const q = {filterBy: filterBy(), sortBy: state.sort, sortOrder: state.order, offset, limit: state.size};
    const [list, count, pj] = await Promise.all([
      get(withQuery('/api/v1/workloads', q), {signal}),
      get(withQuery('/api/v1/workloads/count', {filterBy: filterBy()}), {signal}),
      get('/api/v1/org-unit/projects', {signal}).catch((e) => {
        if (e.name === 'AbortError') throw e;
        return {projects};
      }),
    ]);
    projects = (pj.projects || []).slice().sort((a, b) => a.name.localeCompare(b.name));
    state.total = Number(count.count || 0);
    if (state.page > 1 && offset >= state.total) {
      go(ctx, {page: Math.max(1, Math.ceil(state.total / state.size))}, false);
      return;
    }
    const rows = list.workloads || [];
    await fillNodes(rows, signal);
    checkAbort(signal);
    renderFilters(ctx);
    renderTable(ctx, rows);
    renderBulk(ctx);
    renderPager(ctx, rows.length, list.next !== undefined && list.next !== null);
    if (state.id) await renderDetail(ctx, signal);
    else {
      el.detail.hidden = true;
      document.body.classList.remove('sheet-open');
    }
    el.layout.classList.toggle('detail-open', !el.detail.hidden);
  },
};

function renderFilters(ctx) {
  const hidden = hiddenColumns();
  fillIn(el.filters,
    h('span', {class: 'filter'}, select('wl-project', 'Project', projects.map((p) => p.name), state.project,
      (v) => go(ctx, {project: v, page: 1}))),
    h('span', {class: 'filter'}, select('wl-phase', 'Status', PHASES, state.phase,
      (v) => go(ctx, {phase: v, page: 1}))),
    h('span', {class: 'filter'}, select('wl-type', 'Type', TYPES, state.type,
      (v) => go(ctx, {type: v, page: 1}))),
    // the name box is one live element: it goes in once and is kept after
    // (data-keep), since moving a focused input through the DOM blurs it
    // and the next keys typed would be lost
    h('span', {class: 'filter', dataset: {key: 'search', keep: ''}}, h('label', {for: 'wl-search'}, 'Name'),
      el.search.isConnected ? null : el.search),
    h('span', {class: 'filter'}, h('label', {for: 'wl-size'}, 'Rows'),
      h('select', {id: 'wl-size', onchange: (e) => go(ctx, {size: Number(e.target.value), page: 1})},
        SIZES.map((n) => h('option', {value: String(n), selected: n === state.size}, String(n))))),
    h('details', {class: 'columns', id: 'wl-columns', dataset: {key: 'columns'}},
      h('summary', {}, 'Columns'),
      h('div', {class: 'columns-menu', role: 'group', 'aria-label': 'Columns shown'},
        COLUMNS.filter((c) => !c.fixed).map((c) => h('label', {dataset: {key: c.key}},
          h('input', {type: 'checkbox', checked: !hidden.has(c.key), name: `col-${c.key}`,
            onchange: (e) => {
              const now = hiddenColumns();
              if (e.target.checked) now.delete(c.key); else now.add(c.key);
              localStorage.setItem(COLS_KEY, JSON.stringify([...now]));
              ctx.kick();
            }}), ` ${c.label}`)))));
}

// The nodes of the running workloads on this page, from their pods; cached
// per workload until its phase changes.
async function fillNodes(rows, signal) {
  const todo = rows.filter((w) => w.runningPods > 0 || w.phase === 'Running')
    .filter((w) => { const c = nodeCache.get(w.id); return !c || c.key !== w.phaseUpdatedAt; });
  for (let i = 0; i < todo.length; i += 8) {
    await Promise.all(todo.slice(i, i + 8).map(async (w) => {
      try {
        const p = await get(`/api/v1/workloads/${encodeURIComponent(w.id)}/pods`, {signal});
        const names = [...new Set((p.pods || []).map((x) => x.nodeName).filter(Boolean))];
        nodeCache.set(w.id, {key: w.phaseUpdatedAt, text: names.join(', ') || '-'});
      } catch (e) {
        if (e.name === 'AbortError') throw e;
      }
    }));
  }
}

// The header's box that ticks every row of the page.
function pickAll(ctx) {
  return h('input', {type: 'checkbox', class: 'pick', id: 'wl-pick-all', 'aria-label': 'Select every workload on this page',
    onchange: (e) => {
      for (const b of document.querySelectorAll('#workloads-table tbody tr[data-id]')) {
        if (e.target.checked) selected.add(b.dataset.id); else selected.delete(b.dataset.id);
      }
      for (const b of document.querySelectorAll('#workloads-table tbody input.pick')) b.checked = e.target.checked;
      renderBulk(ctx);
    }});
}

function syncPickAll() {
  const all = document.getElementById('wl-pick-all');
  if (!all) return;
  const ids = [...document.querySelectorAll('#workloads-table tbody tr[data-id]')].map((r) => r.dataset.id);
  const n = ids.filter((id) => selected.has(id)).length;
  all.checked = n > 0 && n === ids.length;
  all.indeterminate = n > 0 && n < ids.length;
}

function sortHeader(ctx, c) {
  const cls = [c.opt ? 'opt' : '', c.num ? 'num' : '', c.fixed ? 'sticky' : ''].join(' ').trim() || null;
  if (c.fixed && ctx.can.wlWrite) {
    const inner = sortHeader({...ctx, can: {...ctx.can, wlWrite: false}}, c);
    inner.insertBefore(pickAll(ctx), inner.firstChild);
    return inner;
  }
  if (!c.sort) return h('th', {scope: 'col', class: cls, dataset: {col: c.key}}, c.label);
  const active = state.sort === c.sort;
  const dir = active ? (state.order === 'asc' ? 'ascending' : 'descending') : 'none';
  return h('th', {scope: 'col', 'aria-sort': dir, class: cls, dataset: {col: c.key}},
    h('button', {type: 'button', class: `sort ${active ? state.order : ''}`,
      onclick: () => {
        if (active) go(ctx, {order: state.order === 'asc' ? 'desc' : 'asc', page: 1});
        else go(ctx, {sort: c.sort, order: c.sort === 'createdAt' ? 'desc' : 'asc', page: 1});
      }}, c.label, h('span', {class: 'sort-mark', 'aria-hidden': 'true'},
      active ? (state.order === 'asc' ? ' ▲' : ' ▼') : '')));
}

function cellOf(ctx, c, w) {
  const cls = [c.opt ? 'opt' : '', c.num ? 'num' : ''].join(' ').trim() || null;
  const attrs = {class: cls, dataset: {label: c.label, col: c.key}};
  switch (c.key) {
  case 'name':
    return h('th', {scope: 'row', class: 'sticky', dataset: {label: c.label, col: c.key}},
      ctx.can.wlWrite ? h('input', {type: 'checkbox', class: 'pick', checked: selected.has(w.id),
        'aria-label': `Select ${w.name}`, onchange: (e) => {
          if (e.target.checked) selected.add(w.id); else selected.delete(w.id);
          renderBulk(ctx);
          syncPickAll();
        }}) : null,
      h('a', {href: `#/workloads?${new URLSearchParams({...paramsNow(), id: w.id})}`, class: 'row-link',
        'aria-label': `Show details of ${w.name}`,
        onclick: (e) => { e.preventDefault(); e.stopPropagation(); go(ctx, {id: w.id}); }}, w.name));
  case 'status': {
    const r = w.phase === 'Pending' ? pendingReason(w) : null;
    return h('td', {class: 'status', dataset: {label: c.label, col: c.key},
      title: r ? r.sentence : w.phaseMessage || null}, badge(w.phase),
    r && r.code ? [' ', reasonTag(r.code)] : null,
    r && r.sentence ? h('span', {class: 'reason clip'}, r.sentence) : null);
  }
  case 'created':
    return h('td', attrs, h('time', {datetime: w.createdAt, title: ago(w.createdAt)}, time(w.createdAt)));
  case 'node': {
    const node = nodeCache.get(w.id);
    const text = (node && (w.runningPods > 0 || w.phase === 'Running')) ? node.text : '-';
    return h('td', {...attrs, title: text.length > 14 ? text : null}, text);
  }
  default:
    return h('td', attrs, c.cell(w));
  }
}

function paramsNow() {
  const out = {};
  for (const k of Object.keys(DEFAULTS)) if (state[k] !== DEFAULTS[k] && k !== 'id') out[k] = state[k];
  return out;
}

function renderTable(ctx, rows) {
  if (!rows.length) {
    fillIn(el.table, notice('empty', filterBy().length ? 'No workloads match these filters.'
      : 'No workloads yet.'));
    return;
  }
  const hidden = hiddenColumns();
  const cols = COLUMNS.filter((c) => c.fixed || !hidden.has(c.key));
  const body = rows.map((w) => h('tr', {class: w.id === state.id ? 'selected' : null,
    'aria-selected': w.id === state.id ? 'true' : null,
    dataset: {key: w.name, id: w.id}, onclick: (e) => {
      if (window.getSelection && String(window.getSelection())) return; // selecting text, not opening
      if (e.target.closest('a, button, input')) return;
      go(ctx, {id: w.id});
    }}, cols.map((c) => cellOf(ctx, c, w))));
  fillIn(el.table, h('table', {class: 'data cards-on-phone', id: 'workloads-table', 'aria-label': 'Workloads'},
    h('thead', {}, h('tr', {}, cols.map((c) => sortHeader(ctx, c)))),
    h('tbody', {}, body)));
  syncPickAll();
}

// What the filters say, in words, for the bulk delete's question.
function filterWords() {
  const bits = [];
  if (state.project) bits.push(`project ${state.project}`);
  if (state.phase) bits.push(`status ${state.phase}`);
  if (state.type) bits.push(`type ${state.type}`);
  if (state.q.trim()) bits.push(`a name containing "${state.q.trim()}"`);
  return bits.join(', ');
}

// The bulk bar: delete the ticked rows, or every workload matching the
// filters (all pages), after a question that says how many.
function renderBulk(ctx) {
  if (!el.bulk || !ctx.can.wlWrite) return;
  const total = state.total ?? 0;
  const words = filterWords();
  const busy = !!bulkRun;
  fillIn(el.bulk,
    h('span', {class: 'bulk-count', id: 'wl-selected'}, selected.size ? `${num(selected.size)} selected` : 'None selected'),
    h('button', {type: 'button', class: 'danger small', id: 'wl-delete-selected', disabled: busy || !selected.size,
      onclick: () => bulkDelete(ctx, 'selected')}, selected.size ? `Delete ${num(selected.size)} selected` : 'Delete selected'),
    selected.size ? h('button', {type: 'button', class: 'small', id: 'wl-clear-selected', disabled: busy,
      onclick: () => { selected.clear(); renderBulk(ctx); ctx.kick(); }}, 'Clear the selection') : null,
    h('button', {type: 'button', class: 'danger small', id: 'wl-delete-matching', disabled: busy || !total,
      title: words ? `every workload with ${words}` : 'every workload you may see'},
    `Delete all ${num(total)} ${words ? 'matching' : 'workloads'}`),
    busy ? h('button', {type: 'button', class: 'small', id: 'wl-bulk-stop', onclick: () => { bulkRun.stop = true; }}, 'Stop') : null,
    h('span', {class: 'muted', id: 'wl-bulk-status', 'aria-live': 'polite', dataset: {key: 'status'}},
      el.bulkText || ''));
  el.bulk.querySelector('#wl-delete-matching').onclick = () => bulkDelete(ctx, 'matching');
}

// Deletes the ticked workloads, or every one matching the filters: the
// ids are read first (500 a page), then deleted 500 at a time with
// POST /api/v1/workloads/batch {action: delete}. Stop ends it between
// two batches.
async function bulkDelete(ctx, which) {
  if (bulkRun) return;
  const words = filterWords();
  const n = which === 'selected' ? selected.size : state.total ?? 0;
  if (!n) return;
  const what = which === 'selected' ? `the ${num(n)} selected workload${n === 1 ? '' : 's'}`
    : `all ${num(n)} workload${n === 1 ? '' : 's'}${words ? ` with ${words}` : ' you may see'}`;
  if (!await confirmDialog(`Delete ${what}? Their pods stop, and this cannot be undone.`,
    `Delete ${num(n)} workload${n === 1 ? '' : 's'}`)) return;
  const run = {stop: false};
  bulkRun = run;
  const say = (t) => {
    el.bulkText = t;
    const box = document.getElementById('wl-bulk-status');
    if (box) box.textContent = t;
  };
  let ids = [];
  let done = 0;
  const failed = [];
  renderBulk(ctx);
  try {
    if (which === 'selected') ids = [...selected];
    else {
      for (let offset = 0; !run.stop; offset += 500) {
        say(`Finding the workloads… ${num(ids.length)} of ${num(n)}`);
        const r = await get(withQuery('/api/v1/workloads', {filterBy: filterBy(), sortBy: 'createdAt',
          sortOrder: 'asc', offset, limit: 500}));
        ids.push(...(r.workloads || []).filter((w) => w.phase !== 'Deleting').map((w) => w.id));
        if (r.next === undefined || r.next === null || !(r.workloads || []).length) break;
      }
    }
    for (let i = 0; i < ids.length && !run.stop; i += 500) {
      say(`Deleting… ${num(done)} of ${num(ids.length)}`);
      const part = ids.slice(i, i + 500);
      const r = await api('POST', '/api/v1/workloads/batch', {action: 'delete', ids: part});
      const ok = (r && r.succeeded) || [];
      done += ok.length;
      for (const id of ok) selected.delete(id);
      failed.push(...((r && r.failed) || []));
    }
    const missing = failed.filter((f) => Number(f.status || f.code) === 404).length;
    const left = failed.length - missing;
    say('');
    ctx.flash(`Deleted ${num(done)} workload${done === 1 ? '' : 's'}` +
      (run.stop ? ' (stopped before the end)' : '') +
      (missing ? `; ${num(missing)} no longer existed` : '') + '.');
    if (left) {
      const first = failed.find((f) => Number(f.status || f.code) !== 404);
      ctx.showError(new Error(`${num(left)} workload${left === 1 ? '' : 's'} could not be deleted: ` +
        `${(first && (first.message || first.details || first.error)) || 'refused'}.`));
    }
  } catch (e) {
    say('');
    ctx.showError(e);
  } finally {
    bulkRun = null;
    if (state.id && !selected.size && which === 'matching') go(ctx, {id: ''}, false);
    ctx.kick();
  }
}

function renderPager(ctx, n, hasNext) {
  const total = state.total ?? 0;
  const offset = (state.page - 1) * state.size;
  const from = n ? offset + 1 : 0;
  const pages = Math.max(1, Math.ceil(total / state.size));
  fillIn(el.pager,
    h('button', {type: 'button', id: 'wl-prev', disabled: state.page <= 1,
      onclick: () => go(ctx, {page: state.page - 1})}, '‹ Previous'),
    h('span', {class: 'range', id: 'wl-range', 'aria-live': 'polite'},
      `${from.toLocaleString('en-US')}–${(offset + n).toLocaleString('en-US')} of ` +
      `${total.toLocaleString('en-US')} · page ${state.page} of ${pages}`),
    h('button', {type: 'button', id: 'wl-next', disabled: !hasNext,
      onclick: () => go(ctx, {page: state.page + 1})}, 'Next ›'));
}

// Every row matching the filters, fetched 500 at a time, as CSV.
async function exportCsv(ctx) {
  const btn = document.getElementById('wl-export');
  btn.disabled = true;
  const rows = [];
  try {
    for (let offset = 0; ; offset += 500) {
      fill(el.exporting, `Exporting ${rows.length.toLocaleString('en-US')}…`);
      const r = await get(withQuery('/api/v1/workloads', {filterBy: filterBy(), sortBy: state.sort,
        sortOrder: state.order, offset, limit: 500}));
      rows.push(...(r.workloads || []));
      if (r.next === undefined || r.next === null || !(r.workloads || []).length) break;
    }
    const header = ['Workload', 'Id', 'Type', 'Preemptible', 'Status', 'Pending reason', 'Reason code',
      'Project', 'Department', 'Created by', 'Running pods', 'Requested pods', 'Creation time',
      'GPU request', 'GPU allocation'];
    download('workloads.csv', csv(header, rows.map((w) => {
      const r = w.phase === 'Pending' ? pendingReason(w) : {sentence: '', code: ''};
      return [w.name, w.id, w.type, w.preemptible ? 'Yes' : 'No', w.phase, r.sentence, r.code,
        w.projectName, w.departmentName || '', w.submittedBy || '', w.runningPods ?? 0,
        (w.requestedPods || {}).number ?? '', w.createdAt, gpuRequest(w),
        (w.allocatedResources && w.allocatedResources.gpu) ?? 0];
    })));
    fill(el.exporting, `Exported ${rows.length.toLocaleString('en-US')} workloads.`);
  } catch (e) {
    ctx.showError(e);
    fill(el.exporting);
  } finally {
    btn.disabled = false;
  }
}

// ---- the detail pane ----

function closeDetail(ctx) {
  go(ctx, {id: ''});
  const row = document.querySelector(`#workloads-table tr.selected .row-link`);
  if (row) row.focus();
}

async function logsOf(id, signal) {
  try {
    const r = await get(withQuery(`/api/v1/workloads/${encodeURIComponent(id)}/logs`,
      {tailLines: 500}), {signal});
    if (r === null) return {text: ''};
    if (typeof r.raw === 'string') return {text: r.raw};
    if (Array.isArray(r.logs)) return {text: r.logs.map((l) => (typeof l === 'string' ? l : l.line || l.message || JSON.stringify(l))).join('\n')};
    if (typeof r.logs === 'string') return {text: r.logs};
    return {text: JSON.stringify(r, null, 2)};
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    return {error: e};
  }
}

async function renderDetail(ctx, signal) {
  const id = state.id;
  const enc = encodeURIComponent(id);
  let w;
  try {
    w = await get(`/api/v1/workloads/${enc}`, {signal});
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    showDetail();
    fillIn(el.detail, detailHead(ctx, 'Workload'),
      notice('error', e.status === 404 ? 'This workload no longer exists.' : errorText(e)));
    return;
  }
  const [ev, pods, logs] = await Promise.all([
    get(withQuery(`/api/v1/workloads/${enc}/events`, {sortOrder: 'desc', limit: 50}), {signal})
      .catch((e) => { if (e.name === 'AbortError') throw e; return {error: e}; }),
    get(`/api/v1/workloads/${enc}/pods`, {signal})
      .catch((e) => { if (e.name === 'AbortError') throw e; return {error: e}; }),
    logsOf(id, signal),
  ]);
  checkAbort(signal);
  if (state.id !== id || !el.detail) return;
  if (logState.opened !== id) { // a workload opened: its logs at the newest line, following
    logState.opened = id;
    logState.follow = true;
  }
  const typePath = PATH_OF_TYPE[w.type] || '';
  const act = async (verb, method, path, done) => {
    try {
      await api(method, path);
      ctx.flash(`${w.name} ${done}.`);
      if (verb === 'delete') go(ctx, {id: ''});
    } catch (e) {
      ctx.showError(e);
    }
    ctx.kick();
  };
  const actions = [];
  if (ctx.can.wlWrite) {
    const sup = !w.actionsSupport || w.actionsSupport.suspend !== false;
    if (sup && typePath !== 'inferences' && !['Stopped', 'Stopping', 'Deleting', 'Completed', 'Failed'].includes(w.phase)) {
      actions.push(h('button', {type: 'button', id: 'wl-suspend', onclick: () =>
        act('suspend', 'POST', `/api/v1/workloads/${enc}/suspend`, 'is being suspended')}, 'Suspend'));
    }
    if (w.phase === 'Stopped') {
      actions.push(h('button', {type: 'button', id: 'wl-resume', onclick: () =>
        act('resume', 'POST', `/api/v1/workloads/${enc}/resume`, 'is being resumed')}, 'Resume'));
    }
    if (w.phase !== 'Deleting') {
      actions.push(h('button', {type: 'button', class: 'danger', id: 'wl-delete', onclick: async () => {
        if (await confirmDialog(`Delete workload ${w.name} of ${w.projectName}? Its pods stop.`, 'Delete')) {
          act('delete', 'DELETE', `/api/v1/workloads/${enc}`, 'is being deleted');
        }
      }}, 'Delete'));
    }
  }
  const req = w.requestedPods || {};
  const reason = pendingReason(w);
  const facts = [
    ['Status', badge(w.phase)],
    ['Why', w.phase === 'Pending' || reason.sentence ? reasonView(w) || '-' : '-'],
    ['Type', w.type], ['Project', w.projectName], ['Department', w.departmentName || '-'],
    ['Priority', `${w.priorityClassName || '-'} (${w.priority ?? '-'})`],
    ['Preemptible', w.preemptible ? 'Yes' : 'No'],
    ['Pods running / requested', podsText(w)],
    ['GPU request / allocation', `${gpuRequest(w)} / ${gpu(w.allocatedResources && w.allocatedResources.gpu)}`],
    ['Node pools asked', (w.requestedNodePools || []).join(', ') || 'the project\'s default'],
    ['Image', (w.images || []).join(', ') || '-'],
    ['Connect', (w.urls || []).length
      ? h('span', {id: 'wl-connect'}, w.urls.map((u, i) => [i ? ', ' : '',
        h('a', {href: u, target: '_blank', rel: 'noopener', class: 'connect'}, `Connect ${u}`)]))
      : '-'],
    ['Created', `${time(w.createdAt)} by ${w.submittedBy || '-'}`],
    ['Phase since', `${time(w.phaseUpdatedAt)} (${ago(w.phaseUpdatedAt)})`],
    ['Id', h('code', {}, w.id)],
  ];
  showDetail();
  fillIn(el.detail,
    detailHead(ctx, w.name),
    actions.length ? h('div', {class: 'actions'}, actions) : null,
    h('dl', {class: 'facts', id: 'wl-facts'}, facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    h('h3', {}, 'Pods'),
    pods.error ? notice('error', errorText(pods.error)) : h('div', {class: 'table-wrap'}, podsTable(pods.pods || [])),
    h('h3', {}, 'Events'),
    ev.error ? notice('error', errorText(ev.error)) : eventsList(ev.events || []),
    h('div', {class: 'logs-head', dataset: {key: 'logs-head'}}, h('h3', {}, 'Logs'),
      h('label', {class: 'inline'}, h('input', {type: 'checkbox', id: 'wl-follow', checked: logState.follow,
        onchange: (e) => {
          logState.follow = e.target.checked;
          const pre = document.getElementById('wl-logs');
          if (pre && logState.follow) pre.scrollTop = pre.scrollHeight;
        }}), ' Follow the newest line')),
    logsView(id, logs));
  updateLogs(id, logs);
}

function detailHead(ctx, title) {
  return h('div', {class: 'detail-head', dataset: {key: 'head'}}, h('h2', {id: 'wl-detail-name'}, title),
    h('button', {type: 'button', class: 'small', id: 'wl-close', 'aria-label': 'Close the details',
      onclick: () => closeDetail(ctx)}, 'Close'));
}

function showDetail() {
  const wasHidden = el.detail.hidden;
  el.detail.hidden = false;
  document.body.classList.add('sheet-open');
  if (wasHidden && window.matchMedia('(max-width: 700px)').matches) el.detail.scrollTop = 0;
}

// The log view: a <pre> kept across refreshes (data-keep) whose text is
// replaced only when it changed, keeping its scroll position unless it
// follows the newest line.
function logsView(id, logs) {
  if (logs.error) {
    return notice(logs.error.status === 404 ? 'info' : 'error', logs.error.status === 404
      ? `No logs: ${logs.error.details || logs.error.message}` : errorText(logs.error));
  }
  if (!logs.text) return notice('empty', 'The pods have written nothing (pods on simulated nodes never do).');
  return h('pre', {class: 'logs', id: 'wl-logs', tabindex: '0', dataset: {keep: '', key: `logs-${id}`},
    'aria-label': 'Logs'});
}

function updateLogs(id, logs) {
  const pre = document.getElementById('wl-logs');
  if (!pre || logs.error || !logs.text) {
    logState.text = null;
    return;
  }
  if (!pre.onscroll) {
    pre.onscroll = () => {
      const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      if (!atEnd && logState.follow && !pre.dataset.programmatic) {
        logState.follow = false;
        const box = document.getElementById('wl-follow');
        if (box) box.checked = false;
      }
      delete pre.dataset.programmatic;
    };
  }
  if (logState.id === id && logState.text === logs.text) return;
  const top = pre.scrollTop;
  pre.textContent = logs.text;
  logState.id = id;
  logState.text = logs.text;
  if (logState.follow) {
    pre.dataset.programmatic = '1';
    pre.scrollTop = pre.scrollHeight;
  } else {
    pre.scrollTop = top;
  }
}

function podsTable(pods) {
  if (!pods.length) return notice('empty', 'No pods.');
  const devs = (p) => (Array.isArray(p.gpuDevices) && p.gpuDevices.length ? p.gpuDevices.join(', ') : '-');
  // four narrow columns that wrap: the pane is 420 px wide at most
  return h('table', {class: 'data compact wrap', 'aria-label': 'Pods', id: 'wl-pods'},
    h('thead', {}, h('tr', {}, ['Pod', 'Node (pool)', 'GPU devices', 'GPU use'].map((c) =>
      h('th', {scope: 'col'}, c)))),
    h('tbody', {}, pods.map((p) => h('tr', {dataset: {key: p.id || p.name}},
      h('td', {class: 'pod-name'}, p.name || p.id),
      h('td', {}, p.nodeName || '-', p.currentNodePool ? h('small', {class: 'muted'}, ` (${p.currentNodePool})`) : null),
      h('td', {}, devs(p)),
      h('td', {}, gpuUse(p.gpuUsage))))));
}

// What the pod's agent measured of its GPUs: utilisation and memory, and
// any device used without having been given it.
function gpuUse(u) {
  if (!u) return h('span', {class: 'muted', title: 'no figures: a simulated node, or no agent measurement'}, 'not measured');
  const parts = [];
  if (u.utilization !== null && u.utilization !== undefined) parts.push(`${Math.round(u.utilization)}%`);
  if (u.memoryUsedBytes !== null && u.memoryUsedBytes !== undefined) {
    parts.push(`${(u.memoryUsedBytes / 1073741824).toFixed(1)} GiB`);
  }
  const outside = (u.devices || []).filter((d) => d.allocated === false).map((d) => d.index);
  return h('span', {}, parts.join(' · ') || '-',
    outside.length ? h('small', {class: 'reason warn-text'}, ` also uses GPU ${outside.join(', ')} (not given)`) : null);
}

function eventsList(events) {
  if (!events.length) return notice('empty', 'No events.');
  return h('ul', {class: 'events', id: 'wl-events'}, events.map((e) => h('li', {dataset: {key: e.id}},
    h('div', {class: 'event-head'}, badge(e.reason, e.type === 'Warning' ? 'warn' : 'done'), ' ',
      h('time', {datetime: e.createdAt, title: time(e.createdAt)}, `${time(e.createdAt)} · ${ago(e.createdAt)}`)),
    h('div', {class: 'event-msg'}, e.message))));
}
