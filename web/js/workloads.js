// workloads.js: the Workloads page: the table with the UI's columns, its
// filters (project, status, type, name), sort and server-side pagination
// (only one page of rows is ever fetched or drawn, so 10,000 workloads cost
// what 50 do); the detail pane (phase and reason, pods with their measured
// GPU use, events, logs, suspend / resume / delete); and the submission form
// for trainings and workspaces.

import {api, get, withQuery, currentSession, checkAbort} from './api.js';
import {h, fill, gpu, time, ago, badge, notice, errorText, formDialog, confirmDialog} from './dom.js';

const PHASES = ['Creating', 'Pending', 'Initializing', 'Running', 'Stopping', 'Stopped',
  'Resuming', 'Degraded', 'Deleting', 'Completed', 'Failed'];
const TYPES = ['Training', 'Workspace', 'Distributed', 'Inference'];
const PRIORITIES = ['very-low', 'low', 'medium-low', 'medium', 'medium-high', 'high', 'very-high',
  'train', 'build', 'interactive-preemptible', 'inference'];
const PATH_OF_TYPE = {Training: 'trainings', Workspace: 'workspaces', Distributed: 'distributed',
  Inference: 'inferences'};

// [header, sortBy field or null, hidden while the detail pane is open]
const COLUMNS = [
  ['Workload', 'name'], ['Type', 'type', true], ['Preemptible', null, true], ['Status', 'phase'],
  ['Project', 'projectName'], ['Created by', 'submittedBy', true], ['Running/Requested pods', null],
  ['Creation time', 'createdAt'], ['GPU request / allocation', 'allocatedGPU'], ['Node', null],
];
const OPT = 'opt';

const state = {
  project: '', phase: '', type: '', search: '',
  sortBy: 'createdAt', sortOrder: 'desc', offset: 0, limit: 50,
  selected: null, total: null,
};
let el = {};
let projects = [];
const nodeCache = new Map(); // workload id -> {key, text}

function filterBy() {
  const f = [];
  if (state.project) f.push(`projectName==${state.project}`);
  if (state.phase) f.push(`phase==${state.phase}`);
  if (state.type) f.push(`type==${state.type}`);
  const s = state.search.replace(/[,]/g, '').trim();
  if (s) f.push(`name=@${s}`);
  return f;
}

function select(id, label, options, value, onchange) {
  const s = h('select', {id}, h('option', {value: ''}, 'All'),
    options.map((o) => h('option', {value: o, selected: o === value}, o)));
  s.addEventListener('change', () => onchange(s.value));
  return [h('label', {for: id}, label), s];
}

export default {
  id: 'workloads',
  title: 'Workloads',

  mount(root, ctx) {
    const params = new URLSearchParams((location.hash.split('?')[1]) || '');
    if (params.get('id')) state.selected = params.get('id');
    const reset = () => { state.offset = 0; ctx.kick(); };
    el.projectSel = select('wl-project', 'Project', [], state.project, (v) => { state.project = v; reset(); });
    const search = h('input', {id: 'wl-search', type: 'search', value: state.search,
      placeholder: 'part of a name', autocomplete: 'off'});
    let timer = null;
    search.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => { state.search = search.value; reset(); }, 300);
    });
    const size = h('select', {id: 'wl-size'}, [25, 50, 100, 200].map((n) =>
      h('option', {value: String(n), selected: n === state.limit}, String(n))));
    size.addEventListener('change', () => { state.limit = Number(size.value); reset(); });
    el.prev = h('button', {type: 'button', id: 'wl-prev', onclick: () => {
      state.offset = Math.max(0, state.offset - state.limit); ctx.kick();
    }}, '‹ Previous');
    el.next = h('button', {type: 'button', id: 'wl-next', onclick: () => {
      state.offset += state.limit; ctx.kick();
    }}, 'Next ›');
    el.range = h('span', {class: 'range', id: 'wl-range', 'aria-live': 'polite'});
    el.status = h('div');
    el.table = h('div', {class: 'table-wrap'});
    el.detail = h('aside', {class: 'detail', id: 'wl-detail', 'aria-label': 'Workload details',
      hidden: true});
    el.layout = h('div', {class: 'split'}, h('div', {class: 'split-main'}, el.table), el.detail);
    fill(root,
      h('div', {class: 'page-head'}, h('h1', {}, 'Workloads'),
        ctx.can.wlWrite ? h('button', {type: 'button', class: 'primary', id: 'submit-workload',
          onclick: () => submitForm(ctx)}, 'Submit workload') : null),
      h('form', {class: 'filters', role: 'search', 'aria-label': 'Filter workloads',
        onsubmit: (e) => e.preventDefault()},
      h('span', {class: 'filter'}, el.projectSel),
      h('span', {class: 'filter'}, select('wl-phase', 'Status', PHASES, state.phase,
        (v) => { state.phase = v; reset(); })),
      h('span', {class: 'filter'}, select('wl-type', 'Type', TYPES, state.type,
        (v) => { state.type = v; reset(); })),
      h('span', {class: 'filter'}, h('label', {for: 'wl-search'}, 'Name'), search),
      h('span', {class: 'filter'}, h('label', {for: 'wl-size'}, 'Rows'), size)),
      h('div', {class: 'pager'}, el.prev, el.range, el.next),
      el.status, el.layout);
  },

  unmount() {
    el = {};
  },

  async refresh(ctx, signal) {
    const q = {filterBy: filterBy(), sortBy: state.sortBy, sortOrder: state.sortOrder,
      offset: state.offset, limit: state.limit};
    const [list, count, pj] = await Promise.all([
      get(withQuery('/api/v1/workloads', q), {signal}),
      get(withQuery('/api/v1/workloads/count', {filterBy: filterBy()}), {signal}),
      get('/api/v1/org-unit/projects', {signal}).catch((e) => {
        if (e.name === 'AbortError') throw e;
        return {projects};
      }),
    ]);
    projects = (pj.projects || []).slice().sort((a, b) => a.name.localeCompare(b.name));
    updateProjectOptions();
    state.total = count.count;
    if (state.offset > 0 && state.offset >= state.total) {
      state.offset = Math.max(0, Math.floor((state.total - 1) / state.limit) * state.limit);
      return this.refresh(ctx, signal);
    }
    const rows = list.workloads || [];
    await fillNodes(rows, signal);
    renderTable(ctx, rows);
    renderPager(rows.length, list.next !== undefined);
    if (state.selected) await renderDetail(ctx, signal);
    else el.detail.hidden = true;
    el.layout.classList.toggle('detail-open', !el.detail.hidden);
  },
};

function updateProjectOptions() {
  const sel = el.projectSel[1];
  const have = [...sel.options].slice(1).map((o) => o.value).join('\n');
  const want = projects.map((p) => p.name);
  if (have === want.join('\n')) return;
  fill(sel, h('option', {value: ''}, 'All'),
    want.map((n) => h('option', {value: n, selected: n === state.project}, n)));
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

// Why a workload is where it is: phaseReason holds only Run:ai's two
// reasons (NonPreemptibleOverQuota, OverLimit); the others are the reason
// of its condition.
function reasonOf(w) {
  return w.phaseReason || (w.conditions && w.conditions[0] && w.conditions[0].reason) || '';
}

function gpuRequest(w) {
  const r = w.workloadRequestedResources || {};
  const g = r.gpu && r.gpu.request;
  if (g === undefined || g === null) return '-';
  if (r.gpuRequestType === 'memory') return String(g);
  return gpu(g);
}

function sortHeader(ctx, label, field, opt) {
  if (!field) return h('th', {scope: 'col', class: opt ? OPT : null}, label);
  const active = state.sortBy === field;
  const dir = active ? (state.sortOrder === 'asc' ? 'ascending' : 'descending') : 'none';
  return h('th', {scope: 'col', 'aria-sort': dir, class: opt ? OPT : null},
    h('button', {type: 'button', class: `sort ${active ? state.sortOrder : ''}`,
      onclick: () => {
        if (state.sortBy === field) state.sortOrder = state.sortOrder === 'asc' ? 'desc' : 'asc';
        else { state.sortBy = field; state.sortOrder = field === 'createdAt' ? 'desc' : 'asc'; }
        state.offset = 0;
        ctx.kick();
      }}, label, h('span', {class: 'sort-mark', 'aria-hidden': 'true'},
      active ? (state.sortOrder === 'asc' ? ' ▲' : ' ▼') : '')));
}

function renderTable(ctx, rows) {
  if (!rows.length) {
    fill(el.table, notice('empty', filterBy().length ? 'No workloads match these filters.'
      : 'No workloads yet.'));
    return;
  }
  const body = rows.map((w) => {
    const req = w.requestedPods || {};
    const node = nodeCache.get(w.id);
    const open = () => { state.selected = w.id; ctx.kick(); };
    const tr = h('tr', {class: w.id === state.selected ? 'selected' : null,
      dataset: {key: w.name, id: w.id}, onclick: open},
    h('th', {scope: 'row'}, h('button', {type: 'button', class: 'link',
      'aria-label': `Show details of ${w.name}`, onclick: (e) => { e.stopPropagation(); open(); }},
    w.name)),
    h('td', {class: OPT}, w.type),
    h('td', {class: OPT}, w.preemptible ? 'Yes' : 'No'),
    h('td', {class: 'status', title: w.phaseMessage || null}, badge(w.phase),
      w.phase === 'Pending' && reasonOf(w) ? h('small', {class: 'reason'}, reasonOf(w)) : null),
    h('td', {}, w.projectName),
    h('td', {class: OPT}, w.submittedBy || '-'),
    h('td', {class: 'num'}, `${w.runningPods ?? 0}/${req.number ?? '-'}`),
    h('td', {}, h('time', {datetime: w.createdAt}, time(w.createdAt))),
    h('td', {class: 'num'}, `${gpuRequest(w)} / ${gpu(w.allocatedResources && w.allocatedResources.gpu)}`),
    h('td', {}, (node && (w.runningPods > 0 || w.phase === 'Running')) ? node.text : '-'));
    return tr;
  });
  fill(el.table, h('table', {class: 'data', id: 'workloads-table', 'aria-label': 'Workloads'},
    h('thead', {}, h('tr', {}, COLUMNS.map(([l, f, o]) => sortHeader(ctx, l, f, o)))),
    h('tbody', {}, body)));
}

function renderPager(n, hasNext) {
  const total = state.total ?? 0;
  const from = n ? state.offset + 1 : 0;
  const to = state.offset + n;
  const pages = Math.max(1, Math.ceil(total / state.limit));
  const page = Math.floor(state.offset / state.limit) + 1;
  fill(el.range, `${from.toLocaleString()}–${to.toLocaleString()} of ${total.toLocaleString()}` +
    ` · page ${page} of ${pages}`);
  el.prev.disabled = state.offset === 0;
  el.next.disabled = !hasNext;
}

// ---- the detail pane ----

function closeDetail(ctx) {
  state.selected = null;
  el.detail.hidden = true;
  el.layout.classList.remove('detail-open');
  if (location.hash.includes('?')) history.replaceState(null, '', '#/workloads');
  ctx.kick();
}

async function logsOf(id, signal) {
  try {
    const r = await get(withQuery(`/api/v1/workloads/${encodeURIComponent(id)}/logs`,
      {tailLines: 200}), {signal});
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
  const id = state.selected;
  const enc = encodeURIComponent(id);
  let w;
  try {
    w = await get(`/api/v1/workloads/${enc}`, {signal});
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    el.detail.hidden = false;
    fill(el.detail, h('div', {class: 'detail-head'}, h('h2', {}, 'Workload'),
      h('button', {type: 'button', class: 'small', onclick: () => closeDetail(ctx)}, 'Close')),
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
  if (state.selected !== id || !el.detail) return;
  const typePath = PATH_OF_TYPE[w.type] || '';
  const act = async (verb, method, path, done) => {
    try {
      await api(method, path);
      ctx.flash(`${w.name} ${done}.`);
      if (verb === 'delete') state.selected = null;
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
  const facts = [
    ['Status', badge(w.phase)],
    ['Reason', reasonOf(w) || '-'],
    ['Message', w.phaseMessage || '-'],
    ['Type', w.type], ['Project', w.projectName], ['Department', w.departmentName || '-'],
    ['Priority', `${w.priorityClassName || '-'} (${w.priority ?? '-'})`],
    ['Preemptible', w.preemptible ? 'Yes' : 'No'],
    ['Pods running / requested', `${w.runningPods ?? 0}/${req.number ?? '-'}`],
    ['GPU request / allocation', `${gpuRequest(w)} / ${gpu(w.allocatedResources && w.allocatedResources.gpu)}`],
    ['Image', (w.images || []).join(', ') || '-'],
    ['Created', `${time(w.createdAt)} by ${w.submittedBy || '-'}`],
    ['Phase since', time(w.phaseUpdatedAt)],
  ];
  el.detail.hidden = false;
  fill(el.detail,
    h('div', {class: 'detail-head'}, h('h2', {id: 'wl-detail-name'}, w.name),
      h('button', {type: 'button', class: 'small', 'aria-label': 'Close the details',
        onclick: () => closeDetail(ctx)}, 'Close')),
    actions.length ? h('div', {class: 'actions'}, actions) : null,
    h('dl', {class: 'facts'}, facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    h('h3', {}, 'Pods'),
    pods.error ? notice('error', errorText(pods.error)) : podsTable(pods.pods || []),
    h('h3', {}, 'Events'),
    ev.error ? notice('error', errorText(ev.error)) : eventsList(ev.events || []),
    h('h3', {}, 'Logs'),
    logs.error ? notice('info', logs.error.status === 404
      ? `No logs: ${logs.error.method} ${logs.error.path} answered 404 ${logs.error.message}.`
      : errorText(logs.error))
      : h('pre', {class: 'logs', tabindex: '0', 'aria-label': 'Logs'}, logs.text || '(empty)'));
}

// What the pod's agent measures of its GPUs: "63% · 4096 MiB", with the
// devices it uses without having been given them flagged.
function gpuUse(u) {
  if (!u) return h('span', {class: 'muted', title: 'no figures: a simulated node, declared GPUs or not reported yet'}, '-');
  const mem = u.memoryUsedBytes === null || u.memoryUsedBytes === undefined
    ? 'memory unknown' : `${Math.round(u.memoryUsedBytes / 1048576)} MiB`;
  const outside = (u.devices || []).filter((d) => !d.allocated).map((d) => d.index);
  const util = u.utilization === null || u.utilization === undefined
    ? 'utilisation unknown' : `${Math.round(u.utilization)}%`;
  return h('span', {title: `as of ${time(u.updatedAt)}`}, `${util} · ${mem}`,
    outside.length ? [' ', badge(`also uses GPU ${outside.join(', ')}`, 'warn')] : null);
}

function podsTable(pods) {
  if (!pods.length) return notice('empty', 'No pods.');
  return h('table', {class: 'data compact', 'aria-label': 'Pods'},
    h('thead', {}, h('tr', {}, ['Pod', 'Phase', 'Node', 'GPU devices', 'GPU use'].map((c) => h('th', {scope: 'col'}, c)))),
    h('tbody', {}, pods.map((p) => h('tr', {},
      h('td', {}, p.name), h('td', {}, p.k8sPhase || '-'), h('td', {}, p.nodeName || '-'),
      h('td', {}, (p.gpuDevices || []).join(', ') || '-'), h('td', {}, gpuUse(p.gpuUsage))))));
}

function eventsList(events) {
  if (!events.length) return notice('empty', 'No events.');
  return h('ul', {class: 'events', id: 'wl-events'}, events.map((e) => h('li', {},
    h('div', {class: 'event-head'}, badge(e.reason, e.type === 'Warning' ? 'warn' : 'done'), ' ',
      h('time', {datetime: e.createdAt, title: time(e.createdAt)}, `${time(e.createdAt)} · ${ago(e.createdAt)}`)),
    h('div', {class: 'event-msg'}, e.message))));
}

// ---- submission ----

// The creation request of the form's values.
function submission(ctx, v) {
  const compute = {gpuDevicesRequest: Number(v.gpus || 0)};
  if (v.portion !== '' && v.portion !== undefined) {
    compute.gpuRequestType = 'portion';
    compute.gpuPortionRequest = Number(v.portion);
    if (!compute.gpuDevicesRequest) compute.gpuDevicesRequest = 1;
  }
  const spec = {image: v.image.trim(), compute};
  if (v.command.trim()) spec.command = v.command.trim();
  if (v.args.trim()) spec.args = v.args.trim();
  if (v.priority) spec.priorityClass = v.priority;
  if (v.preemptibility) spec.preemptibility = v.preemptibility;
  return {name: v.name.trim(), projectId: v.project, clusterId: ctx.clusterId, spec};
}

// What the next scheduling turn would do with the form's workload
// (?dryRun=true: nothing is submitted), in one sentence; '' until it has
// a name and an image.
async function dryRun(ctx, v, signal) {
  if (!v.name.trim() || !v.image.trim()) return '';
  const a = await api('POST', `/api/v1/workloads/${PATH_OF_TYPE[v.type]}?dryRun=true`,
    submission(ctx, v), {signal});
  if (!a.wouldRun) return `Would wait: ${a.pendingMessage || a.pendingReason}`;
  const nodes = [...new Set(a.pods.map((p) => p.nodeName))].join(', ');
  const victims = a.evictions.map((e) => `${e.description} (${e.reason})`);
  return `Would start now on ${nodes} in node pool ${a.nodePool}` +
    (victims.length ? `; it would stop ${victims.join(', ')}` : '') + '.';
}

function submitForm(ctx) {
  if (!projects.length) {
    ctx.showError(new Error('There is no project you can submit to.'));
    return;
  }
  formDialog({
    title: 'Submit a workload',
    submitLabel: 'Submit',
    fields: [
      {name: 'type', label: 'Type', type: 'select', value: 'Training',
        options: [{value: 'Training', label: 'Training'}, {value: 'Workspace', label: 'Workspace'}]},
      {name: 'name', label: 'Name', required: true, placeholder: 'train-1',
        hint: 'lowercase letters, digits and -; unique in the project'},
      {name: 'project', label: 'Project', type: 'select', value: (projects.find((p) => p.name === state.project) || projects[0]).id,
        options: projects.map((p) => ({value: p.id, label: p.name}))},
      {name: 'image', label: 'Image', required: true, value: 'runai.jfrog.io/demo/quickstart'},
      {name: 'gpus', label: 'GPU devices', type: 'number', min: 0, max: 64, step: 1, value: 1},
      {name: 'portion', label: 'GPU portion per device', type: 'number', min: 0, max: 1,
        step: 'any', placeholder: 'whole devices', hint: 'e.g. 0.5 for half a GPU; empty for whole GPUs'},
      {name: 'command', label: 'Command', placeholder: 'python'},
      {name: 'args', label: 'Arguments', placeholder: 'train.py --epochs 3'},
      {name: 'priority', label: 'Priority', type: 'select', value: '',
        options: [{value: '', label: 'Default for the type'}, ...PRIORITIES.map((p) => ({value: p, label: p}))]},
      {name: 'preemptibility', label: 'Preemptibility', type: 'select', value: '',
        options: [{value: '', label: 'Default (from the priority)'},
          {value: 'preemptible', label: 'Preemptible (may use idle GPUs beyond quota)'},
          {value: 'non-preemptible', label: 'Non-preemptible (within quota only)'}]},
    ],
    preview: (v, signal) => dryRun(ctx, v, signal),
    onSubmit: async (v) => {
      const body = submission(ctx, v);
      const res = await api('POST', `/api/v1/workloads/${PATH_OF_TYPE[v.type]}`, body);
      ctx.flash(`Submitted ${v.type.toLowerCase()} ${body.name} as ${currentSession().user}.`);
      state.selected = (res && (res.workloadId || res.id)) || null;
      ctx.kick();
    },
  });
}
