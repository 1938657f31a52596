// app.js: the dashboard's entry point: the login form, the header (user
// name, role, logout), the hash router between the pages (#/overview,
// #/projects, #/workloads, #/nodes), and the refresh loop that updates the
// page shown every few seconds without a reload. An ended session (401,
// expired token, logout) always lands on the login form with a message.

import {login, currentSession, sessionExpired, endSession, onSessionEnd, get} from './js/api.js';
import {$, fill, h, errorText} from './js/dom.js';
import overview from './js/overview.js';
import projects from './js/projects.js';
import workloads from './js/workloads.js';
import nodes from './js/nodes.js';

const PAGES = [overview, projects, workloads, nodes];
const REFRESH_MS = 5000;

let ctx = null;
let page = null;
let controller = null;
let timer = null;
let flashTimer = null;

// ---- login and session ----

function showLogin(message) {
  stopPage();
  ctx = null;
  $('#app').hidden = true;
  $('#login').hidden = false;
  const m = $('#login-message');
  m.textContent = message || '';
  m.hidden = !message;
  $('#login-error').hidden = true;
  $('#login-pass').value = '';
  $('#login-user').focus();
}

async function onLogin(ev) {
  ev.preventDefault();
  const btn = $('#login-submit');
  const err = $('#login-error');
  btn.disabled = true;
  err.hidden = true;
  try {
    await login($('#login-user').value.trim(), $('#login-pass').value);
    $('#login-message').hidden = true;
    await startSession();
  } catch (e) {
    err.textContent = e.status === 400 || e.status === 401 ? e.message : errorText(e);
    err.hidden = false;
  } finally {
    btn.disabled = false;
  }
}

// What the user's access rules allow, for showing or hiding controls (the
// server checks every request anyway).
function rights(rules) {
  const ids = new Set(rules.map((r) => r.roleId));
  return {
    orgWrite: ids.has(1) || ids.has(2),
    wlWrite: [1, 2, 3, 4, 5].some((i) => ids.has(i)),
  };
}

async function startSession() {
  const s = currentSession();
  let rules = [];
  let clusterId = '';
  try {
    const [me, clusters] = await Promise.all([
      get('/api/v1/authorization/me/access-rules'),
      get('/api/v1/clusters'),
    ]);
    // {accessRules: {totalRecords, displayRecords, accessRules: [...]}}
    rules = (me.accessRules && me.accessRules.accessRules) || [];
    clusterId = (clusters && clusters[0] && clusters[0].uuid) || '';
  } catch (e) {
    if (!currentSession()) return; // the session ended: the login form is showing
    showBanner('error', errorText(e));
  }
  const roleNames = [...new Set(rules.map((r) => {
    const scope = r.scopeType === 'system' ? '' : ` (${r.scopeType} ${r.scopeName || r.scopeId})`;
    return `${r.roleName}${scope}`;
  }))];
  ctx = {
    user: s.user, clusterId, rules, can: rights(rules),
    kick: () => refreshNow(),
    flash,
    showError: (e) => showBanner('error', errorText(e)),
  };
  $('#who-name').textContent = s.user;
  $('#who-role').textContent = roleNames.join(', ') || 'no role';
  $('#login').hidden = true;
  $('#app').hidden = false;
  route();
}

function logout() {
  endSession('You have logged out.');
}

// ---- pages ----

function pageFromHash() {
  const id = (location.hash.replace(/^#\/?/, '').split('?')[0]) || 'overview';
  return PAGES.find((p) => p.id === id) || overview;
}

function stopPage() {
  clearTimeout(timer);
  timer = null;
  if (controller) controller.abort();
  controller = null;
  if (page) page.unmount();
  page = null;
}

function route() {
  if (!ctx) return;
  const next = pageFromHash();
  if (next !== page) {
    stopPage();
    page = next;
    for (const a of document.querySelectorAll('nav.pages a')) {
      if (a.dataset.page === page.id) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    document.title = `${page.title} · allot`;
    hideBanner('page');
    page.mount($('#main'), ctx);
  }
  refreshNow();
}

async function refreshNow() {
  if (!ctx || !page) return;
  clearTimeout(timer);
  if (controller) controller.abort();
  const mine = new AbortController();
  controller = mine;
  const p = page;
  $('#main').setAttribute('aria-busy', 'true');
  try {
    await p.refresh(ctx, mine.signal);
    if (controller !== mine) return;
    hideBanner('page');
    $('#updated').textContent = new Date().toLocaleTimeString();
  } catch (e) {
    if (e.name === 'AbortError' || controller !== mine) return;
    if (!currentSession()) return;
    showBanner('page', `Could not refresh this page: ${errorText(e)}`);
  } finally {
    if (controller === mine) {
      $('#main').removeAttribute('aria-busy');
      controller = null;
      schedule();
    }
  }
}

function schedule() {
  clearTimeout(timer);
  if (!ctx || !$('#auto').checked) return;
  timer = setTimeout(() => {
    if (document.hidden) schedule();
    else refreshNow();
  }, REFRESH_MS);
}

// ---- messages ----

function showBanner(kind, text) {
  const b = kind === 'page' ? $('#page-error') : $('#action-error');
  fill(b.querySelector('.text'), text);
  b.hidden = false;
}

function hideBanner(kind) {
  const b = kind === 'page' ? $('#page-error') : $('#action-error');
  b.hidden = true;
}

function flash(text) {
  const f = $('#flash');
  fill(f, h('span', {}, text));
  f.hidden = false;
  clearTimeout(flashTimer);
  flashTimer = setTimeout(() => { f.hidden = true; }, 6000);
}

// ---- start ----

function start() {
  $('#login-form').addEventListener('submit', onLogin);
  $('#logout').addEventListener('click', logout);
  $('#auto').addEventListener('change', () => ($('#auto').checked ? refreshNow() : clearTimeout(timer)));
  for (const b of document.querySelectorAll('.banner .dismiss')) {
    b.addEventListener('click', () => { b.closest('.banner').hidden = true; });
  }
  window.addEventListener('hashchange', route);
  document.addEventListener('visibilitychange', () => { if (!document.hidden && ctx) refreshNow(); });
  onSessionEnd((message) => showLogin(message));
  // A token that lapses while the page sits idle ends the session on time.
  setInterval(() => { if (ctx && sessionExpired()) endSession('Your session has expired. Log in again.'); }, 10000);
  if (currentSession() && !sessionExpired()) startSession();
  else if (currentSession()) endSession('Your session has expired. Log in again.');
  else showLogin('');
}

start();
