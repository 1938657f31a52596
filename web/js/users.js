// users.js: the Users page, for administrators with a system-scope rule
// (the server answers /api/v1/users to no one else): the local users
// (name, who created them, when, last login, their access rules), a form
// that creates one, and per user: a new temporary password, logging them
// out everywhere, and deleting them. A temporary password is shown once,
// as the server answers it, and kept nowhere: the server stores its hash.
// allot has no "disable" for a user (Run:ai's user API has none): the
// page says what locks a user out instead.
// URL: #/users?q= (a part of the user name).

import {api, get, getOptional} from './api.js';
import {h, fill, fillIn, notice, formDialog, confirmDialog, time, searchForm, takeSearch, newId} from './dom.js';

let el = {};
const filt = {q: ''};

const NO_DISABLE = 'allot cannot disable a user: its user API (Run:ai\'s) has no such switch. To lock a user ' +
  'out, give them a new password (Reset password: the old one stops working) and Log out (every token of ' +
  'theirs stops working at once), or delete the user.';

export default {
  id: 'users',
  title: 'Users',
  applyParams: (params) => takeSearch(params, filt, el.filters && el.filters.search),

  mount(root, ctx, params) {
    el.table = h('div', {class: 'table-wrap'});
    el.filters = searchForm(ctx, params, filt, {id: 'us-search', label: 'Filter users', placeholder: 'a user name'});
    fill(root,
      h('div', {class: 'page-head'}, h('h1', {}, 'Users'),
        h('button', {type: 'button', class: 'primary', id: 'new-user', onclick: () => newUser(ctx)}, 'New user')),
      h('p', {class: 'muted'}, 'The people who log in to allot with a user name and password. What each may do ' +
        'is given by their access rules (the Access page). A password allot makes, for a new user or on a ' +
        'reset, is shown once.'),
      notice('info', NO_DISABLE),
      el.filters,
      h('section', {class: 'panel', 'aria-labelledby': 'us-h'}, h('h2', {id: 'us-h'}, 'Users'), el.table));
  },

  unmount() {
    el = {};
  },

  async refresh(ctx, signal) {
    const [users, rules] = await Promise.all([get('/api/v1/users', {signal}),
      getOptional('/api/v1/authorization/access-rules?limit=500', signal)]);
    const list = Array.isArray(rules) ? rules : (rules && rules.accessRules) || [];
    render(ctx, Array.isArray(users) ? users : [], list);
  },
};

function render(ctx, users, rules) {
  const q = filt.q.toLowerCase();
  const shown = users.filter((u) => !q || u.username.toLowerCase().includes(q))
    .sort((a, b) => a.username.localeCompare(b.username));
  if (!shown.length) {
    fillIn(el.table, notice('empty', users.length ? 'No user matches.' : 'No users.'));
    return;
  }
  const rolesOf = (u) => rules.filter((r) => r.subjectType === 'user' && r.subjectId === u.username)
    .map((r) => `${r.roleName} (${r.scopeType === 'system' ? 'system' : `${r.scopeType} ${r.scopeName || r.scopeId}`})`)
    .join(', ') || 'none';
  const cols = ['User', 'Access rules', 'Created by', 'Created', 'Last login'];
  fillIn(el.table, h('table', {class: 'data cards-on-phone', id: 'users-table', 'aria-label': 'Users'},
    h('thead', {}, h('tr', {}, cols.map((c, i) => h('th', {scope: 'col', class: i === 0 ? 'sticky' : null}, c)),
      h('th', {scope: 'col'}, h('span', {class: 'sr-only'}, 'Actions')))),
    h('tbody', {}, shown.map((u) => h('tr', {dataset: {key: u.username}},
      h('th', {scope: 'row', class: 'sticky', dataset: {label: cols[0]}}, u.username,
        u.username === ctx.user ? h('span', {class: 'muted'}, ' (you)') : null),
      h('td', {dataset: {label: cols[1]}}, rolesOf(u)),
      h('td', {dataset: {label: cols[2]}}, u.createdBy || '-'),
      h('td', {dataset: {label: cols[3]}}, time(u.createdAt)),
      h('td', {dataset: {label: cols[4]}}, u.lastLogin ? time(u.lastLogin) : 'never'),
      h('td', {class: 'row-actions', dataset: {label: ''}},
        ACTIONS.map((a) => h('button', {type: 'button', class: `small ${a.danger ? 'danger' : ''}`.trim(),
          'aria-label': `${a.label} ${u.username}`, disabled: a.notSelf && u.username === ctx.user,
          onclick: () => act(ctx, a, u)}, a.label))))))));
}

// The actions on a user: the question asked first, the request, and what
// is said after (a temporary password is shown once).
const ACTIONS = [
  // yourself: change your own password instead (POST /api/v1/me/password)
  {label: 'Reset password', method: 'POST', notSelf: true, path: (u) => `/api/v1/users/${u.id}/password`,
    question: (u) => `Give ${u.username} a new temporary password? Their current one stops working, and every ` +
      'token of theirs with it.',
    done: (u, a) => secretDialog(u.username, a.tempPassword, 'new temporary password')},
  {label: 'Log out', method: 'POST', path: (u) => `/api/v1/users/${u.id}/logout`,
    question: (u) => `Log ${u.username} out everywhere? Every token of theirs stops working at once; ` +
      'their password still works.',
    done: (u, a, ctx) => ctx.flash(`Logged ${u.username} out everywhere.`)},
  {label: 'Delete', method: 'DELETE', danger: true, notSelf: true, path: (u) => `/api/v1/users/${u.id}`,
    question: (u) => `Delete the user ${u.username}? They can no longer log in; their workloads stay.`,
    done: (u, a, ctx) => ctx.flash(`Deleted the user ${u.username}.`)},
];

async function act(ctx, a, u) {
  if (!await confirmDialog(a.question(u), a.label)) return;
  try {
    const answer = await api(a.method, a.path(u));
    a.done(u, answer || {}, ctx);
  } catch (e) {
    ctx.showError(e);
  }
  ctx.kick();
}

function newUser(ctx) {
  const dlg = formDialog({
    title: 'New user',
    submitLabel: 'Create the user',
    intro: 'allot sends no email: the temporary password is shown here, once, for you to pass on.',
    fields: [{name: 'email', label: 'User name', required: true, placeholder: 'alice@example.com',
      hint: 'an email address or a name, no spaces; the user logs in with it'}],
    onSubmit: async (v) => {
      const a = await api('POST', '/api/v1/users', {email: v.email.trim()});
      ctx.kick();
      secretDialog(a.username, a.tempPassword, 'temporary password');
    },
  });
  dlg.id = 'user-dialog';
}

// Shows a password the server answered, once: it is in this dialog only,
// and gone when the dialog closes.
function secretDialog(username, secret, what) {
  const id = newId('s');
  const copy = h('button', {type: 'button'}, 'Copy');
  const close = h('button', {type: 'button', class: 'primary'}, 'Done');
  const said = h('span', {class: 'hint', role: 'status'});
  const dlg = h('dialog', {'aria-labelledby': id, id: 'secret-dialog'},
    h('h2', {id}, `The ${what} of ${username}`),
    h('p', {}, 'Shown this once: allot keeps only its hash. Pass it on to the user, who logs in with it.'),
    h('p', {}, h('code', {id: 'temp-password', class: 'secret'}, secret)),
    h('div', {class: 'dialog-actions'}, said, copy, close));
  copy.onclick = () => navigator.clipboard.writeText(secret)
    .then(() => { said.textContent = 'Copied.'; }, () => { said.textContent = 'Copying is not allowed here: select it.'; });
  close.onclick = () => dlg.close();
  dlg.addEventListener('close', () => dlg.remove());
  document.body.appendChild(dlg);
  dlg.showModal();
}
