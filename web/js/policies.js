// policies.js: the Policies page (Run:ai's policy viewer): for a chosen
// project and workload type, the effective policy a submission there
// meets, field by field: the default it gets (and the scope that default
// comes from) and the rule it must keep (min, max, step, options,
// required, canEdit, and the scope the rule comes from), as policy.js reads
// them from GET /api/v2/policy/{type}?scope=project&projectId=. Reading
// only: policies are written with the API or `allot policy`.
// URL: #/policies?project=NAME&type=Training.

import {get} from './api.js';
import {h, fill, fillIn, notice, time} from './dom.js';
import {POLICY_TYPES, projectPolicy} from './policy.js';

let el = {};
const sel = {project: '', type: 'Training'};

function applyParams(params) {
  sel.project = params.get('project') || '';
  const t = params.get('type');
  sel.type = POLICY_TYPES.some((x) => x.type === t) ? t : 'Training';
  if (el.type) el.type.value = sel.type;
}

const shown = (v) => (v === undefined || v === null ? '-' : typeof v === 'string' ? v : JSON.stringify(v));

// The columns of the table: heading and cell of a row.
const COLUMNS = [
  ['Default', (r) => shown(r.def)],
  ['Default from', (r) => r.defFrom || '-'],
  ['Min', (r) => shown(r.rule && r.rule.min)],
  ['Max', (r) => shown(r.rule && r.rule.max)],
  ['Step', (r) => shown(r.rule && r.rule.step)],
  ['Options', (r) => (r.rule && Array.isArray(r.rule.options) && r.rule.options.length
    ? r.rule.options.map((o) => o.value).join(', ') : '-')],
  ['Required', (r) => (r.rule && r.rule.required !== undefined ? (r.rule.required ? 'yes' : 'no') : '-')],
  ['Can edit', (r) => (r.rule && r.rule.canEdit !== undefined ? (r.rule.canEdit ? 'yes' : 'no') : '-')],
  ['Rule from', (r) => r.ruleFrom || '-'],
];

export default {
  id: 'policies',
  title: 'Policies',
  applyParams,

  mount(root, ctx, params) {
    applyParams(params);
    el.project = h('select', {id: 'po-project', onchange: () => ctx.setParams({project: el.project.value})});
    el.type = h('select', {id: 'po-type', onchange: () => ctx.setParams({type: el.type.value})},
      POLICY_TYPES.map((t) => h('option', {value: t.type, selected: t.type === sel.type}, t.label)));
    el.caption = h('p', {class: 'muted', id: 'po-caption'});
    el.table = h('div', {class: 'table-wrap'});
    fill(root,
      h('div', {class: 'page-head'}, h('h1', {}, 'Policies')),
      h('p', {class: 'muted'}, 'A workload policy gives a submission defaults (what it gets when it leaves a ' +
        'field out) and rules (what it must keep). A project\'s effective policy merges the tenant\'s, its ' +
        'department\'s and its own: a rule comes from the highest scope that sets one, a default from the ' +
        'lowest. Policies are set with the API or allot policy.'),
      h('form', {class: 'filters', 'aria-label': 'Choose the policy', onsubmit: (e) => e.preventDefault()},
        h('span', {class: 'filter'}, h('label', {for: 'po-project'}, 'Project'), el.project),
        h('span', {class: 'filter'}, h('label', {for: 'po-type'}, 'Workload type'), el.type)),
      h('section', {class: 'panel', 'aria-labelledby': 'po-h'}, h('h2', {id: 'po-h'}, 'Effective policy'),
        el.caption, el.table));
  },

  unmount() {
    el = {};
  },

  async refresh(ctx, signal) {
    const pj = await get('/api/v1/org-unit/projects', {signal});
    const projects = ((pj && pj.projects) || []).slice().sort((a, b) => a.name.localeCompare(b.name));
    if (!projects.length) {
      fillIn(el.project);
      fill(el.caption);
      fillIn(el.table, notice('empty', 'There is no project you can read.'));
      return;
    }
    const p = projects.find((x) => x.name === sel.project) || projects[0];
    fillIn(el.project, projects.map((x) => h('option', {value: x.name, selected: x === p}, x.name)));
    el.project.value = p.name;
    const dept = (p.parent && p.parent.name) || p.parentId || '';
    const pol = await projectPolicy(p, dept, sel.type, {signal});
    const label = POLICY_TYPES.find((t) => t.type === sel.type).label.toLowerCase();
    fill(el.caption, `What a ${label} submitted to ${p.name}${dept ? ` (department ${dept})` : ''} gets and must ` +
      `keep${pol.updatedAt ? `; last changed ${time(pol.updatedAt)}` : ''}.`);
    if (!pol.rows.length) {
      fillIn(el.table, notice('empty', `No policy sets a default or a rule for a ${label} in ${p.name}.`));
      return;
    }
    const heads = ['Field', ...COLUMNS.map((c) => c[0])];
    fillIn(el.table, h('table', {class: 'data cards-on-phone', id: 'policy-table', 'aria-label': 'Effective policy'},
      h('thead', {}, h('tr', {}, heads.map((c, i) => h('th', {scope: 'col', class: i === 0 ? 'sticky' : null}, c)))),
      h('tbody', {}, pol.rows.map((r) => h('tr', {dataset: {key: r.path}},
        h('th', {scope: 'row', class: 'sticky', dataset: {label: heads[0]}}, r.path),
        COLUMNS.map(([head, cellOf]) => h('td', {dataset: {label: head}}, cellOf(r))))))));
  },
};
