// assets.js: Run:ai's assets and workload templates the user may read
// (GET /api/v1/asset/environment, /compute, /datasource, /credentials and
// /api/v1/workload-templates), one table each; administrators create
// environments and compute resources here and delete any of them (the
// server refuses one in use and names its users). A credential's values
// are never shown: the server never answers one, and the table shows what
// it does answer (its user or URL, and its keys' names).
// URL: #/assets?q= (a part of the name).

import {api, get, getOptional} from './api.js';
import {h, fill, fillIn, notice, formDialog, confirmDialog, time, searchForm, takeSearch} from './dom.js';

let el = {};
let projects = [];
let departments = [];
const filt = {q: ''};

// Each family: its list route, the title, and the columns beyond name,
// kind and scope (a function of an entry's spec).
const FAMILIES = [
  {id: 'environment', title: 'Environments', list: '/api/v1/asset/environment',
    cols: ['Image', 'Command'], cells: (s) => [s.image, [s.command, s.args].filter(Boolean).join(' ')]},
  {id: 'compute', title: 'Compute resources', list: '/api/v1/asset/compute',
    cols: ['GPUs', 'CPU cores', 'Memory'],
    cells: (s) => [s.gpuPortionRequest ? `${s.gpuDevicesRequest || 1} × ${s.gpuPortionRequest}` : s.gpuDevicesRequest,
      s.cpuCoreRequest, s.cpuMemoryRequest]},
  {id: 'datasource', title: 'Data sources', list: '/api/v1/asset/datasource',
    cols: ['Source', 'In the pod'], cells: (s) => {
      const d = s.hostPath || s.git || {};
      return [d.repository || d.path, s.git ? d.path : d.mountPath];
    }},
  {id: 'credential', title: 'Credentials', list: '/api/v1/asset/credentials',
    cols: ['Shown', 'Sealed'], cells: (s) => {
      const d = Object.values(s)[0] || {};
      const shown = ['user', 'url'].filter((k) => d[k]).map((k) => `${k} ${d[k]}`).join(', ');
      const keys = (d.keyValuePairs || []).map((p) => p.key).join(', ');
      return [shown || keys || '-', 'never shown'];
    }},
];

function applyParams(params) {
  takeSearch(params, filt, el.filters && el.filters.search);
}

const kindOf = (e) => e.meta.kind || e.meta.workloadType;
const scopeOf = (e) => {
  const scope = e.meta.scope || e.meta.scopeType;
  if (scope === 'project') return `project ${e.meta.projectName || ''}`.trim();
  if (scope === 'department') {
    const d = departments.find((x) => x.id === (e.meta.departmentId || e.meta.scopeId));
    return `department ${d ? d.name : e.meta.departmentId || e.meta.scopeId}`;
  }
  return scope;
};

export default {
  id: 'assets',
  title: 'Assets',
  applyParams,

  mount(root, ctx, params) {
    el.filters = searchForm(ctx, params, filt,
      {id: 'as-search', label: 'Filter assets', placeholder: 'a part of the name'});
    el.tables = {};
    const sections = [...FAMILIES, {id: 'template', title: 'Workload templates'}].map((f) => {
      el.tables[f.id] = h('div', {class: 'table-wrap'});
      return h('section', {class: 'panel', 'aria-labelledby': `as-${f.id}-h`},
        h('h2', {id: `as-${f.id}-h`}, f.title), el.tables[f.id]);
    });
    fill(root,
      h('div', {class: 'page-head'}, h('h1', {}, 'Assets'),
        ctx.can.orgWrite ? h('span', {class: 'actions'},
          h('button', {type: 'button', class: 'primary', id: 'new-environment',
            onclick: () => newEnvironment(ctx)}, 'New environment'),
          h('button', {type: 'button', id: 'new-compute', onclick: () => newCompute(ctx)},
            'New compute resource')) : null),
      h('p', {class: 'muted'}, 'What a workload is made of, defined once: an environment (image, command, ' +
        'variables), a compute resource (GPUs, CPU, memory), data sources and credentials, in a project, a ' +
        'department (its projects see it) or the whole tenant. A submission names them and overrides ' +
        'what it needs. A credential\'s values are sealed and never shown.'),
      el.filters,
      ...sections);
  },

  unmount() {
    el = {};
  },

  async refresh(ctx, signal) {
    const opt = (p) => getOptional(p, signal);
    const lists = await Promise.all([...FAMILIES.map((f) => opt(f.list)),
      opt('/api/v1/workload-templates'), opt('/api/v1/org-unit/projects'), opt('/api/v1/org-unit/departments')]);
    projects = (lists[FAMILIES.length + 1].projects) || [];
    departments = (lists[FAMILIES.length + 2].departments) || [];
    FAMILIES.forEach((f, i) => render(ctx, f, lists[i]));
    render(ctx, {id: 'template', cols: ['Environment'], cells: (s, e) => [envName(e, lists[0])]},
      lists[FAMILIES.length]);
  },
};

function envName(t, envs) {
  const id = t.assets && t.assets.environment;
  const env = ((envs && envs.entries) || []).find((e) => e.meta.id === id);
  return env ? env.meta.name : id || '-';
}

function render(ctx, f, answer) {
  const box = el.tables[f.id];
  if (answer.error) {
    fillIn(box, notice('error', `Cannot read them: ${answer.error.message}`));
    return;
  }
  const q = filt.q.toLowerCase();
  const rows = (answer.entries || []).filter((e) => !q || e.meta.name.toLowerCase().includes(q))
    .sort((a, b) => a.meta.name.localeCompare(b.meta.name));
  if (!rows.length) {
    fillIn(box, notice('empty', (answer.entries || []).length ? 'None matches.' : 'None yet.'));
    return;
  }
  const cols = ['Name', 'Kind', 'Scope', ...f.cols, 'Created'];
  fillIn(box, h('table', {class: 'data cards-on-phone', id: `assets-${f.id}`, 'aria-label': f.title || f.id},
    h('thead', {}, h('tr', {}, cols.map((c, i) => h('th', {scope: 'col', class: i === 0 ? 'sticky' : null}, c)),
      ctx.can.orgWrite ? h('th', {scope: 'col'}, h('span', {class: 'sr-only'}, 'Actions')) : null)),
    h('tbody', {}, rows.map((e) => h('tr', {dataset: {key: e.meta.id}},
      h('th', {scope: 'row', class: 'sticky', dataset: {label: cols[0]}}, e.meta.name),
      h('td', {dataset: {label: cols[1]}}, kindOf(e)),
      h('td', {dataset: {label: cols[2]}}, scopeOf(e)),
      ...f.cells(e.spec || {}, e).map((v, i) => h('td', {dataset: {label: cols[3 + i]}},
        v === undefined || v === null || v === '' ? '-' : String(v))),
      h('td', {dataset: {label: cols[cols.length - 1]}}, time(e.meta.createdAt)),
      ctx.can.orgWrite ? h('td', {class: 'row-actions', dataset: {label: ''}},
        h('button', {type: 'button', class: 'small danger', 'aria-label': `Delete ${e.meta.name}`,
          onclick: () => remove(ctx, e)}, 'Delete')) : null)))));
}

// The route of one asset or template, from its kind.
const ROUTES = {
  environment: '/api/v1/asset/environment', compute: '/api/v1/asset/compute',
  hostPath: '/api/v1/asset/datasource/host-path', git: '/api/v1/asset/datasource/git',
  password: '/api/v1/asset/credentials/password', accessKey: '/api/v1/asset/credentials/access-key',
  dockerRegistry: '/api/v1/asset/credentials/docker-registry',
  ngcApiKey: '/api/v1/asset/credentials/ngc-api-key',
  genericSecret: '/api/v1/asset/credentials/generic-secret',
  Training: '/api/v1/workload-templates/trainings', Workspace: '/api/v1/workload-templates/workspaces',
  Distributed: '/api/v1/workload-templates/distributed', Inference: '/api/v1/workload-templates/inferences',
};

async function remove(ctx, e) {
  if (!await confirmDialog(`Delete ${e.meta.name}?`, 'Delete')) return;
  try {
    await api('DELETE', `${ROUTES[kindOf(e)]}/${e.meta.id}`);
    ctx.flash(`Deleted ${e.meta.name}.`);
  } catch (err) {
    ctx.showError(err);
  }
  ctx.kick();
}

// The scope rows of a creation form, and their values as the API's meta.
function scopeFields() {
  return [
    {name: 'scope', label: 'Scope', type: 'select', value: projects.length ? 'project' : 'tenant',
      options: [{value: 'project', label: 'A project'}, {value: 'department', label: 'A department'},
        {value: 'tenant', label: 'The whole tenant'}]},
    {name: 'project', label: 'Project (a project scope)', type: 'select', value: (projects[0] || {}).id,
      options: projects.map((p) => ({value: p.id, label: p.name}))},
    {name: 'department', label: 'Department (a department scope)', type: 'select',
      value: (departments[0] || {}).id, options: departments.map((d) => ({value: d.id, label: d.name}))},
  ];
}

function metaOf(v) {
  const meta = {name: v.name.trim(), scope: v.scope};
  if (v.scope === 'project') meta.projectId = v.project;
  if (v.scope === 'department') meta.departmentId = v.department;
  return meta;
}

function newEnvironment(ctx) {
  formDialog({
    title: 'New environment',
    submitLabel: 'Create the environment',
    fields: [{name: 'name', label: 'Name', required: true, placeholder: 'pytorch'}, ...scopeFields(),
      {name: 'image', label: 'Image', required: true, placeholder: 'pytorch/pytorch:latest'},
      {name: 'command', label: 'Command', placeholder: 'python'},
      {name: 'args', label: 'Arguments', placeholder: 'train.py'}],
    onSubmit: async (v) => {
      const spec = {image: v.image.trim()};
      if (v.command.trim()) spec.command = v.command.trim();
      if (v.args.trim()) spec.args = v.args.trim();
      await api('POST', '/api/v1/asset/environment', {meta: metaOf(v), spec});
      ctx.flash(`Created the environment ${v.name.trim()}.`);
      ctx.kick();
    },
  });
}

function newCompute(ctx) {
  formDialog({
    title: 'New compute resource',
    submitLabel: 'Create the compute resource',
    fields: [{name: 'name', label: 'Name', required: true, placeholder: 'one-gpu'}, ...scopeFields(),
      {name: 'gpus', label: 'GPU devices', type: 'number', min: 0, max: 64, step: 1, value: 1},
      {name: 'portion', label: 'Portion of each GPU (empty: whole)', type: 'number', min: 0.01, max: 1,
        step: 0.01},
      {name: 'cpu', label: 'CPU cores', type: 'number', min: 0, step: 0.1},
      {name: 'memory', label: 'Memory', placeholder: '8G'}],
    onSubmit: async (v) => {
      const spec = {gpuDevicesRequest: Number(v.gpus)};
      if (v.portion) Object.assign(spec, {gpuRequestType: 'portion', gpuPortionRequest: Number(v.portion)});
      if (v.cpu) spec.cpuCoreRequest = Number(v.cpu);
      if (v.memory.trim()) spec.cpuMemoryRequest = v.memory.trim();
      await api('POST', '/api/v1/asset/compute', {meta: metaOf(v), spec});
      ctx.flash(`Created the compute resource ${v.name.trim()}.`);
      ctx.kick();
    },
  });
}
