// access.js: the Access page: who may do what where. The access rules
// (subject, role, scope) as a table filterable by subject and scope, the
// roles with what each allows, and for administrators the forms that add a
// rule and delete one (Run:ai's rules are never edited: delete and add).
// URL: #/access?q=.

import {api, get, getOptional} from './api.js';
import {h, fill, fillIn, notice, formDialog, confirmDialog, time, searchForm, takeSearch} from './dom.js';

let el = {};
let roles = [];
let projects = [];
let departments = [];
let users = [];
const filt = {q: ''};

const listOf = (r, key) => (Array.isArray(r) ? r : (r && (Array.isArray(r[key]) ? r[key]
  : r[key] && Array.isArray(r[key][key]) ? r[key][key] : null)) || []);

function applyParams(params) {
  takeSearch(params, filt, el.filters && el.filters.search);
}

export default {
  id: 'access',
  title: 'Access',
  applyParams,

  mount(root, ctx, params) {
    el.rules = h('div', {class: 'table-wrap'});
    el.roles = h('div', {class: 'table-wrap'});
    el.filters = searchForm(ctx, params, filt,
      {id: 'ac-search', label: 'Filter access rules', placeholder: 'a user, role or scope'});
    fill(root,
      h('div', {class: 'page-head'}, h('h1', {}, 'Access rules'),
        ctx.can.iam ? h('button', {type: 'button', class: 'primary', id: 'new-rule',
          onclick: () => newRule(ctx)}, 'New access rule') : null),
      h('p', {class: 'muted'}, 'An access rule gives a subject (a user or a service account) a role in a scope: ' +
        'the whole system, a department (and its projects) or one project.'),
      el.filters,
      h('section', {class: 'panel', 'aria-labelledby': 'ac-h'}, h('h2', {id: 'ac-h'}, 'Rules'), el.rules),
      h('section', {class: 'panel', 'aria-labelledby': 'ro-h'}, h('h2', {id: 'ro-h'}, 'Roles'), el.roles));
  },

  unmount() {
    el = {};
  },

  async refresh(ctx, signal) {
    const opt = (p) => getOptional(p, signal);
    const [rl, ro, pj, dp, us] = await Promise.all([
      get('/api/v1/authorization/access-rules?limit=500', {signal}),
      opt('/api/v1/authorization/roles'),
      opt('/api/v1/org-unit/projects'),
      opt('/api/v1/org-unit/departments'),
      opt('/api/v1/users'),
    ]);
    roles = listOf(ro, 'roles');
    projects = listOf(pj, 'projects');
    departments = listOf(dp, 'departments');
    users = listOf(us, 'users');
    renderRules(ctx, listOf(rl, 'accessRules'));
    renderRoles();
  },
};

function scopeText(r) {
  if (r.scopeType === 'system' || r.scopeType === 'tenant' || r.scopeType === 'cluster') return r.scopeType;
  return `${r.scopeType} ${r.scopeName || r.scopeId}`;
}

function renderRules(ctx, rules) {
  const q = filt.q.toLowerCase();
  const shown = rules.filter((r) => !q || [r.subjectId, r.roleName, scopeText(r), r.subjectType]
    .some((x) => String(x || '').toLowerCase().includes(q)))
    .sort((a, b) => String(a.subjectId).localeCompare(String(b.subjectId)));
  if (!shown.length) {
    fillIn(el.rules, notice('empty', rules.length ? 'No rule matches.' : 'No access rules.'));
    return;
  }
  const cols = ['Subject', 'Type', 'Role', 'Scope', 'Created'];
  fillIn(el.rules, h('table', {class: 'data cards-on-phone', id: 'rules-table', 'aria-label': 'Access rules'},
    h('thead', {}, h('tr', {}, cols.map((c, i) => h('th', {scope: 'col', class: i === 0 ? 'sticky' : null}, c)),
      ctx.can.iam ? h('th', {scope: 'col'}, h('span', {class: 'sr-only'}, 'Actions')) : null)),
    h('tbody', {}, shown.map((r) => h('tr', {dataset: {key: String(r.id)}},
      h('th', {scope: 'row', class: 'sticky', dataset: {label: cols[0]}}, r.subjectId),
      h('td', {dataset: {label: cols[1]}}, r.subjectType),
      h('td', {dataset: {label: cols[2]}}, r.roleName || String(r.roleId)),
      h('td', {dataset: {label: cols[3]}}, scopeText(r)),
      h('td', {dataset: {label: cols[4]}}, time(r.createdAt)),
      ctx.can.iam ? h('td', {class: 'row-actions', dataset: {label: ''}},
        h('button', {type: 'button', class: 'small danger',
          'aria-label': `Delete the rule ${r.roleName} of ${r.subjectId} on ${scopeText(r)}`,
          onclick: () => deleteRule(ctx, r)}, 'Delete')) : null)))));
}

function renderRoles() {
  if (!roles.length) {
    fillIn(el.roles, notice('empty', 'No roles to show.'));
    return;
  }
  fillIn(el.roles, h('table', {class: 'data compact', id: 'roles-table', 'aria-label': 'Roles'},
    h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Role'), h('th', {scope: 'col'}, 'What it allows'))),
    h('tbody', {}, roles.map((r) => h('tr', {dataset: {key: String(r.id)}},
      h('th', {scope: 'row'}, r.name), h('td', {}, r.description || ''))))));
}

function newRule(ctx) {
  const scopeOptions = (type) => (type === 'project' ? projects.map((p) => ({value: p.id, label: p.name}))
    : type === 'department' ? departments.map((d) => ({value: d.id, label: d.name})) : []);
  const subjects = h('datalist', {id: 'ac-users'}, users.map((u) => h('option', {value: u.username || u.email || u.id})));
  const dlg = formDialog({
    title: 'New access rule',
    submitLabel: 'Add the rule',
    fields: [
      {name: 'subjectType', label: 'Subject type', type: 'select', value: 'user',
        options: [{value: 'user', label: 'User'}, {value: 'service-account', label: 'Service account'},
          {value: 'group', label: 'Group'}]},
      {name: 'subjectId', label: 'Subject', required: true, placeholder: 'alice@example.com'},
      {name: 'roleId', label: 'Role', type: 'select', value: String((roles.find((r) => /L1/.test(r.name)) || roles[0] || {}).id),
        options: roles.map((r) => ({value: String(r.id), label: r.name}))},
      {name: 'scopeType', label: 'Scope', type: 'select', value: 'project',
        options: [{value: 'system', label: 'The whole system'}, {value: 'department', label: 'A department'},
          {value: 'project', label: 'A project'}]},
      {name: 'scopeId', label: 'Where', type: 'select', options: scopeOptions('project'),
        value: (projects[0] || {}).id},
    ],
    body: [subjects],
    onSubmit: async (v) => {
      const body = {subjectType: v.subjectType, subjectId: v.subjectId.trim(), roleId: Number(v.roleId),
        scopeType: v.scopeType, scopeId: v.scopeType === 'system' ? '' : v.scopeId, clusterId: ctx.clusterId};
      if (v.scopeType === 'system') delete body.scopeId;
      try {
        await api('POST', '/api/v1/authorization/access-rules', body);
      } catch (e) {
        if (e.status === 404 || (e.status === 400 && /subject|user/i.test(`${e.message} ${e.details}`))) {
          throw new Error(`The server refused the rule: ${e.details || e.message}. Is ${body.subjectId} a user here?`);
        }
        throw e;
      }
      ctx.flash(`Added the rule for ${body.subjectId}.`);
      ctx.kick();
    },
  });
  dlg.id = 'rule-dialog';
  const subject = dlg.querySelector('input[name="subjectId"]');
  subject.setAttribute('list', 'ac-users');
  const type = dlg.querySelector('select[name="scopeType"]');
  const where = dlg.querySelector('select[name="scopeId"]');
  type.onchange = () => {
    fill(where, scopeOptions(type.value).map((o) => h('option', {value: o.value}, o.label)));
    where.closest('.form-row').hidden = type.value === 'system';
    where.required = type.value !== 'system';
  };
}

async function deleteRule(ctx, r) {
  if (!await confirmDialog(`Delete the rule that makes ${r.subjectId} ${r.roleName} on ${scopeText(r)}?`, 'Delete')) return;
  try {
    await api('DELETE', `/api/v1/authorization/access-rules/${encodeURIComponent(r.id)}`);
    ctx.flash(`Deleted the rule of ${r.subjectId}.`);
  } catch (e) {
    ctx.showError(e);
  }
  ctx.kick();
}

