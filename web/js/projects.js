// projects.js: the Projects page: projects and departments as tables
// (quota, allocated, fair share, allocation ratio, over quota, pending
// workloads, and whether its department backs its quota: "quota backed",
// with a warning naming each pool where it does not) for all node pools or
// one (a pool selector; "over quota" is judged per pool, never on totals),
// each row expandable to its numbers per pool; bar charts of quota versus
// allocated versus fair share; CSV export of the table (one line per
// project and pool). Administrators
// create, edit and delete projects and departments: quota, limit,
// over-quota weight and priority per pool (refused or warned as Run:ai
// does: a limit below the quota, a project above its department, projects
// adding up to more than their department), rank, node pools in order,
// node types and scheduling rules. URL: #/projects?pool=&open=a,b.

import {api, get, withQuery, checkAbort} from './api.js';
import {h, fill, fillIn, gpu, pct, notice, errorText, badge, formDialog, formRow, confirmDialog,
  csv, download, num as count} from './dom.js';
import {poolOrder} from './submit.js';
import {barChart, destroyChart, COLORS} from './charts.js';

const RULES = [
  ['interactiveJobTimeLimitSeconds', 'Workspace time limit (s)'],
  ['interactiveJobMaxIdleDurationSeconds', 'Workspace idle limit (s)'],
  ['interactiveJobPreemptIdleDurationSeconds', 'Preemptible workspace idle limit (s)'],
  ['trainingJobTimeLimitSeconds', 'Training time limit (s)'],
  ['trainingJobMaxIdleDurationSeconds', 'Training idle limit (s)'],
];
const PRIORITIES = ['None', 'Low', 'Normal', 'High'];

let el = {};
let pools = [];
let departments = [];
let projects = [];
const state = {pool: '', open: new Set()};

const num = (v, d = 0) => (v === undefined || v === null || v === '' ? d : Number(v));

// One queue's numbers in one pool (name), or summed over its pools ('').
export function numbers(q, pool) {
  const st = q.status || {};
  const res = (q.resources || []).filter((r) => !pool || (r.nodePool && r.nodePool.name === pool));
  const ps = (st.nodePoolQuotaStatuses || []).filter((s) => !pool || s.nodePoolName === pool);
  const alloc = ps.reduce((s, x) => s + num(x.allocated && x.allocated.gpu), 0);
  const unlimited = res.some((r) => r.gpu && num(r.gpu.deserved) < 0);
  const quota = !res.length ? (pool ? 0 : null) : unlimited ? -1
    : res.reduce((s, r) => s + num(r.gpu && r.gpu.deserved), 0);
  const hasFair = ps.some((s) => s.fairShare);
  const fair = ps.reduce((s, x) => s + num(x.fairShare && x.fairShare.gpu), 0);
  return {alloc, quota, fair: hasFair ? fair : null, overPools: overPools(q).filter((p) => !pool || p === pool)};
}

// The pools where a queue holds more than its quota there.
function overPools(q) {
  const st = q.status || {};
  const res = q.resources || [];
  return (st.nodePoolQuotaStatuses || []).filter((s) => {
    const r = res.find((x) => x.nodePool && x.nodePool.name === s.nodePoolName);
    const quota = r && r.gpu ? num(r.gpu.deserved) : 0;
    return quota >= 0 && num(s.allocated && s.allocated.gpu) > quota + 1e-9;
  }).map((s) => s.nodePoolName);
}

// Per-pool rows of a queue: every pool it has an entry or a status for.
function poolRows(q) {
  const st = (q.status || {}).nodePoolQuotaStatuses || [];
  const res = q.resources || [];
  const names = [...new Set([...res.map((r) => r.nodePool && r.nodePool.name), ...st.map((s) => s.nodePoolName)])]
    .filter(Boolean).sort();
  return names.map((name) => {
    const r = res.find((x) => x.nodePool && x.nodePool.name === name);
    const s = st.find((x) => x.nodePoolName === name) || {};
    const g = (r && r.gpu) || {};
    const quota = r ? num(g.deserved) : 0;
    const alloc = num(s.allocated && s.allocated.gpu);
    return {name, set: !!r, quota, limit: r ? num(g.limit, -1) : -1, weight: r ? num(g.overQuotaWeight, 1) : 1,
      priority: (r && r.priority) || 'Normal', alloc, fair: s.fairShare ? num(s.fairShare.gpu) : null,
      over: quota >= 0 && alloc > quota + 1e-9};
  });
}

const quotaText = (n) => (n.quota === null ? 'not set' : gpu(n.quota));
const ratioText = (n) => (n.quota === null || n.quota < 0 ? '-' : pct(n.alloc, n.quota));

function overText(n) {
  if (!n.overPools.length) return n.quota === null ? '-' : 'No';
  return badge(state.pool ? 'Yes' : `Yes (${n.overPools.join(', ')})`, 'warn');
}

// The pools (of the one chosen, or all) where a project deserves more GPUs
// than its department does: the server's status.additionalStatusData.
// quotaNotBacked (allotd's extension).
function notBacked(p) {
  const a = ((p.status || {}).additionalStatusData || {}).quotaNotBacked || [];
  return a.filter((e) => !state.pool || e.nodePoolName === state.pool);
}

function backedText(p) {
  const a = notBacked(p);
  if (!a.length) return 'Yes';
  return badge(`No (${a.map((e) => `${e.nodePoolName}: ${gpu(e.deserved)} > ${gpu(e.departmentDeserved)}`)
    .join(', ')})`, 'warn');
}

function poolsText(q) {
  const res = q.resources || [];
  if (!res.length) return '-';
  return res.map((r) => {
    const g = r.gpu || {};
    const lim = g.limit !== undefined && g.limit !== null && num(g.limit) >= 0 ? `, limit ${gpu(g.limit)}` : '';
    return `${r.nodePool && r.nodePool.name} (${gpu(g.deserved)}${lim})`;
  }).join(', ');
}

function applyParams(params) {
  state.pool = params.get('pool') || '';
  state.open = new Set((params.get('open') || '').split(',').filter(Boolean));
}

export default {
  id: 'projects',
  title: 'Projects',
  applyParams,

  mount(root, ctx, params) {
    applyParams(params);
    const canWrite = ctx.can.orgWrite;
    el = {
      poolSel: h('select', {id: 'pj-pool', onchange: (e) => ctx.setParams({pool: e.target.value})},
        h('option', {value: ''}, 'All')),
      status: h('div', {'aria-live': 'polite'}),
      projects: h('div', {class: 'table-wrap'}),
      pchart: h('canvas', {id: 'proj-chart', role: 'img', dataset: {keep: ''},
        'aria-label': 'GPU quota, allocated and fair share per project'}),
      dstatus: h('div'),
      departments: h('div', {class: 'table-wrap'}),
      dchart: h('canvas', {id: 'dept-chart', role: 'img', dataset: {keep: ''},
        'aria-label': 'GPU quota, allocated and fair share per department'}),
    };
    fill(root,
      h('div', {class: 'page-head'}, h('h1', {}, 'Projects'),
        h('div', {class: 'head-actions'},
          h('span', {class: 'filter'}, h('label', {for: 'pj-pool'}, 'Node pool'), el.poolSel),
          h('button', {type: 'button', id: 'pj-export', onclick: () => exportCsv()}, 'Export CSV'),
          canWrite ? h('button', {type: 'button', class: 'primary', id: 'new-project',
            onclick: () => editQueue(ctx, 'project', null)}, 'New project') : null)),
      el.status,
      h('section', {class: 'panel', 'aria-labelledby': 'proj-h'},
        h('h2', {id: 'proj-h'}, 'Projects'), el.projects),
      el.pchartPanel = h('section', {class: 'panel', 'aria-labelledby': 'proj-chart-h', hidden: true},
        h('h2', {id: 'proj-chart-h'}, 'GPU quota, allocated and fair share per project'),
        h('div', {class: 'chart-box'}, el.pchart)),
      h('div', {class: 'page-head'}, h('h1', {class: 'h-sub'}, 'Departments'),
        canWrite ? h('button', {type: 'button', id: 'new-department',
          onclick: () => editQueue(ctx, 'department', null)}, 'New department') : null),
      el.dstatus,
      h('section', {class: 'panel', 'aria-labelledby': 'dept-h'},
        h('h2', {id: 'dept-h'}, 'Departments'), el.departments),
      el.dchartPanel = h('section', {class: 'panel', 'aria-labelledby': 'dept-chart-h', hidden: true},
        h('h2', {id: 'dept-chart-h'}, 'GPU quota, allocated and fair share per department'),
        h('div', {class: 'chart-box'}, el.dchart)));
  },

  unmount() {
    if (el.pchart) destroyChart(el.pchart);
    if (el.dchart) destroyChart(el.dchart);
    el = {};
  },

  async refresh(ctx, signal) {
    const [pj, pl, dp] = await Promise.all([
      get('/api/v1/org-unit/projects', {signal}),
      get('/api/v1/node-pools', {signal}).catch((e) => ({error: e})),
      get('/api/v1/org-unit/departments', {signal}).catch((e) => ({error: e})),
    ]);
    pools = (pl.nodepools || pools).slice().sort((a, b) => a.name.localeCompare(b.name));
    departments = (dp.departments || []).slice().sort((a, b) => a.name.localeCompare(b.name));
    projects = (pj.projects || []).slice().sort((a, b) => a.name.localeCompare(b.name));
    const pending = pendingOf(await get(withQuery('/api/v1/workloads/telemetry', {telemetryType: 'WORKLOADS_COUNT',
      groupBy: 'ProjectId,CurrentNodepools', filterByPhases: 'Pending'}), {signal}).catch((e) => {
      if (e.name === 'AbortError') throw e;
      return null;
    }));
    checkAbort(signal);
    const names = pools.map((p) => p.name);
    if (el.poolSel.dataset.list !== names.join(',') || el.poolSel.value !== state.pool) {
      el.poolSel.dataset.list = names.join(',');
      fill(el.poolSel, h('option', {value: ''}, 'All'),
        names.map((n) => h('option', {value: n, selected: n === state.pool}, n)));
      el.poolSel.value = state.pool;
    }
    renderProjects(ctx, pending);
    if (dp.error) {
      if (dp.error.name === 'AbortError') throw dp.error;
      fillIn(el.dstatus, notice(dp.error.status === 403 ? 'info' : 'error', errorText(dp.error)));
      fillIn(el.departments);
      noChart(el.dchart, el.dchartPanel);
    } else {
      fillIn(el.dstatus, ...departments.filter(oversubscribed).map((d) => notice('warn',
        `Department ${d.name}: its projects' quotas add up to more than its own in ${oversubscribed(d).join(', ')}; ` +
        'each project is guaranteed its quota only while the others leave room.')));
      renderDepartments(ctx);
    }
  },
};

// The pending workloads of each project (in the order of `projects`), in
// the pool chosen or in all: one that names its pools counts in the first
// it names (the server's CurrentNodepools), one that names none in the
// first pool its project tries (submit.js poolOrder). null: unknown.
function pendingOf(t) {
  if (!t) return projects.map(() => null);
  const by = new Map();
  for (const v of t.values || []) {
    const g = {};
    for (const x of v.groups || []) g[x.key] = x.value;
    const k = String(g.ProjectId);
    if (!by.has(k)) by.set(k, []);
    by.get(k).push({pool: g.CurrentNodepools || '', n: Number(v.value) || 0});
  }
  return projects.map((p) => {
    const rows = by.get(String(p.id)) || [];
    if (!state.pool) return rows.reduce((s, r) => s + r.n, 0);
    const first = poolOrder(p, departments, pools, [])[0];
    return rows.filter((r) => r.pool === state.pool || (!r.pool && first === state.pool))
      .reduce((s, r) => s + r.n, 0);
  });
}

// The pools where a department's projects' quotas add up to more than its own.
function oversubscribed(d) {
  const out = [];
  for (const r of d.resources || []) {
    const cap = num(r.gpu && r.gpu.deserved);
    const name = r.nodePool && r.nodePool.name;
    if (cap < 0) continue;
    const sum = projects.filter((p) => p.parentId === d.id).reduce((s, p) => {
      const e = (p.resources || []).find((x) => x.nodePool && x.nodePool.name === name);
      return s + Math.max(0, num(e && e.gpu && e.gpu.deserved));
    }, 0);
    if (sum > cap + 1e-9) out.push(name);
  }
  return out.length ? out : null;
}

function toggle(ctx, name) {
  const open = new Set(state.open);
  if (open.has(name)) open.delete(name); else open.add(name);
  state.open = open;
  ctx.setParams({open: [...open].join(',')}, {push: false});
}

function subTable(q) {
  const rows = poolRows(q);
  return h('table', {class: 'data compact sub', 'aria-label': `${q.name} per node pool`},
    h('thead', {}, h('tr', {}, ['Node pool', 'Quota', 'Limit', 'Over-quota weight', 'Priority', 'Allocated',
      'Fair share', 'Over quota'].map((c, i) => h('th', {scope: 'col', class: i && i < 7 && i !== 4 ? 'num' : null}, c)))),
    h('tbody', {}, rows.length ? rows.map((r) => h('tr', {dataset: {key: r.name}},
      h('th', {scope: 'row'}, r.name),
      h('td', {class: 'num'}, r.set ? gpu(r.quota) : '0 (not set)'),
      h('td', {class: 'num'}, r.limit < 0 ? 'none' : gpu(r.limit)),
      h('td', {class: 'num'}, gpu(r.weight)),
      h('td', {}, r.priority),
      h('td', {class: 'num'}, gpu(r.alloc)),
      h('td', {class: 'num'}, r.fair === null ? '-' : gpu(r.fair)),
      h('td', {}, r.over ? badge('Yes', 'warn') : 'No')))
      : h('tr', {}, h('td', {colspan: 8}, 'No quota in any pool.'))));
}

function queueRows(ctx, kind, q, cells, colspan) {
  const open = state.open.has(q.name);
  const rows = [h('tr', {dataset: {key: q.name}, class: open ? 'expanded' : null},
    h('th', {scope: 'row', class: 'sticky', dataset: {label: kind === 'project' ? 'Project' : 'Department'}},
      h('button', {type: 'button', class: 'expand', 'aria-expanded': open ? 'true' : 'false',
        'aria-label': `${open ? 'Hide' : 'Show'} ${q.name} per node pool`, onclick: () => toggle(ctx, q.name)},
      open ? '▾' : '▸'), ' ', q.name),
    cells,
    ctx.can.orgWrite ? h('td', {class: 'row-actions', dataset: {label: ''}},
      h('button', {type: 'button', class: 'small', 'aria-label': `Edit ${q.name}`,
        onclick: () => editQueue(ctx, kind, q)}, 'Edit'),
      h('button', {type: 'button', class: 'small danger', 'aria-label': `Delete ${q.name}`,
        onclick: () => deleteQueue(ctx, kind, q)}, 'Delete')) : null)];
  if (open) {
    rows.push(h('tr', {class: 'sub-row', dataset: {key: `${q.name}/pools`}},
      h('td', {colspan}, subTable(q))));
  }
  return rows;
}

function cellsOf(n, extra) {
  const td = (label, v, cls) => h('td', {class: cls || null, dataset: {label}}, v);
  return [
    ...extra,
    td('GPU quota', quotaText(n), 'num'),
    td('Allocated', gpu(n.alloc), 'num'),
    td('Fair share', n.fair === null ? '-' : gpu(n.fair), 'num'),
    td('Allocation ratio', ratioText(n), 'num'),
    td('Over quota', overText(n), 'overquota'),
  ];
}

const PCOLS = ['Project', 'Department', 'Node pools (quota)', 'GPU quota', 'Allocated', 'Fair share',
  'Allocation ratio', 'Over quota', 'Quota backed', 'Pending'];
const TEXT_COLS = new Set(['Over quota', 'Quota backed']);
const DCOLS = ['Department', 'Projects', 'Node pools (quota)', 'GPU quota', 'Allocated', 'Fair share',
  'Allocation ratio', 'Over quota'];

function head(cols, withActions) {
  return h('thead', {}, h('tr', {}, cols.map((c, i) =>
    h('th', {scope: 'col', class: i === 0 ? 'sticky' : i >= 3 && !TEXT_COLS.has(c) ? 'num' : null}, c)),
  withActions ? h('th', {scope: 'col'}, h('span', {class: 'sr-only'}, 'Actions')) : null));
}

function renderProjects(ctx, pending) {
  if (!projects.length) {
    fillIn(el.status);
    fillIn(el.projects, notice('empty', ctx.can.orgWrite ? 'No projects yet: create one.'
      : 'You have no projects.'));
    noChart(el.pchart, el.pchartPanel);
    return;
  }
  const colspan = PCOLS.length + (ctx.can.orgWrite ? 1 : 0);
  const rows = projects.flatMap((p, i) => queueRows(ctx, 'project', p, cellsOf(numbers(p, state.pool), [
    h('td', {dataset: {label: 'Department'}}, (p.parent && p.parent.name) || p.parentName || '-'),
    h('td', {class: 'pools-cell', dataset: {label: 'Node pools (quota)'}}, poolsText(p)),
  ]).concat(h('td', {class: 'backed', dataset: {label: 'Quota backed'}}, backedText(p)),
    h('td', {class: 'num', dataset: {label: 'Pending'}}, pending[i] === null ? '-' : count(pending[i]))),
  colspan));
  fillIn(el.status, ...projects.filter((p) => notBacked(p).length).map((p) => notice('warn',
    `Project ${p.name}: ${(p.status && p.status.phaseMessage) || 'its department cannot back its quota'}.`)));
  fillIn(el.projects, h('table', {class: 'data cards-on-phone', id: 'projects-table', 'aria-label': 'Projects'},
    head(PCOLS, ctx.can.orgWrite), h('tbody', {}, rows)));
  chart(el.pchart, el.pchartPanel, projects);
}

function renderDepartments(ctx) {
  if (!departments.length) {
    fillIn(el.departments, notice('empty', 'No departments.'));
    noChart(el.dchart, el.dchartPanel);
    return;
  }
  const colspan = DCOLS.length + (ctx.can.orgWrite ? 1 : 0);
  const rows = departments.flatMap((d) => queueRows(ctx, 'department', d, cellsOf(numbers(d, state.pool), [
    h('td', {class: 'num', dataset: {label: 'Projects'}}, String(projects.filter((p) => p.parentId === d.id).length)),
    h('td', {class: 'pools-cell', dataset: {label: 'Node pools (quota)'}}, poolsText(d)),
  ]), colspan));
  fillIn(el.departments, h('table', {class: 'data cards-on-phone', id: 'departments-table', 'aria-label': 'Departments'},
    head(DCOLS, ctx.can.orgWrite), h('tbody', {}, rows)));
  chart(el.dchart, el.dchartPanel, departments);
}

function noChart(canvas, panel) {
  destroyChart(canvas);
  panel.hidden = true;
}

// The 30 queues with the most quota plus allocation, in name order.
function chart(canvas, panel, all) {
  panel.hidden = false;
  const queues = all.length <= 30 ? all : all.map((q) => ({q, n: numbers(q, state.pool)}))
    .sort((a, b) => (b.n.alloc + Math.max(0, b.n.quota || 0)) - (a.n.alloc + Math.max(0, a.n.quota || 0)))
    .slice(0, 30).map((x) => x.q).sort((a, b) => a.name.localeCompare(b.name));
  const ns = queues.map((q) => numbers(q, state.pool));
  barChart(canvas, queues.map((q) => q.name), [
    {label: 'GPU quota', data: ns.map((n) => (n.quota === null || n.quota < 0 ? null : n.quota)),
      color: COLORS.quota},
    {label: 'Allocated', data: ns.map((n) => n.alloc), color: COLORS.allocated},
    {label: 'Fair share', data: ns.map((n) => n.fair), color: COLORS.fair},
  ], 'GPUs');
}

// One line per project and pool, as the table shows them.
function exportCsv() {
  const header = ['Project', 'Department', 'Node pool', 'GPU quota', 'GPU limit', 'Over-quota weight',
    'Priority', 'Allocated GPUs', 'Fair share', 'Over quota'];
  const lines = [];
  for (const p of projects) {
    const dept = (p.parent && p.parent.name) || p.parentName || '';
    const rows = poolRows(p).filter((r) => !state.pool || r.name === state.pool);
    if (!rows.length) lines.push([p.name, dept, '', '', '', '', '', '', '', '']);
    for (const r of rows) {
      lines.push([p.name, dept, r.name, r.quota, r.limit, r.weight, r.priority, r.alloc,
        r.fair === null ? '' : r.fair, r.over ? 'Yes' : 'No']);
    }
  }
  download('projects.csv', csv(header, lines));
}

async function deleteQueue(ctx, kind, q) {
  const what = kind === 'project' ? `project ${q.name}` : `department ${q.name}`;
  if (!await confirmDialog(`Delete ${what}? ${kind === 'project'
    ? 'Only a project without workloads can be deleted.' : 'Only a department without projects can be deleted.'}`,
  'Delete')) return;
  try {
    await api('DELETE', `/api/v1/org-unit/${kind === 'project' ? 'projects' : 'departments'}/${encodeURIComponent(q.id)}`);
    ctx.flash(`Deleted ${what}.`);
  } catch (e) {
    ctx.showError(e.status === 409 ? Object.assign(new Error(
      `${what[0].toUpperCase()}${what.slice(1)} cannot be deleted: it still holds ${kind === 'project'
        ? 'workloads (delete them first)' : 'projects (delete or move them first)'}.`)) : e);
  }
  ctx.kick();
}

// ---- the create / edit dialog ----

function numInput(name, value, attrs = {}) {
  return h('input', {name, type: 'number', step: 'any', value: value ?? '', autocomplete: 'off', ...attrs});
}

// What the next scheduling turn would do with q's quotas replaced by
// resources, in one sentence: the workloads it would start, stop or move,
// and q's fair share before -> after.
async function quotaWhatIf(kind, q, resources, signal) {
  const change = {type: 'quota', replace: true, resources};
  change[kind === 'project' ? 'projectId' : 'departmentId'] = q.id;
  const a = await api('POST', '/api/v1/whatif', {changes: [change]}, {signal});
  const said = (verb, list) => list.map((e) => `${verb} ${e.description} (${e.reason})`);
  const parts = [...said('start', a.started), ...said('stop', a.stopped), ...said('move', a.moved)];
  const shares = a.fairShares.filter((f) => f.id === q.id && f.before && f.after)
    .map((f) => `${q.name}'s fair share in ${f.nodePool}: ${gpu(f.before.fairShare)} -> ${gpu(f.after.fairShare)} GPUs`);
  return `${parts.length ? `Would ${parts.join(', ')}` : 'Would start, stop or move no workload'}` +
    `${shares.length ? `; ${shares.join('; ')}` : ''}.`;
}

// The create / edit dialog of a project or department (q null: new).
function editQueue(ctx, kind, q) {
  const isProject = kind === 'project';
  const f = {};
  const body = [];
  if (!q) {
    f.name = h('input', {name: 'name', required: true, placeholder: 'team-a', autocomplete: 'off'});
    body.push(formRow('Name', f.name, 'lowercase letters, digits and -'));
  }
  if (isProject) {
    f.parent = h('select', {name: 'parentId', disabled: !!q},
      departments.map((d) => h('option', {value: d.id, selected: q ? d.id === q.parentId
        : d.name === 'default'}, d.name)));
    body.push(formRow('Department', f.parent, q ? 'a project cannot move to another department' : null));
  }
  f.description = h('input', {name: 'description', value: (q && q.description) || '', autocomplete: 'off'});
  f.rank = numInput('rank', (q && q.rank) || 0, {min: -1000, max: 1000, step: 1});
  body.push(formRow('Description', f.description),
    formRow('Rank', f.rank, 'a higher rank is served first for spare GPUs'));

  // quotas per pool
  const current = new Map(((q && q.resources) || []).map((r) => [r.nodePool && r.nodePool.name, r]));
  const quota = {};
  body.push(h('h3', {class: 'form-heading'}, 'Quotas per node pool'));
  const quotaTable = h('table', {class: 'data compact quota-edit'},
    h('thead', {}, h('tr', {}, ['Node pool', 'GPU quota', 'GPU limit', 'Over-quota weight', 'Priority'].map((c) =>
      h('th', {scope: 'col'}, c)))),
    h('tbody', {}, pools.map((p) => {
      const r = current.get(p.name);
      const g = (r && r.gpu) || {};
      quota[p.name] = {
        deserved: numInput(`deserved:${p.name}`, r ? num(g.deserved) : 0, {min: -1, 'aria-label': `GPU quota in ${p.name}`}),
        limit: numInput(`limit:${p.name}`, r ? num(g.limit, -1) : -1, {min: -1, 'aria-label': `GPU limit in ${p.name}`}),
        weight: numInput(`weight:${p.name}`, r ? num(g.overQuotaWeight, 1) : 1, {min: 0, 'aria-label': `Over-quota weight in ${p.name}`}),
        priority: h('select', {name: `priority:${p.name}`, 'aria-label': `Over-quota priority in ${p.name}`},
          PRIORITIES.map((x) => h('option', {value: x, selected: x === ((r && r.priority) || 'Normal')}, x))),
      };
      const x = quota[p.name];
      return h('tr', {dataset: {key: p.name}}, h('th', {scope: 'row'}, `${p.name} (${gpu(p.gpus)} GPUs)`),
        h('td', {}, x.deserved), h('td', {}, x.limit), h('td', {}, x.weight), h('td', {}, x.priority));
    })));
  const quotaMsgs = h('div', {id: 'q-messages', 'aria-live': 'polite'});
  body.push(h('div', {class: 'table-wrap'}, quotaTable),
    h('small', {class: 'hint'}, 'quota -1: unlimited; limit -1: none, else at least the quota'), quotaMsgs);

  // node pools in order, node types, scheduling rules
  const order = (q && q.defaultNodePools ? q.defaultNodePools.slice() : []);
  const orderList = h('ol', {class: 'ordered-pick', id: 'q-pools', 'aria-label': 'Default node pools, in order'});
  const drawOrder = () => fillIn(orderList, [...order, ...pools.map((p) => p.name).filter((n) => !order.includes(n))]
    .map((n) => {
      const i = order.indexOf(n);
      return h('li', {dataset: {key: n}}, h('label', {}, h('input', {type: 'checkbox', checked: i >= 0, name: `order-${n}`,
        onchange: (e) => { if (e.target.checked) order.push(n); else order.splice(order.indexOf(n), 1); drawOrder(); }}),
      ` ${i >= 0 ? `${i + 1}. ` : ''}${n}`),
      i >= 0 ? h('span', {class: 'move'},
        h('button', {type: 'button', class: 'small', disabled: i === 0, 'aria-label': `Move ${n} up`,
          onclick: () => { order.splice(i, 1); order.splice(i - 1, 0, n); drawOrder(); }}, '↑'),
        h('button', {type: 'button', class: 'small', disabled: i === order.length - 1, 'aria-label': `Move ${n} down`,
          onclick: () => { order.splice(i, 1); order.splice(i + 1, 0, n); drawOrder(); }}, '↓')) : null);
    }));
  drawOrder();
  const types = (q && q.nodeTypes) || {};
  f.trainTypes = h('input', {name: 'trainTypes', value: (types.training || []).join(', '), autocomplete: 'off',
    placeholder: 'dgx, a100'});
  f.wsTypes = h('input', {name: 'wsTypes', value: (types.workspace || []).join(', '), autocomplete: 'off'});
  body.push(h('h3', {class: 'form-heading'}, 'Node pools and node types'),
    h('div', {class: 'form-row'}, h('span', {class: 'label'}, 'Default node pools'), orderList,
      h('small', {class: 'hint'}, 'workloads that name no pool try these, first on top; none: the department\'s')),
    formRow('Node types for trainings', f.trainTypes, 'comma-separated; empty: any'),
    formRow('Node types for workspaces', f.wsTypes, 'comma-separated; empty: any'));
  const rules = (q && q.schedulingRules) || {};
  body.push(h('h3', {class: 'form-heading'}, 'Scheduling rules'));
  for (const [k, label] of RULES) {
    f[k] = numInput(k, rules[k] ?? '', {min: 1, step: 1, placeholder: 'none'});
    body.push(formRow(label, f[k]));
  }

  const parentOf = () => (isProject ? departments.find((d) => d.id === (q ? q.parentId : f.parent.value)) : null);
  // Run:ai's rules, checked as the numbers change: errors block saving, warnings do not.
  function check() {
    const errors = [];
    const warnings = [];
    const dept = parentOf();
    for (const p of pools) {
      const x = quota[p.name];
      const d = num(x.deserved.value);
      const l = num(x.limit.value, -1);
      let bad = false;
      if (l >= 0 && (d < 0 || l < d)) {
        errors.push(`${p.name}: the limit (${gpu(l)}) is below the quota (${gpu(d)}); a limit is -1 (none) or at least the quota.`);
        bad = true;
      }
      if (dept) {
        const e = (dept.resources || []).find((r) => r.nodePool && r.nodePool.name === p.name);
        const cap = e && e.gpu ? num(e.gpu.deserved) : null;
        if (cap !== null && cap >= 0 && (d < 0 || d > cap)) {
          errors.push(`${p.name}: the quota (${gpu(d)}) is above that of department ${dept.name} (${gpu(cap)}).`);
          bad = true;
        } else if (cap !== null && cap >= 0) {
          const others = projects.filter((o) => o.parentId === dept.id && (!q || o.id !== q.id)).reduce((s, o) => {
            const oe = (o.resources || []).find((r) => r.nodePool && r.nodePool.name === p.name);
            return s + Math.max(0, num(oe && oe.gpu && oe.gpu.deserved));
          }, 0);
          if (others + Math.max(0, d) > cap) {
            warnings.push(`${p.name}: ${dept.name}'s projects would have ${gpu(others + Math.max(0, d))} GPUs of quota, ` +
              `more than the department's ${gpu(cap)}: their quotas are not all guaranteed at once.`);
          }
        }
      }
      // quotas beyond the pool's GPUs: oversubscribed, not all guaranteed
      const poolGpus = num(p.gpus, -1);
      if (poolGpus >= 0) {
        const peers = (isProject ? projects : departments).filter((o) => !q || o.id !== q.id).reduce((s, o) => {
          const oe = (o.resources || []).find((r) => r.nodePool && r.nodePool.name === p.name);
          return s + Math.max(0, num(oe && oe.gpu && oe.gpu.deserved));
        }, 0);
        if (d < 0 || d > poolGpus) {
          warnings.push(`${p.name}: the quota (${d < 0 ? 'unlimited' : gpu(d)}) is more than the pool's ${gpu(poolGpus)} GPUs.`);
        } else if (peers + d > poolGpus) {
          warnings.push(`${p.name}: the ${isProject ? 'projects' : 'departments'}' quotas would add up to ` +
            `${gpu(peers + d)} GPUs, more than the pool's ${gpu(poolGpus)}: the pool is oversubscribed.`);
        }
      }
      if (!isProject && q) {
        const over = projects.filter((o) => o.parentId === q.id).find((o) => {
          const oe = (o.resources || []).find((r) => r.nodePool && r.nodePool.name === p.name);
          const od = oe && oe.gpu ? num(oe.gpu.deserved) : 0;
          return d >= 0 && (od < 0 || od > d);
        });
        if (over) {
          errors.push(`${p.name}: project ${over.name} has a larger quota; lower it first.`);
          bad = true;
        }
      }
      x.deserved.setAttribute('aria-invalid', bad ? 'true' : 'false');
      x.limit.setAttribute('aria-invalid', bad ? 'true' : 'false');
    }
    fillIn(quotaMsgs, ...errors.map((t) => h('p', {class: 'notice error field-error'}, t)),
      ...warnings.map((t) => h('p', {class: 'notice warn'}, t)));
    dlg.submitButton.disabled = errors.length > 0;
    return errors;
  }

  const title = q ? `Edit ${kind} ${q.name}` : `New ${kind}`;
  // The quotas per pool as the form has them (the cpu and memory kept).
  const resourcesNow = () => pools.map((p) => {
    const x = quota[p.name];
    const entry = {nodePool: {id: String(p.id), name: p.name}, gpu: {
      deserved: num(x.deserved.value), limit: num(x.limit.value, -1),
      overQuotaWeight: num(x.weight.value, 1)}, priority: x.priority.value};
    const old = current.get(p.name);
    if (old && old.cpu) entry.cpu = old.cpu;
    if (old && old.memory) entry.memory = old.memory;
    return entry;
  }).filter((r) => current.has(r.nodePool.name) || r.gpu.deserved !== 0 || r.gpu.limit >= 0 ||
    r.gpu.overQuotaWeight !== 1 || r.priority !== 'Normal');
  const dlg = formDialog({
    title, submitLabel: q ? 'Save' : `Create ${kind}`, body, wide: true,
    // an edit says what it would do before it is saved (POST /api/v1/whatif)
    preview: q ? (_v, signal) => quotaWhatIf(kind, q, resourcesNow(), signal) : undefined,
    onSubmit: async () => {
      if (check().length) throw new Error('Fix the quotas first.');
      const resources = resourcesNow();
      const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
      const rulesOut = {};
      for (const [k] of RULES) if (f[k].value !== '') rulesOut[k] = Number(f[k].value);
      const nodeTypes = {};
      if (list(f.trainTypes.value).length) nodeTypes.training = list(f.trainTypes.value);
      if (list(f.wsTypes.value).length) nodeTypes.workspace = list(f.wsTypes.value);
      const base = `/api/v1/org-unit/${isProject ? 'projects' : 'departments'}`;
      const bodyOut = {description: f.description.value.trim(), rank: num(f.rank.value), resources,
        defaultNodePools: order.length ? order.slice() : null,
        nodeTypes: Object.keys(nodeTypes).length ? nodeTypes : null,
        schedulingRules: Object.keys(rulesOut).length ? rulesOut : null};
      if (q) {
        await api('PUT', `${base}/${encodeURIComponent(q.id)}`, {name: q.name, ...bodyOut});
        ctx.flash(`Saved ${kind} ${q.name}.`);
      } else {
        const out = {name: f.name.value.trim(), clusterId: ctx.clusterId, ...bodyOut};
        if (isProject && f.parent.value) out.parentId = f.parent.value;
        await api('POST', base, out);
        ctx.flash(`Created ${kind} ${out.name}.`);
      }
      ctx.kick();
    },
  });
  dlg.id = `${kind}-dialog`;
  dlg.addEventListener('input', check);
  dlg.addEventListener('change', check);
  check();
}
