// app.js: the dashboard's entry point: the login form, the header (user
// name, role, logout), the hash router between the pages, the state of
// each page in its URL, and the refresh loop that updates the page shown
// every few seconds in place. An ended session (401, expired token,
// logout) always lands on the login form with a message.
//
// URL state: #/<page>?k=v&... holds what a page shows (filters, sort,
// page, the selected workload), so Back, Forward, a reload and a shared
// link show the same thing. A page changes it with ctx.setParams(): a
// deliberate step (a filter chosen, a workload opened) is a new history
// entry, typing in a search box replaces the current one.

import {login, currentSession, sessionExpired, endSession, onSessionEnd, get} from './js/api.js';
import {$, fill, h, errorText} from './js/dom.js';
import overview from './js/overview.js';
import projects from './js/projects.js';
import workloads from './js/workloads.js';
import nodes from './js/nodes.js';
import access from './js/access.js';
import evictions from './js/evictions.js';

const PAGES = [overview, projects, workloads, nodes, access, evictions];
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

// The caller's access rules, whichever shape the server answers: an array,
// {accessRules: [...]}, or {accessRules: {accessRules: [...]}}.
export function rulesOf(me) {
  let r = me;
  for (let i = 0; i < 3 && r && !Array.isArray(r); i++) r = r.accessRules;
  return Array.isArray(r) ? r : [];
}

// What the user's access rules allow, for showing or hiding controls (the
// server checks every request anyway). Role ids are the built-in roles'.
function rights(rules) {
  const ids = new Set(rules.map((r) => Number(r.roleId)));
  const system = rules.some((r) => Number(r.roleId) === 1 && r.scopeType === 'system');
  return {
    orgWrite: ids.has(1) || ids.has(2),
    wlWrite: [1, 2, 3, 4, 5].some((i) => ids.has(i)),
    iam: ids.has(1) || ids.has(2),
    nodeWrite: system,
    wlReadAll: rules.some((r) => [1, 3, 6].includes(Number(r.roleId)) && r.scopeType === 'system') ||
      system,
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
    rules = rulesOf(me);
    const list = Array.isArray(clusters) ? clusters : (clusters && clusters.clusters) || [];
    clusterId = (list[0] && (list[0].uuid || list[0].id)) || '';
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
    params: () => paramsFromHash(),
    setParams,
  };
  $('#who-name').textContent = s.user;
  $('#who-role').textContent = roleNames.join(', ') || 'no role';
  $('#nav-access').hidden = !ctx.can.iam;
  $('#login').hidden = true;
  $('#app').hidden = false;
  route();
}

function logout() {
  endSession('You have logged out.');
}

// ---- pages and their URLs ----

function pageFromHash() {
  const id = (location.hash.replace(/^#\/?/, '').split('?')[0]) || 'overview';
  return PAGES.find((p) => p.id === id) || overview;
}

function paramsFromHash() {
  return new URLSearchParams(location.hash.split('?')[1] || '');
}

// Sets the current page's URL parameters (values '' or null are dropped);
// push: a new history entry, else the current one is replaced. The page
// takes the new parameters and refreshes at once (pushState and
// replaceState fire no event of their own).
function setParams(values, {push = true} = {}) {
  const q = paramsFromHash();
  for (const [k, v] of Object.entries(values)) {
    if (v === null || v === undefined || v === '') q.delete(k);
    else q.set(k, String(v));
  }
  const s = q.toString();
  const hash = `#/${page ? page.id : 'overview'}${s ? `?${s}` : ''}`;
  if (hash === location.hash) return;
  if (push) history.pushState(null, '', hash);
  else history.replaceState(null, '', hash);
  if (page && page.applyParams) page.applyParams(paramsFromHash(), ctx);
  refreshNow();
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
    page.mount($('#main'), ctx, paramsFromHash());
  } else if (page.applyParams) {
    page.applyParams(paramsFromHash(), ctx);
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
  window.addEventListener('popstate', route);
  document.addEventListener('visibilitychange', () => { if (!document.hidden && ctx) refreshNow(); });
  onSessionEnd((message) => showLogin(message));
  // A token that lapses while the page sits idle ends the session on time.
  setInterval(() => { if (ctx && sessionExpired()) endSession('Your session has expired. Log in again.'); }, 10000);
  if (currentSession() && !sessionExpired()) startSession();
  else if (currentSession()) endSession('Your session has expired. Log in again.');
  else showLogin('');
}

start();
