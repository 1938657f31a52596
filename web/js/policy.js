// policy.js: a project's effective workload policy as the dashboard reads
// it, for the Policies page and the Submit form: the fields a policy may
// speak of (the same table as api/policy.c), the project's effective
// defaults and rules (GET /api/v2/policy/{type}?scope=project&projectId=),
// the scope each comes from, and whether a value keeps a rule (the
// server's own checks, so a breach is flagged before it is sent).
//
// Where each comes from: a rule's scope is in the answer (sourceOfRule).
// A default's is not (Run:ai's effective defaults carry none), so it is
// the lowest scope whose own policy has it: the project's own (in the
// same answer), then the department's and the tenant's own (their GETs),
// as the server merges them (docs/allotd.md, "Policies"). A scope the
// user may not read leaves it said as "department or tenant".

import {get} from './api.js';

// The workload types with a policy, their route segment and section.
export const POLICY_TYPES = [
  {type: 'Training', segment: 'trainings', label: 'Training'},
  {type: 'Workspace', segment: 'workspaces', label: 'Workspace'},
  {type: 'Distributed', segment: 'distributed', label: 'Distributed training'},
  {type: 'Inference', segment: 'inferences', label: 'Inference'},
];

const STR = 'string';
const ARR = 'strings';
const INT = 'integer';
const NUM = 'number';
const QTY = 'quantity';
const ALL = ['Training', 'Workspace', 'Distributed', 'Inference'];

// Every field a policy may speak of: its path, kind and workload types.
export const POLICY_FIELDS = [
  ['image', STR, ALL], ['imagePullPolicy', STR, ALL], ['command', STR, ALL], ['args', STR, ALL],
  ['workingDir', STR, ALL], ['nodeType', STR, ALL], ['nodePools', ARR, ALL],
  ['priorityClass', STR, ALL], ['preemptibility', STR, ALL],
  ['terminationGracePeriodSeconds', INT, ALL],
  ['backoffLimit', INT, ['Training', 'Workspace', 'Distributed']],
  ['parallelism', INT, ['Training']], ['completions', INT, ['Training']],
  ['distributedFramework', STR, ['Distributed']], ['numWorkers', INT, ['Distributed']],
  ['minReplicas', INT, ['Distributed']], ['maxReplicas', INT, ['Distributed']],
  ['compute.gpuDevicesRequest', INT, ALL], ['compute.gpuRequestType', STR, ALL],
  ['compute.gpuPortionRequest', NUM, ALL], ['compute.gpuMemoryRequest', QTY, ALL],
  ['compute.cpuCoreRequest', NUM, ALL], ['compute.cpuMemoryRequest', QTY, ALL],
].map(([path, kind, types]) => ({path, kind, types}));

export const valueAt = (o, path) => path.split('.').reduce((x, k) => (x && typeof x === 'object' ? x[k] : undefined), o);
// a policy's defaults or rules hold the fields themselves, or under "worker" (distributed)
const section = (o, type) => (o && type === 'Distributed' ? o.worker : o);
const ownHas = (policy, part, type, path) => valueAt(section(policy && policy[part], type), path) !== undefined;

// A memory quantity ("20G", "40Gi", "1.5e9") in MiB, rounded up as the
// server reads it (common/quantity.c); NaN when it is not one.
const SUFFIX = {'': 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, Ki: 1024,
  Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5, Ei: 1024 ** 6};
export function quantityMiB(s) {
  const m = /^(\d{1,30}(?:\.\d{1,30})?)(?:[eE]\+?(\d{1,2}))?([kKMGTPE]i?)?$/.exec(String(s));
  if (!m || (m[3] && !(m[3] in SUFFIX))) return NaN;
  return Math.ceil(Number(m[1]) * 10 ** Number(m[2] || 0) * SUFFIX[m[3] || ''] / 1024 ** 2);
}

// A scope (sourceOfRule, or one of ours) in words: "project team-a".
export function scopeWords(src, names) {
  if (!src) return '';
  if (src.scope === 'project') return `project ${names.project || src.projectId || ''}`.trim();
  if (src.scope === 'department') return `department ${names.department || src.departmentId || ''}`.trim();
  return src.scope;
}

// A rule's limits in words: "min 1, max 4, step 1", "one of a, b",
// "required", "fixed" (canEdit false).
export function ruleWords(rule) {
  if (!rule) return '';
  const parts = ['min', 'max', 'step'].filter((k) => rule[k] !== undefined).map((k) => `${k} ${rule[k]}`);
  if (Array.isArray(rule.options) && rule.options.length) {
    parts.push(`one of ${rule.options.map((o) => o.value).join(', ')}`);
  }
  if (rule.required) parts.push('required');
  if (rule.canEdit === false) parts.push('fixed (canEdit false)');
  return parts.join(', ');
}

// The project's effective policy for type, field by field: [{path, kind,
// def, defFrom, rule, ruleFrom}] for the fields it has a default or a rule
// on, and the answer's effectiveUpdatedAt. project: {id, name, parentId};
// deptName: its department's name.
export async function projectPolicy(project, deptName, type, opts = {}) {
  const t = POLICY_TYPES.find((x) => x.type === type) || POLICY_TYPES[0];
  const base = `/api/v2/policy/${t.segment}`;
  const own = (q) => get(`${base}?${q}`, opts).then((a) => ({policy: (a && a.policy) || null}))
    .catch((e) => {
      if (e.name === 'AbortError') throw e;
      return {unknown: true};
    });
  const [mine, dept, tenant] = await Promise.all([
    get(`${base}?scope=project&projectId=${encodeURIComponent(project.id)}`, opts),
    project.parentId ? own(`scope=department&departmentId=${encodeURIComponent(project.parentId)}`)
      : {policy: null},
    own('scope=tenant'),
  ]);
  const names = {project: project.name, department: deptName};
  const eff = mine.effective || {};
  const defaults = section(eff.defaults, type);
  const rules = section(eff.rules, type);
  const chain = [{src: {scope: 'project'}, policy: mine.policy || null},
    {src: {scope: 'department'}, ...dept}, {src: {scope: 'tenant'}, ...tenant}];
  const rows = [];
  for (const f of POLICY_FIELDS.filter((x) => x.types.includes(type))) {
    const def = valueAt(defaults, f.path);
    const rule = valueAt(rules, f.path);
    if (def === undefined && rule === undefined) continue;
    let defFrom = '';
    if (def !== undefined) {
      const known = [];
      for (const c of chain) {
        if (c.unknown) { known.push(scopeWords(c.src, names)); continue; }
        if (ownHas(c.policy, 'defaults', type, f.path)) {
          defFrom = known.length ? [...known, scopeWords(c.src, names)].join(' or ') : scopeWords(c.src, names);
          break;
        }
      }
      if (!defFrom) defFrom = known.join(' or ') || 'unknown';
    }
    rows.push({...f, def, defFrom, rule, ruleFrom: rule ? scopeWords(rule.sourceOfRule, names) : ''});
  }
  return {rows, updatedAt: mine.effectiveUpdatedAt || null};
}

// What is wrong with value under row's rule and default, as the server
// judges it (api/policy.c, steps 1 to 4), or '' when nothing is. value:
// what the form would send ('' or undefined: left out, so the default
// applies).
export function breach(row, value) {
  const rule = row.rule;
  if (!rule) return '';
  const from = ` set by ${row.ruleFrom}`;
  const given = value !== undefined && value !== '' && !(Array.isArray(value) && !value.length);
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  if (rule.canEdit === false && given && (row.def === undefined || !same(value, row.def))) {
    return `fixed at ${row.def === undefined ? 'nothing' : JSON.stringify(row.def)} (canEdit false,${from})`;
  }
  const v = given ? value : row.def;
  if (v === undefined) return rule.required ? `required,${from}` : '';
  const opts = Array.isArray(rule.options) && rule.options.length ? rule.options.map((o) => o.value) : null;
  if (opts) {
    const bad = (Array.isArray(v) ? v : [v]).find((x) => !opts.includes(x));
    if (bad !== undefined) return `${JSON.stringify(bad)} is not one of ${opts.join(', ')}${from}`;
  }
  if (row.kind === STR || row.kind === ARR) return '';
  const n = (x) => (row.kind === QTY ? quantityMiB(x) : Number(x));
  const num = n(v);
  if (Number.isNaN(num)) return '';  // not a number at all: the server says what it is
  const shown = JSON.stringify(v);
  if (rule.min !== undefined && num < n(rule.min)) return `${shown} is under the min ${rule.min}${from}`;
  if (rule.max !== undefined && num > n(rule.max)) return `${shown} is over the max ${rule.max}${from}`;
  if (rule.step !== undefined && Number(rule.step) > 0) {
    const k = (num - (rule.min !== undefined ? n(rule.min) : 0)) / Number(rule.step);
    if (Math.abs(k - Math.round(k)) > 1e-9) {
      return `${shown} is not ${rule.min !== undefined ? `${rule.min} plus ` : ''}a multiple of the step ` +
        `${rule.step}${from}`;
    }
  }
  return '';
}
