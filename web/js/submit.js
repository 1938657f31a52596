// submit.js: the Submit workload form, for the four types (training,
// workspace, distributed training, inference): name (checked as it is
// typed: its form, and whether the project already has it), project (with
// its free quota per node pool, and what this request does to it, shown as
// the form is filled), image, command, arguments, GPUs (devices, a portion
// of each, or an amount of GPU memory), CPU and memory, node pools in
// order of preference, node type, topology levels (required and preferred:
// the levels of the network topologies, docs/scheduler.md), environment
// variables, priority and
// preemptibility, and per type: parallel pods (training), workers and
// framework (distributed), replicas (inference). It may start from a
// workload template, an environment and a compute resource (their values
// fill the fields, which override them: what is sent goes over the
// assets' own, field by field, and the workload keeps which it came
// from). The chosen project's effective policy for the chosen type
// (policy.js) fills its defaults into the fields not yet changed, shows its
// limits beside them, and flags a value that breaks a rule as it is typed
// (Submit then sends nothing). The server's refusals are shown in plain
// words inside the form, which stays open.

import {api, get, withQuery, currentSession} from './api.js';
import {h, fill, fillIn, gpu, formDialog, formRow, errorText, newId} from './dom.js';
import {projectPolicy, breach, ruleWords, valueAt} from './policy.js';

const PATH_OF_TYPE = {Training: 'trainings', Workspace: 'workspaces', Distributed: 'distributed',
  Inference: 'inferences'};
const PRIORITIES = ['very-low', 'low', 'medium-low', 'medium', 'medium-high', 'high', 'very-high',
  'train', 'build', 'interactive-preemptible', 'inference'];
// Run:ai's defaults: trainings are preemptible, workspaces and inference not.
const PREEMPTIBLE_BY_DEFAULT = {Training: true, Distributed: true, Workspace: false, Inference: false};
const FRAMEWORKS = ['PyTorch', 'MPI', 'TF', 'XGBoost', 'JAX'];
const NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const gpus = (n) => `${gpu(n)} GPU${Number(n) === 1 ? '' : 's'}`;

function input(attrs) {
  return h('input', {autocomplete: 'off', ...attrs});
}

function choice(name, options, value) {
  return h('select', {name}, options.map((o) => (typeof o === 'string'
    ? h('option', {value: o, selected: o === value}, o)
    : h('option', {value: o.value, selected: o.value === value}, o.label))));
}

// The GPUs a form asks for in all, as devices (memory requests: unknown).
function gpusAsked(v) {
  const pods = v.type === 'Distributed' ? Number(v.workers || 1) + 1
    : v.type === 'Training' ? Number(v.parallelism || 1)
      : v.type === 'Inference' ? Number(v.minReplicas || 1) : 1;
  if (v.gpuKind === 'memory') return {pods, perPod: null};
  const n = Number(v.gpus || 0);
  const perPod = v.gpuKind === 'portion' ? Number(v.portion || 0) * Math.max(1, n) : n;
  return {pods, perPod, total: perPod * pods};
}

// A project's quota, allocation and free quota per node pool.
export function projectPools(p) {
  const res = p.resources || [];
  const st = ((p.status || {}).nodePoolQuotaStatuses) || [];
  const names = [...new Set([...res.map((r) => r.nodePool && r.nodePool.name), ...st.map((s) => s.nodePoolName)])]
    .filter(Boolean);
  return names.map((name) => {
    const r = res.find((x) => x.nodePool && x.nodePool.name === name) || {};
    const s = st.find((x) => x.nodePoolName === name) || {};
    const quota = r.gpu ? Number(r.gpu.deserved ?? 0) : 0;
    const limit = r.gpu && r.gpu.limit !== undefined && r.gpu.limit !== null ? Number(r.gpu.limit) : -1;
    const alloc = Number((s.allocated && s.allocated.gpu) || 0);
    return {name, quota, limit, alloc, free: quota < 0 ? Infinity : Math.max(0, quota - alloc)};
  });
}

// The order in which the workload will try the node pools, as allotd does
// (scheduler/vocab.c sched_workload_pools): the pools it names, else its
// project's defaultNodePools, else its department's, else every pool: those
// where the project deserves GPUs first, then the others, each in the order
// they were created.
export function poolOrder(p, departments, pools, chosen) {
  if (chosen && chosen.length) return chosen.slice();
  if (p.defaultNodePools && p.defaultNodePools.length) return p.defaultNodePools.slice();
  const d = departments.find((x) => x.id === p.parentId);
  if (d && d.defaultNodePools && d.defaultNodePools.length) return d.defaultNodePools.slice();
  const deserves = (name) => (p.resources || []).some((r) =>
    r.nodePool && r.nodePool.name === name && r.gpu && Number(r.gpu.deserved) > 0);
  const created = pools.slice().sort((a, b) => Number(a.id) - Number(b.id)).map((x) => x.name);
  return created.filter(deserves).concat(created.filter((n) => !deserves(n)));
}

// Each pool of `order` judged for the request: 'quota' (within the free
// quota), 'over' (beyond it but within the limit, with the GPUs idle
// there now), 'limit' (beyond the limit), 'full' (beyond the free quota
// and not idle there).
export function judgePools(order, rows, idleOf, ask, preemptible) {
  return order.map((name) => {
    const r = rows.find((x) => x.name === name) || {name, quota: 0, limit: -1, alloc: 0, free: 0};
    const idle = idleOf(name);
    if (ask.total === undefined) return {name, r, idle, state: 'unknown'};
    const underLimit = r.limit < 0 || r.alloc + ask.total <= r.limit;
    if (!underLimit) return {name, r, idle, state: 'limit'};
    if (ask.total <= r.free) return {name, r, idle, state: 'quota'};
    if (preemptible && (idle === null || idle >= ask.total)) return {name, r, idle, state: 'over'};
    return {name, r, idle, state: 'full'};
  });
}

// The sentence under the table: which pool the request fits in, or where
// it would run over quota (and so be preemptible), or why it would wait.
export function quotaVerdict(project, ask, preemptible, judged, named) {
  const order = judged.map((j) => j.name);
  const orderText = order.length
    ? `Tried in this order (${named ? 'the pools chosen below' : 'the project\'s node pools'}): ${order.join(' → ')}.`
    : 'No node pool to try.';
  const req = ask.total === undefined ? '' : `This request (${gpus(ask.total)})`;
  if (ask.total === undefined) {
    return {kind: 'ok', orderText, text: 'A GPU memory request is charged by the share of a device it takes.'};
  }
  const before = (i) => (i > 0 ? ` (not in ${judged.slice(0, i).map((j) => `${j.name}: ${why(j)}`).join('; ')})` : '');
  for (let i = 0; i < judged.length; i++) {
    const j = judged[i];
    if (j.state === 'quota') {
      return {kind: 'ok', pool: j.name, orderText, text: `${req} fits in ${project}'s free quota in node pool ` +
        `${j.name} (${j.r.free === Infinity ? 'unlimited' : gpu(j.r.free)} free)${before(i)}.`};
    }
    if (j.state === 'over') {
      return {kind: 'warn', pool: j.name, orderText, text: `${req} is more than ${project}'s free quota in node pool ` +
        `${j.name} (${gpu(j.r.free)} free)${before(i)}: it would run there over quota, as a preemptible ` +
        'workload, and be preempted when the GPUs\' owners need them.'};
    }
  }
  const all = judged.map((j) => `${j.name}: ${why(j)}`).join('; ');
  return {kind: 'bad', orderText, text: `${req} fits in none of ${project}'s node pools (${all || 'none'}): ` +
    (preemptible ? 'it would wait until GPUs free up.'
      : 'a non-preemptible workload runs only within quota, so it would wait.')};
}

function why(j) {
  if (j.state === 'limit') return `its limit is ${gpu(j.r.limit)}`;
  if (j.state === 'full') return j.r.free > 0 ? `${gpu(j.r.free)} free quota` : 'no free quota';
  return `${gpu(j.r.free)} free`;
}

export async function submitForm(ctx, projects, currentProject, opened) {
  if (!projects.length) {
    ctx.showError(new Error('There is no project you can submit to.'));
    return;
  }
  let nodes = [];
  let pools = [];
  let poolInfo = [];
  let departments = [];
  let assets = {environment: [], compute: [], template: []};
  let levels = [];
  const entries = (path) => get(path).then((r) => r.entries || []).catch(() => []);
  try {
    const [n, p, d, envs, comps, tpls, t] = await Promise.all([get('/api/v1/nodes'), get('/api/v1/node-pools'),
      get('/api/v1/org-unit/departments').catch(() => ({departments: []})),
      entries('/api/v1/asset/environment'), entries('/api/v1/asset/compute'),
      entries('/api/v1/workload-templates'),
      get('/api/v1/network-topologies').catch(() => ({networkTopologies: []}))]);
    nodes = n.nodes || [];
    levels = [...new Set((t.networkTopologies || []).flatMap((x) => x.levels || []))];
    poolInfo = p.nodepools || [];
    pools = poolInfo.map((x) => x.name).sort();
    departments = d.departments || [];
    assets = {environment: envs, compute: comps, template: tpls};
  } catch (e) {
    ctx.showError(e);
  }
  // GPUs idle now in a pool: its ready nodes' GPUs less those allocated
  const idleOf = (pool) => {
    const mine = nodes.filter((n) => n.nodePool === pool && n.status === 'Ready');
    if (!mine.length) return nodes.length ? 0 : null;
    return mine.reduce((s, n) => s + Number((n.gpuInfo && n.gpuInfo.gpuCount) || 0) - Number(n.allocatedGpus || 0), 0);
  };
  const nodeTypes = [...new Set(nodes.map((n) => n.nodeType).filter(Boolean))].sort();
  const start = projects.find((p) => p.name === currentProject) || projects[0];

  const pick = (name, list, what) => choice(name, [{value: '', label: `No ${what}`},
    ...list.map((a) => ({value: a.meta.id, label: `${a.meta.name} (${a.meta.scope || a.meta.scopeType}` +
      `${a.meta.projectName ? ` ${a.meta.projectName}` : ''})`}))], '');
  const f = {
    template: pick('template', assets.template, 'template'),
    environment: pick('environment', assets.environment, 'environment'),
    computeAsset: pick('computeAsset', assets.compute, 'compute resource'),
    type: choice('type', Object.keys(PATH_OF_TYPE), 'Training'),
    name: input({name: 'name', required: true, placeholder: 'train-1', 'aria-describedby': 'sf-name-check'}),
    project: choice('project', projects.map((p) => ({value: p.id, label: p.name})), start.id),
    image: input({name: 'image', required: true, value: 'runai.jfrog.io/demo/quickstart'}),
    command: input({name: 'command', placeholder: 'python'}),
    args: input({name: 'args', placeholder: 'train.py --epochs 3'}),
    workingDir: input({name: 'workingDir', placeholder: '/workspace'}),
    gpuKind: choice('gpuKind', [{value: 'devices', label: 'Whole GPUs'},
      {value: 'portion', label: 'A portion of each GPU'}, {value: 'memory', label: 'GPU memory'}], 'devices'),
    gpus: input({name: 'gpus', type: 'number', min: 0, max: 64, step: 1, value: 1}),
    portion: input({name: 'portion', type: 'number', min: 0.01, max: 1, step: 'any', value: 0.5}),
    gpuMemory: input({name: 'gpuMemory', placeholder: '20G', value: '20G'}),
    cpu: input({name: 'cpu', type: 'number', min: 0, step: 'any', placeholder: 'none'}),
    memory: input({name: 'memory', placeholder: '8G'}),
    nodeType: choice('nodeType', [{value: '', label: 'Any'}, ...nodeTypes.map((t) => ({value: t, label: t}))], ''),
    required: choice('requiredPlacement', [{value: '', label: 'None'}, ...levels.map((l) => ({value: l, label: l}))], ''),
    preferred: choice('preferredPlacement', [{value: '', label: 'None (distributed: the narrowest level)'},
      ...levels.map((l) => ({value: l, label: l}))], ''),
    priority: choice('priority', [{value: '', label: 'Default for the type'},
      ...PRIORITIES.map((p) => ({value: p, label: p}))], ''),
    preemptibility: choice('preemptibility', [{value: '', label: 'Default for the type'},
      {value: 'preemptible', label: 'Preemptible (may use idle GPUs beyond quota)'},
      {value: 'non-preemptible', label: 'Non-preemptible (within quota only)'}], ''),
    parallelism: input({name: 'parallelism', type: 'number', min: 1, max: 1000, step: 1, value: 1}),
    workers: input({name: 'workers', type: 'number', min: 1, max: 1000, step: 1, value: 2}),
    framework: choice('framework', FRAMEWORKS, 'PyTorch'),
    minReplicas: input({name: 'minReplicas', type: 'number', min: 1, max: 1000, step: 1, value: 1}),
    maxReplicas: input({name: 'maxReplicas', type: 'number', min: 1, max: 1000, step: 1, value: 1}),
  };
  const nameCheck = h('small', {class: 'hint', id: 'sf-name-check', 'aria-live': 'polite'},
    'lowercase letters, digits and -; unique in the project');
  const quotaBox = h('div', {class: 'quota-box', id: 'sf-quota', 'aria-live': 'polite'});
  const poolList = h('ol', {class: 'ordered-pick', id: 'sf-pools', 'aria-label': 'Node pools, in order of preference'});
  const envList = h('div', {class: 'env-list', id: 'sf-env'});
  const chosenPools = [];
  const env = [];
  const row = (label, el, hint, cls) => formRow(label, el, hint, cls);
  const byType = {
    Training: row('Parallel pods', f.parallelism, 'pods that run at once', 'only-training'),
    DistributedW: row('Workers', f.workers, 'worker pods, plus one master', 'only-distributed'),
    DistributedF: row('Framework', f.framework, null, 'only-distributed'),
    InferenceMin: row('Minimum replicas', f.minReplicas, null, 'only-inference'),
    InferenceMax: row('Maximum replicas', f.maxReplicas, null, 'only-inference'),
  };
  const body = [
    row('Type', f.type),
    h('h3', {class: 'form-heading'}, 'Start from'),
    row('Template', f.template, 'its type\'s templates: its assets and values, under what follows'),
    row('Environment', f.environment, 'fills the image, command and arguments below; change them to override'),
    row('Compute resource', f.computeAsset, 'fills the compute below; change it to override'),
    h('div', {class: 'form-row'}, h('label', {for: (f.name.id = newId('f'))}, 'Name'), f.name, nameCheck),
    row('Project', f.project),
    quotaBox,
    row('Image', f.image),
    row('Command', f.command),
    row('Arguments', f.args),
    row('Working directory', f.workingDir),
    h('h3', {class: 'form-heading'}, 'Compute'),
    row('GPU request', f.gpuKind),
    row('GPU devices', f.gpus, 'GPUs per pod', 'gpu-devices'),
    row('GPU portion per device', f.portion, 'e.g. 0.5 for half a GPU', 'gpu-portion'),
    row('GPU memory per pod', f.gpuMemory, 'e.g. 20G or 40Gi', 'gpu-memory'),
    row('CPU cores', f.cpu, 'per pod; empty for none'),
    row('CPU memory', f.memory, 'per pod, e.g. 8G; empty for none'),
    byType.Training, byType.DistributedW, byType.DistributedF, byType.InferenceMin, byType.InferenceMax,
    h('h3', {class: 'form-heading'}, 'Placement'),
    h('div', {class: 'form-row'}, h('span', {class: 'label'}, 'Node pools'), poolList,
      h('small', {class: 'hint'}, 'tick the pools to try, first choice on top; none: the project\'s default')),
    row('Node type', f.nodeType, nodeTypes.length ? null : 'no node declares a type'),
    row('Required placement', f.required,
      levels.length ? 'every pod inside one domain of this level, or it waits' : 'no network topology is defined'),
    row('Preferred placement', f.preferred, 'inside one domain of this level if it can'),
    row('Priority', f.priority),
    row('Preemptibility', f.preemptibility),
    h('h3', {class: 'form-heading'}, 'Environment variables'),
    envList,
  ];

  const values = () => ({type: f.type.value, name: f.name.value.trim(), project: f.project.value,
    gpuKind: f.gpuKind.value, gpus: f.gpus.value, portion: f.portion.value, gpuMemory: f.gpuMemory.value,
    parallelism: f.parallelism.value, workers: f.workers.value, minReplicas: f.minReplicas.value,
    preemptibility: f.preemptibility.value, priority: f.priority.value});

  function drawPools() {
    const order = [...chosenPools, ...pools.filter((p) => !chosenPools.includes(p))];
    fillIn(poolList, order.map((p) => {
      const on = chosenPools.includes(p);
      const i = chosenPools.indexOf(p);
      return h('li', {dataset: {key: p}},
        h('label', {}, h('input', {type: 'checkbox', name: `pool-${p}`, checked: on, onchange: (e) => {
          if (e.target.checked) chosenPools.push(p); else chosenPools.splice(chosenPools.indexOf(p), 1);
          drawPools();
          drawQuota();
        }}), ` ${on ? `${i + 1}. ` : ''}${p}`),
        on ? h('span', {class: 'move'},
          h('button', {type: 'button', class: 'small', disabled: i === 0, 'aria-label': `Move ${p} up`,
            onclick: () => { chosenPools.splice(i, 1); chosenPools.splice(i - 1, 0, p); drawPools(); drawQuota(); }}, '↑'),
          h('button', {type: 'button', class: 'small', disabled: i === chosenPools.length - 1,
            'aria-label': `Move ${p} down`,
            onclick: () => { chosenPools.splice(i, 1); chosenPools.splice(i + 1, 0, p); drawPools(); drawQuota(); }}, '↓'))
          : null);
    }));
  }

  function drawEnv() {
    fillIn(envList, env.map((e, i) => h('div', {class: 'env-row', dataset: {key: String(e.k)}},
      input({name: `env-name-${e.k}`, 'aria-label': `Variable ${i + 1} name`, placeholder: 'NAME', value: e.name,
        oninput: (ev) => { e.name = ev.target.value; }}),
      input({name: `env-value-${e.k}`, 'aria-label': `Variable ${i + 1} value`, placeholder: 'value', value: e.value,
        oninput: (ev) => { e.value = ev.target.value; }}),
      h('button', {type: 'button', class: 'small', 'aria-label': `Remove variable ${i + 1}`,
        onclick: () => { env.splice(i, 1); drawEnv(); }}, 'Remove'))),
    h('button', {type: 'button', class: 'small', id: 'sf-env-add', dataset: {key: 'add'},
      onclick: () => { env.push({k: Date.now() + Math.random(), name: '', value: ''}); drawEnv(); }},
    'Add a variable'));
  }

  // The project's free quota, judged pool by pool in the order the
  // workload will try them (see poolOrder), against what the form asks
  // for: the first pool whose free quota holds it, or where it would run
  // over quota (preemptible, and the pool has the GPUs idle), or why it
  // would wait. A workload runs in one pool: free quota is never summed.
  function drawQuota() {
    const v = values();
    const p = projects.find((x) => x.id === v.project);
    if (!p) { fill(quotaBox); return; }
    const rows = projectPools(p);
    const ask = gpusAsked(v);
    const preemptible = v.preemptibility ? v.preemptibility === 'preemptible'
      : v.priority ? !['build', 'inference', 'high', 'very-high'].includes(v.priority)
        : PREEMPTIBLE_BY_DEFAULT[v.type];
    const order = poolOrder(p, departments, poolInfo, chosenPools);
    const judged = judgePools(order, rows, idleOf, ask, preemptible);
    const verdict = quotaVerdict(p.name, ask, preemptible, judged, chosenPools.length > 0);
    const inOrder = [...order.map((name, i) => ({name, i})),
      ...rows.filter((r) => !order.includes(r.name)).map((r) => ({name: r.name, i: -1}))];
    fillIn(quotaBox,
      h('table', {class: 'data compact', 'aria-label': `Free quota of ${p.name}`},
        h('thead', {}, h('tr', {}, ['Order', 'Node pool', 'Quota', 'Allocated', 'Free quota', 'Limit', 'Idle GPUs']
          .map((c, i) => h('th', {scope: 'col', class: i > 1 ? 'num' : null}, c)))),
        h('tbody', {}, inOrder.length ? inOrder.map(({name, i}) => {
          const r = rows.find((x) => x.name === name) || {name, quota: 0, limit: -1, alloc: 0, free: 0};
          const idle = idleOf(name);
          return h('tr', {dataset: {key: name}, class: [verdict.pool === name ? 'chosen' : '', i < 0 ? 'muted' : '']
            .join(' ').trim() || null},
          h('td', {}, i < 0 ? 'not tried' : `${i + 1}.`),
          h('th', {scope: 'row'}, name), h('td', {class: 'num'}, r.quota < 0 ? 'unlimited' : gpu(r.quota)),
          h('td', {class: 'num'}, gpu(r.alloc)), h('td', {class: 'num'}, r.free === Infinity ? 'unlimited' : gpu(r.free)),
          h('td', {class: 'num'}, r.limit < 0 ? 'none' : gpu(r.limit)),
          h('td', {class: 'num'}, idle === null ? '-' : gpu(idle)));
        })
          : h('tr', {}, h('td', {colspan: 7}, `${p.name} has no quota in any pool.`)))),
      h('p', {class: 'hint', id: 'sf-order'}, verdict.orderText),
      h('p', {class: `verdict ${verdict.kind}`, id: 'sf-verdict'}, verdict.text));
  }

  function drawType() {
    const t = f.type.value;
    dlg.dataset.type = t;
    dlg.dataset.gpuKind = f.gpuKind.value;
    drawQuota();
  }

  // The name: its form at once, whether the project has it after a pause.
  let nameTimer = null;
  let nameSeq = 0;
  function checkName() {
    clearTimeout(nameTimer);
    const v = f.name.value.trim();
    const mine = ++nameSeq;
    const say = (text, kind) => { nameCheck.textContent = text; nameCheck.className = `hint ${kind || ''}`; };
    f.name.setCustomValidity('');
    if (!v) { say('lowercase letters, digits and -; unique in the project'); return; }
    if (v.length > 63 || !NAME_RE.test(v)) {
      const why = v.length > 63 ? 'at most 63 characters' : /[A-Z]/.test(v) ? 'no capital letters'
        : /^-|-$/.test(v) ? 'no - at the start or end' : 'only lowercase letters, digits and -';
      say(`Not a valid name: ${why}.`, 'bad');
      f.name.setCustomValidity(`Not a valid name: ${why}.`);
      return;
    }
    say('Checking…');
    nameTimer = setTimeout(async () => {
      try {
        const r = await get(withQuery('/api/v1/workloads/count', {filterBy: [`name==${v}`, `projectId==${f.project.value}`]}));
        if (mine !== nameSeq) return;
        const p = projects.find((x) => x.id === f.project.value);
        if (Number(r.count) > 0) {
          say(`${p ? p.name : 'This project'} already has a workload named ${v}.`, 'bad');
          f.name.setCustomValidity('The name is taken.');
        } else {
          say(`${v} is free in ${p ? p.name : 'this project'}.`, 'ok');
        }
      } catch (e) {
        if (mine === nameSeq) say(`Could not check the name: ${errorText(e)}`, 'warn');
      }
    }, 250);
  }

  const dlg = formDialog({
    title: 'Submit a workload',
    submitLabel: 'Submit',
    wide: true,
    body,
    preview: (_v, signal) => dryRun(ctx, request(), signal, f.name),
    onSubmit: async () => {
      const {v, path, body} = request();
      const broken = policy.breaches(body.spec);
      if (broken.length) {
        throw new Error('The project\'s policy refuses the form (nothing was sent): ' +
          `${broken.map((b) => `${b.path}: ${b.text}`).join('; ')}.`);
      }
      try {
        const res = await api('POST', path, body);
        ctx.flash(`Submitted ${v.type.toLowerCase()} ${body.name} as ${currentSession().user}.`);
        if (opened) opened((res && (res.workloadId || res.id)) || '');
      } catch (e) {
        throw plain(e, v, projects);
      }
    },
  });

  // The form's values, the creation path and its request body.
  function request() {
    const v = values();
    const compute = {};
    if (v.gpuKind === 'memory') {
      compute.gpuRequestType = 'memory';
      compute.gpuMemoryRequest = f.gpuMemory.value.trim();
      compute.gpuDevicesRequest = Math.max(1, Number(v.gpus || 1));
    } else if (v.gpuKind === 'portion') {
      compute.gpuRequestType = 'portion';
      compute.gpuPortionRequest = Number(v.portion);
      compute.gpuDevicesRequest = Math.max(1, Number(v.gpus || 1));
    } else {
      compute.gpuDevicesRequest = Number(v.gpus || 0);
    }
    if (f.cpu.value !== '') compute.cpuCoreRequest = Number(f.cpu.value);
    if (f.memory.value.trim()) compute.cpuMemoryRequest = f.memory.value.trim();
    const spec = {image: f.image.value.trim(), compute};
    if (f.command.value.trim()) spec.command = f.command.value.trim();
    if (f.args.value.trim()) spec.args = f.args.value.trim();
    if (f.workingDir.value.trim()) spec.workingDir = f.workingDir.value.trim();
    if (v.priority) spec.priorityClass = v.priority;
    if (v.preemptibility) spec.preemptibility = v.preemptibility;
    if (chosenPools.length) spec.nodePools = chosenPools.slice();
    if (f.nodeType.value) spec.nodeType = f.nodeType.value;
    if (f.required.value || f.preferred.value) {
      spec.topology = {};
      if (f.required.value) spec.topology.requiredPlacement = f.required.value;
      if (f.preferred.value) spec.topology.preferredPlacement = f.preferred.value;
    }
    const vars = env.filter((e) => e.name.trim());
    if (vars.length) spec.environmentVariables = vars.map((e) => ({name: e.name.trim(), value: e.value}));
    if (v.type === 'Training' && Number(v.parallelism) > 1) spec.parallelism = Number(v.parallelism);
    if (v.type === 'Distributed') {
      spec.numWorkers = Number(v.workers);
      spec.distributedFramework = f.framework.value;
    }
    if (v.type === 'Inference') {
      spec.autoscaling = {minReplicas: Number(v.minReplicas), maxReplicas: Number(f.maxReplicas.value)};
    }
    const body = {name: v.name, projectId: v.project, clusterId: ctx.clusterId, spec};
    if (f.template.value) body.templateId = f.template.value;
    if (f.environment.value || f.computeAsset.value) {
      body.assets = {};
      if (f.environment.value) body.assets.environment = f.environment.value;
      if (f.computeAsset.value) body.assets.compute = f.computeAsset.value;
    }
    return {v, path: `/api/v1/workloads/${PATH_OF_TYPE[v.type]}`, body};
  }

  // An asset picked: its values into the fields, where they can be changed
  // (what is sent over the asset's own, field by field).
  const specOf = (list, id) => ((list.find((a) => a.meta.id === id) || {}).spec || {});
  function fillEnvironment() {
    const s = specOf(assets.environment, f.environment.value);
    if (s.image) f.image.value = s.image;
    f.command.value = s.command || '';
    f.args.value = s.args || '';
    if (s.workingDir) f.workingDir.value = s.workingDir;
  }
  function fillCompute() {
    const s = specOf(assets.compute, f.computeAsset.value);
    f.gpuKind.value = s.gpuMemoryRequest ? 'memory' : s.gpuPortionRequest ? 'portion' : 'devices';
    f.gpus.value = s.gpuDevicesRequest ?? (s.gpuPortionRequest || s.gpuMemoryRequest ? 1 : 0);
    if (s.gpuPortionRequest) f.portion.value = s.gpuPortionRequest;
    if (s.gpuMemoryRequest) f.gpuMemory.value = s.gpuMemoryRequest;
    f.cpu.value = s.cpuCoreRequest ?? '';
    f.memory.value = s.cpuMemoryRequest || '';
    drawType();
  }
  function fillTemplate() {
    const t = assets.template.find((a) => a.meta.id === f.template.value);
    if (!t) return;
    f.type.value = t.meta.workloadType in PATH_OF_TYPE ? t.meta.workloadType : f.type.value;
    const ids = t.assets || {};
    if (ids.environment) { f.environment.value = ids.environment; fillEnvironment(); }
    if (ids.compute) { f.computeAsset.value = ids.compute; fillCompute(); }
    const ts = t.spec || {};
    for (const k of ['command', 'args', 'workingDir']) if (ts[k]) f[k].value = ts[k];
    drawType();
  }
  dlg.id = 'submit-dialog';
  const policy = policyView(f, {pools, chosenPools, poolList, drawPools, drawType, after: quotaBox,
    spec: () => request().body.spec, form: dlg});
  f.environment.onchange = () => { fillEnvironment(); policy.keep(['image', 'command', 'args', 'workingDir']); };
  f.computeAsset.onchange = () => { fillCompute(); policy.keep(COMPUTE_PATHS); };
  f.template.onchange = () => {
    fillTemplate();
    policy.keep(['image', 'command', 'args', 'workingDir', ...COMPUTE_PATHS]);
    policy.load(projects, departments);
  };
  f.type.onchange = () => { drawType(); policy.load(projects, departments); };
  f.gpuKind.onchange = drawType;
  f.project.onchange = () => { drawQuota(); checkName(); policy.load(projects, departments); };
  for (const x of [f.gpus, f.portion, f.parallelism, f.workers, f.minReplicas, f.priority, f.preemptibility]) {
    x.addEventListener(x.tagName === 'SELECT' ? 'change' : 'input', drawQuota);
  }
  f.name.oninput = checkName;
  drawPools();
  drawEnv();
  drawType();
  policy.load(projects, departments);
  f.name.focus();
}

const COMPUTE_PATHS = ['compute.gpuDevicesRequest', 'compute.gpuRequestType', 'compute.gpuPortionRequest',
  'compute.gpuMemoryRequest', 'compute.cpuCoreRequest', 'compute.cpuMemoryRequest'];

// The form's fields a policy speaks of: the policy's path, the field's key
// in the form (nodePools: the pool list).
const POLICY_INPUTS = [
  ['image', 'image'], ['command', 'command'], ['args', 'args'], ['workingDir', 'workingDir'],
  ['nodeType', 'nodeType'], ['priorityClass', 'priority'], ['preemptibility', 'preemptibility'],
  ['distributedFramework', 'framework'], ['numWorkers', 'workers'], ['parallelism', 'parallelism'],
  ['compute.gpuDevicesRequest', 'gpus'], ['compute.gpuRequestType', 'gpuKind'],
  ['compute.gpuPortionRequest', 'portion'], ['compute.gpuMemoryRequest', 'gpuMemory'],
  ['compute.cpuCoreRequest', 'cpu'], ['compute.cpuMemoryRequest', 'memory'],
];

const shown = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

// The Submit form's side of the chosen project's policy (policy.js): load()
// reads it for the form's project and type and puts its defaults in the
// fields not changed by hand or by an asset (keep()); beside each field, a
// hint with its default and limits, or what breaks them as it is typed;
// the policy's other fields and every breach in a box under the quota.
// breaches(spec): what the spec the form would send breaks.
function policyView(f, form) {
  const box = h('div', {class: 'policy-box', id: 'sf-policy', 'aria-live': 'polite'});
  form.after.after(box);
  const els = Object.fromEntries(POLICY_INPUTS.map(([path, key]) => [path, f[key]]));
  els.nodePools = form.poolList;
  const hints = {};
  const changed = new Set();
  // what a field held before a policy's default went in, to go back to
  // when the next project or type has no default there
  const before = new Map();
  for (const [path, el] of Object.entries(els)) {
    hints[path] = h('small', {class: 'hint policy', id: `sf-policy-${path.replace('.', '-')}`, hidden: true});
    el.closest('.form-row').append(hints[path]);
    el.addEventListener(el.tagName === 'SELECT' || el.tagName === 'OL' ? 'change' : 'input', () => changed.add(path));
  }
  let rows = [];
  let about = '';
  let seq = 0;

  function put(path, def) {
    if (path === 'nodePools') {
      form.chosenPools.splice(0, form.chosenPools.length, ...def.filter((x) => form.pools.includes(x)));
      form.drawPools();
      return;
    }
    const el = els[path];
    const v = String(def);
    if (!el) return;
    if (el.tagName === 'SELECT' && ![...el.options].some((o) => o.value === v)) {
      if (el === f.gpuKind) return; // a request type the form has no field for
      el.append(h('option', {value: v}, v));
    }
    el.value = v;
  }

  // a portion or an amount of GPU memory by default: the form asks for that kind
  function kindOfDefaults() {
    const has = (p) => rows.some((r) => r.path === p && r.def !== undefined);
    const kind = has('compute.gpuPortionRequest') ? 'portion' : has('compute.gpuMemoryRequest') ? 'memory' : '';
    if (!kind || changed.has('compute.gpuRequestType') || has('compute.gpuRequestType')) return;
    if (!before.has('compute.gpuRequestType')) before.set('compute.gpuRequestType', f.gpuKind.value);
    f.gpuKind.value = kind;
  }

  function breaches(spec) {
    return rows.map((r) => ({path: r.path, text: breach(r, valueAt(spec, r.path))})).filter((b) => b.text);
  }

  function check() {
    const broken = breaches(form.spec());
    const rest = [];
    for (const [path, hint] of Object.entries(hints)) {
      const r = rows.find((x) => x.path === path);
      const bad = broken.find((b) => b.path === path);
      hint.hidden = !r;
      els[path].removeAttribute('aria-invalid');
      if (!r) continue;
      hint.className = `hint policy ${bad ? 'bad' : ''}`.trim();
      hint.textContent = bad ? `Breaks the policy: ${bad.text}.` : `Policy: ${said(r)}.`;
      if (bad) els[path].setAttribute('aria-invalid', 'true');
    }
    for (const r of rows) if (!hints[r.path]) rest.push(`${r.path}: ${said(r)}`);
    fillIn(box, about ? h('p', {class: 'hint'}, about) : null,
      rest.length ? h('p', {class: 'hint', id: 'sf-policy-rest'}, `Also set by the policy: ${rest.join('; ')}.`) : null,
      broken.length ? h('p', {class: 'verdict bad', id: 'sf-policy-verdict'},
        `The policy refuses ${broken.map((b) => `${b.path}: ${b.text}`).join('; ')}. Change ` +
        `${broken.length === 1 ? 'it' : 'them'} to submit.`) : null);
  }

  const said = (r) => [r.def !== undefined ? `default ${shown(r.def)} (set by ${r.defFrom})` : '',
    r.rule && ruleWords(r.rule) ? `${ruleWords(r.rule)} (set by ${r.ruleFrom})` : ''].filter(Boolean).join('; ');

  async function load(projects, departments) {
    const mine = ++seq;
    const p = projects.find((x) => x.id === f.project.value);
    if (!p) return;
    const d = departments.find((x) => x.id === p.parentId);
    const dept = (p.parent && p.parent.name) || (d && d.name) || '';
    try {
      const pol = await projectPolicy(p, dept, f.type.value);
      if (mine !== seq) return;
      rows = pol.rows;
      about = rows.length ? `The ${f.type.value.toLowerCase()} policy of ${p.name}: its defaults are filled in, ` +
        'its limits shown beside the fields.' : '';
      for (const [path, was] of before) {
        if (changed.has(path) || rows.some((r) => r.path === path && r.def !== undefined)) continue;
        put(path, was);
        before.delete(path);
      }
      for (const r of rows) {
        if (r.def === undefined || changed.has(r.path) || !els[r.path]) continue;
        if (!before.has(r.path)) before.set(r.path, r.path === 'nodePools' ? form.chosenPools.slice() : els[r.path].value);
        put(r.path, r.def);
      }
      kindOfDefaults();
      form.drawType();
    } catch (e) {
      if (mine !== seq) return;
      rows = [];
      about = `Could not read the policy of ${p.name}: ${errorText(e)}. The server still applies it.`;
    }
    check();
  }

  form.form.addEventListener('input', check);
  form.form.addEventListener('change', check);
  form.form.addEventListener('click', check); // the pool order's buttons
  return {load, breaches, keep: (paths) => paths.forEach((p) => changed.add(p))};
}

// What the next scheduling turn would do with the form's workload
// (?dryRun=true: nothing is submitted), in one sentence; '' until it has
// a name and an image.
async function dryRun(ctx, {v, path, body}, signal, nameInput) {
  if (!v.name || !body.spec.image) return '';
  // an invalid or taken name: the server would only refuse it (a 400)
  if (v.name.length > 63 || !NAME_RE.test(v.name) || (nameInput && nameInput.validationMessage)) return '';
  const a = await api('POST', `${path}?dryRun=true`, body, {signal});
  if (!a.wouldRun) return `Would wait: ${a.pendingMessage || a.pendingReason}`;
  const nodes = [...new Set(a.pods.map((p) => p.nodeName))].join(', ');
  const victims = a.evictions.map((e) => `${e.description} (${e.reason})`);
  return `Would start now on ${nodes} in node pool ${a.nodePool}` +
    (victims.length ? `; it would stop ${victims.join(', ')}` : '') + '.';
}

// The server's refusal in plain words (the server's own text kept after).
function plain(e, v, projects) {
  const p = projects.find((x) => x.id === v.project);
  const pn = p ? p.name : 'the project';
  let lead = null;
  if (e.status === 409 || (e.status === 400 && /already|taken|exists/i.test(`${e.message} ${e.details}`))) {
    lead = `${pn} already has a workload named ${v.name}: choose another name.`;
  } else if (e.status === 403) {
    lead = `You may not submit workloads to ${pn}: ask an administrator for an access rule there.`;
  } else if (e.status === 400) {
    lead = `The server refused the form: ${e.details || e.message}.`;
  }
  if (!lead) return e;
  const out = new Error(lead);
  out.status = undefined;
  return out;
}
