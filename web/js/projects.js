// projects.js: the Projects page: projects and departments as tables (quota,
// allocated, fair share, allocation ratio, over quota, pending workloads)
// and as bar charts of quota versus allocated versus fair share; the forms
// with which administrators create them and edit their quotas per node pool.

import {api, get, withQuery, checkAbort} from './api.js';
import {h, fill, gpu, pct, notice, errorText, badge, formDialog} from './dom.js';
import {barChart, destroyChart, COLORS} from './charts.js';

let el = {};
let pools = [];
let departments = [];

// Sums of a queue's GPU numbers over its node pools.
function numbers(q) {
  const st = q.status || {};
  const alloc = Number((st.quotaStatus && st.quotaStatus.allocated && st.quotaStatus.allocated.gpu) || 0);
  const requested = Number((st.quotaStatus && st.quotaStatus.requested && st.quotaStatus.requested.gpu) || 0);
  const res = q.resources || [];
  const unlimited = res.some((r) => r.gpu && Number(r.gpu.deserved) < 0);
  // quota: -1 unlimited, null when the queue sets none (no node pool entry)
  const quota = !res.length ? null : unlimited ? -1
    : res.reduce((s, r) => s + Number((r.gpu && r.gpu.deserved) || 0), 0);
  const fs = st.nodePoolQuotaStatuses || [];
  const hasFair = fs.some((s) => s.fairShare);
  const fair = fs.reduce((s, x) => s + Number((x.fairShare && x.fairShare.gpu) || 0), 0);
  return {alloc, requested, quota, fair: hasFair ? fair : null,
    over: quota !== null && quota >= 0 && alloc > quota};
}

function quotaText(n) {
  return n.quota === null ? 'not set' : gpu(n.quota);
}

function ratioText(n) {
  return n.quota === null || n.quota < 0 ? '-' : pct(n.alloc, n.quota);
}

function poolsText(q) {
  const res = q.resources || [];
  if (!res.length) return '-';
  return res.map((r) => {
    const g = r.gpu || {};
    const lim = g.limit !== undefined && g.limit !== null && Number(g.limit) >= 0 ? `, limit ${gpu(g.limit)}` : '';
    return `${r.nodePool && r.nodePool.name} (${gpu(g.deserved)}${lim})`;
  }).join(', ');
}

const COLS = ['Project', 'Department', 'Node pools (quota)', 'GPU quota', 'Allocated',
  'Fair share', 'Allocation ratio', 'Over quota', 'Pending'];
const DCOLS = ['Department', 'Projects', 'Node pools (quota)', 'GPU quota', 'Allocated',
  'Fair share', 'Allocation ratio', 'Over quota'];

function head(cols, withActions) {
  return h('thead', {}, h('tr', {}, cols.map((c, i) =>
    h('th', {scope: 'col', class: i >= 3 && c !== 'Over quota' ? 'num' : null}, c)),
  withActions ? h('th', {scope: 'col'}, h('span', {class: 'sr-only'}, 'Actions')) : null));
}

export default {
  id: 'projects',
  title: 'Projects',

  mount(root, ctx) {
    const canWrite = ctx.can.orgWrite;
    el = {
      status: h('div', {'aria-live': 'polite'}),
      projects: h('div', {class: 'table-wrap'}),
      pchart: h('canvas', {id: 'proj-chart', role: 'img',
        'aria-label': 'GPU quota, allocated and fair share per project'}),
      dstatus: h('div'),
      departments: h('div', {class: 'table-wrap'}),
      dchart: h('canvas', {id: 'dept-chart', role: 'img',
        'aria-label': 'GPU quota, allocated and fair share per department'}),
    };
    fill(root,
      h('div', {class: 'page-head'}, h('h1', {}, 'Projects'),
        canWrite ? h('button', {type: 'button', class: 'primary', id: 'new-project',
          onclick: () => editQueue(ctx, 'project', null)}, 'New project') : null),
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
    pools = pl.nodepools || pools;
    departments = dp.departments || [];
    const projects = (pj.projects || []).slice().sort((a, b) => a.name.localeCompare(b.name));
    const pending = await Promise.all(projects.map((p) =>
      get(withQuery('/api/v1/workloads/count', {filterBy: `projectId==${p.id},phase==Pending`}),
        {signal}).then((c) => c.count, () => null)));
    checkAbort(signal);
    renderProjects(ctx, projects, pending);
    if (dp.error) {
      if (dp.error.name === 'AbortError') throw dp.error;
      fill(el.dstatus, notice(dp.error.status === 403 ? 'info' : 'error', errorText(dp.error)));
      fill(el.departments);
      noChart(el.dchart, el.dchartPanel);
    } else {
      fill(el.dstatus);
      renderDepartments(ctx, departments.slice().sort((a, b) => a.name.localeCompare(b.name)), projects);
    }
  },
};

function renderProjects(ctx, projects, pending) {
  if (!projects.length) {
    fill(el.projects, notice('empty', ctx.can.orgWrite ? 'No projects yet: create one.'
      : 'You have no projects.'));
    noChart(el.pchart, el.pchartPanel);
    return;
  }
  const rows = projects.map((p, i) => {
    const n = numbers(p);
    return h('tr', {dataset: {key: p.name}},
      h('th', {scope: 'row'}, p.name),
      h('td', {}, (p.parent && p.parent.name) || '-'),
      h('td', {}, poolsText(p)),
      h('td', {class: 'num'}, quotaText(n)),
      h('td', {class: 'num'}, gpu(n.alloc)),
      h('td', {class: 'num'}, n.fair === null ? '-' : gpu(n.fair)),
      h('td', {class: 'num'}, ratioText(n)),
      h('td', {class: 'overquota'}, n.over ? badge('Yes', 'warn') : n.quota === null ? '-' : 'No'),
      h('td', {class: 'num'}, pending[i] === null ? '-' : String(pending[i])),
      ctx.can.orgWrite ? h('td', {}, h('button', {type: 'button', class: 'small',
        'aria-label': `Edit quotas of ${p.name}`, onclick: () => editQueue(ctx, 'project', p)},
      'Edit')) : null);
  });
  fill(el.projects, h('table', {class: 'data', id: 'projects-table', 'aria-label': 'Projects'},
    head(COLS, ctx.can.orgWrite), h('tbody', {}, rows)));
  chart(el.pchart, el.pchartPanel, projects);
}

function renderDepartments(ctx, depts, projects) {
  if (!depts.length) {
    fill(el.departments, notice('empty', 'No departments.'));
    noChart(el.dchart, el.dchartPanel);
    return;
  }
  const rows = depts.map((d) => {
    const n = numbers(d);
    const count = projects.filter((p) => p.parentId === d.id).length;
    return h('tr', {dataset: {key: d.name}},
      h('th', {scope: 'row'}, d.name),
      h('td', {class: 'num'}, String(count)),
      h('td', {}, poolsText(d)),
      h('td', {class: 'num'}, quotaText(n)),
      h('td', {class: 'num'}, gpu(n.alloc)),
      h('td', {class: 'num'}, n.fair === null ? '-' : gpu(n.fair)),
      h('td', {class: 'num'}, ratioText(n)),
      h('td', {class: 'overquota'}, n.over ? badge('Yes', 'warn') : n.quota === null ? '-' : 'No'),
      ctx.can.orgWrite ? h('td', {}, h('button', {type: 'button', class: 'small',
        'aria-label': `Edit quotas of ${d.name}`, onclick: () => editQueue(ctx, 'department', d)},
      'Edit')) : null);
  });
  fill(el.departments, h('table', {class: 'data', id: 'departments-table', 'aria-label': 'Departments'},
    head(DCOLS, ctx.can.orgWrite), h('tbody', {}, rows)));
  chart(el.dchart, el.dchartPanel, depts);
}

function noChart(canvas, panel) {
  destroyChart(canvas);
  panel.hidden = true;
}

// The 30 queues with the most quota plus allocation, in name order.
function chart(canvas, panel, all) {
  panel.hidden = false;
  const queues = all.length <= 30 ? all : all.map((q) => ({q, n: numbers(q)}))
    .sort((a, b) => (b.n.alloc + Math.max(0, b.n.quota || 0)) - (a.n.alloc + Math.max(0, a.n.quota || 0)))
    .slice(0, 30).map((x) => x.q).sort((a, b) => a.name.localeCompare(b.name));
  const ns = queues.map(numbers);
  barChart(canvas, queues.map((q) => q.name), [
    {label: 'GPU quota', data: ns.map((n) => (n.quota === null || n.quota < 0 ? null : n.quota)),
      color: COLORS.quota},
    {label: 'Allocated', data: ns.map((n) => n.alloc), color: COLORS.allocated},
    {label: 'Fair share', data: ns.map((n) => n.fair), color: COLORS.fair},
  ], 'GPUs');
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

// The create / edit-quotas dialog of a project or department (q null: new).
function editQueue(ctx, kind, q) {
  const fields = [];
  if (!q) {
    fields.push({name: 'name', label: 'Name', required: true,
      hint: 'lowercase letters, digits and -', placeholder: `team-a`});
    if (kind === 'project') {
      fields.push({name: 'parentId', label: 'Department', type: 'select',
        options: departments.map((d) => ({value: d.id, label: d.name})),
        value: (departments.find((d) => d.name === 'default') || departments[0] || {}).id});
    }
  }
  const current = new Map(((q && q.resources) || []).map((r) => [r.nodePool && r.nodePool.id, r]));
  for (const p of pools) {
    const r = current.get(p.id);
    const g = (r && r.gpu) || {};
    fields.push({type: 'heading', label: `Node pool ${p.name} (${gpu(p.gpus)} GPUs)`});
    fields.push({name: `deserved:${p.id}`, label: 'GPU quota (deserved)', type: 'number', min: 0,
      step: 'any', value: r ? g.deserved ?? 0 : 0});
    fields.push({name: `limit:${p.id}`, label: 'GPU limit', type: 'number', min: -1, step: 'any',
      value: r ? g.limit ?? -1 : -1, hint: '-1: no limit'});
    fields.push({name: `weight:${p.id}`, label: 'Over-quota weight', type: 'number', min: 0,
      step: 'any', value: r ? g.overQuotaWeight ?? 1 : 1});
  }
  const title = q ? `Edit quotas of ${kind} ${q.name}` : `New ${kind}`;
  const resourcesOf = (v) => pools.map((p) => {
    const entry = {nodePool: {id: p.id, name: p.name}, gpu: {
      deserved: Number(v[`deserved:${p.id}`] || 0), limit: Number(v[`limit:${p.id}`] ?? -1),
      overQuotaWeight: Number(v[`weight:${p.id}`] ?? 1)}};
    const old = current.get(p.id);
    if (old && old.cpu) entry.cpu = old.cpu;
    if (old && old.memory) entry.memory = old.memory;
    return entry;
  }).filter((r) => current.has(r.nodePool.id) || r.gpu.deserved > 0 ||
    r.gpu.limit >= 0 || pools.length === 1);
  formDialog({
    title, submitLabel: q ? 'Save quotas' : `Create ${kind}`, fields,
    // an edit says what it would do before it is saved (POST /api/v1/whatif)
    preview: q ? (v, signal) => quotaWhatIf(kind, q, resourcesOf(v), signal) : undefined,
    onSubmit: async (v) => {
      const resources = resourcesOf(v);
      const base = `/api/v1/org-unit/${kind === 'project' ? 'projects' : 'departments'}`;
      if (q) {
        await api('PUT', `${base}/${encodeURIComponent(q.id)}/resources`, resources);
        ctx.flash(`Saved the quotas of ${q.name}.`);
      } else {
        const body = {name: v.name.trim(), clusterId: ctx.clusterId, resources};
        if (kind === 'project' && v.parentId) body.parentId = v.parentId;
        await api('POST', base, body);
        ctx.flash(`Created ${kind} ${body.name}.`);
      }
      ctx.kick();
    },
  });
}
