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

import {login, currentSession, sessionExpired, endSession, onSessionEnd, get, refreshSession} from './js/api.js';
import {$, fill, h, errorText, duration} from './js/dom.js';
import overview from './js/overview.js';
import projects from './js/projects.js';
import workloads from './js/workloads.js';
import nodes from './js/nodes.js';
import access from './js/access.js';
import evictions from './js/evictions.js';
import analytics from './js/analytics.js';
import assets from './js/assets.js';
import policies from './js/policies.js';
import users from './js/users.js';

const PAGES = [overview, projects, workloads, nodes, access, evictions, analytics, assets, policies, users];
// How often the page shown refreshes: ?refresh=SECONDS in the dashboard's
// address (before the #, e.g. /?refresh=2#/workloads), 1 to 300, default 5.
const REFRESH_MS = refreshSeconds(new URLSearchParams(location.search).get('refresh')) * 1000;
const ANSWER_MS = 15000;      // a refresh not answered by then: the server is not answering
const ACTIVE_KEY = 'allot.active';
const ACTIVE_MS = 10 * 60e3;  // the tab is in use: a key, click or scroll this recently

let ctx = null;
let page = null;
let controller = null;
let timer = null;
let flashTimer = null;
let lastAnswer = null;        // when a refresh last succeeded

// The refresh period in whole seconds from the address's ?refresh=, or 5
// when it is absent or not a whole number from 1 to 300.
function refreshSeconds(v) {
  const n = Number(v);
  return v !== null && /^\d+$/.test(v) && n >= 1 && n <= 300 ? n : 5;
}

// ---- login and session ----

function showLogin(message) {
  stopPage();
  ctx = null;
  $('#app').hidden = true;
  $('#session-warn').hidden = true;
  hideStale();
  lastAnswer = null;
  renewFailed = '';
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
    // the users API answers a system-scope IAM rule only
    users: rules.some((r) => [1, 2].includes(Number(r.roleId)) && r.scopeType === 'system'),
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
  $('#nav-users').hidden = !ctx.can.users;
  showLogo();
  $('#login').hidden = true;
  $('#app').hidden = false;
  route();
}

// The tenant's logo (POST /api/v1/logo: a PNG or an SVG) before allot's
// mark in the header; none set (204) leaves the mark alone.
async function showLogo() {
  const img = $('#tenant-logo');
  try {
    const data = await get('/api/v1/logo');
    const logo = data && data.logo;
    img.hidden = !logo;
    if (logo) img.src = `data:${logo.startsWith('iVBOR') ? 'image/png' : 'image/svg+xml'};base64,${logo}`;
  } catch {
    img.hidden = true; // the header keeps allot's own mark
  }
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
  // a server that takes the connection but never answers is not answering
  const watchdog = setTimeout(() => { if (controller === mine) { showStale(); mine.abort(); } }, ANSWER_MS);
  try {
    await p.refresh(ctx, mine.signal);
    if (controller !== mine) return;
    hideBanner('page');
    hideStale();
    lastAnswer = new Date();
    $('#updated').textContent = lastAnswer.toLocaleTimeString();
  } catch (e) {
    if (e.name === 'AbortError' || controller !== mine) return;
    if (!currentSession()) return;
    if ([0, 502, 503, 504].includes(e.status)) showStale();
    else showBanner('page', `Could not refresh this page: ${errorText(e)}`);
  } finally {
    clearTimeout(watchdog);
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

// ---- a server that stops answering ----

// The page keeps its last figures, greyed, under a banner that says since
// when the server has not answered; the next answer clears both.
function showStale() {
  const since = lastAnswer ? lastAnswer.toLocaleTimeString() : 'this page opened';
  const ago = lastAnswer ? ` (${duration(Math.round((Date.now() - lastAnswer) / 1000))} ago)` : '';
  fill($('#stale .text'), h('strong', {}, `The server has not answered since ${since}${ago}.`),
    lastAnswer ? ` The figures below are from then and may be out of date; trying again every ${REFRESH_MS / 1000} s.`
      : ` Trying again every ${REFRESH_MS / 1000} s.`);
  $('#stale').hidden = false;
  $('#main').classList.add('stale');
  $('#updated').classList.add('stale-time');
}

function hideStale() {
  $('#stale').hidden = true;
  $('#main').classList.remove('stale');
  $('#updated').classList.remove('stale-time');
}

// ---- the session: renewed while the tab is in use, else a warning ----

let activeWritten = 0;
function markActive() {
  const now = Date.now();
  if (now - activeWritten < 2000) return;
  activeWritten = now;
  sessionStorage.setItem(ACTIVE_KEY, String(now));
}

const lastActive = () => Number(sessionStorage.getItem(ACTIVE_KEY) || 0);

// Every few seconds: a token near its end is renewed silently while the
// tab is in use (shown, and used within ACTIVE_MS); an idle tab is warned
// before it ends, with a button to stay; an ended one goes to the login.
async function watchSession() {
  const s = currentSession();
  if (!ctx || !s) return;
  if (sessionExpired()) {
    endSession('Your session has expired. Log in again.');
    return;
  }
  const left = s.exp * 1000 - Date.now();
  const ttl = (s.ttl || 3600) * 1000;
  const renewAt = Math.min(5 * 60e3, ttl / 4);
  const warnAt = Math.min(2 * 60e3, ttl / 2);
  const inUse = !document.hidden && Date.now() - lastActive() < ACTIVE_MS;
  if (left <= renewAt && inUse && s.refresh && !renewFailed) {
    if (await renew(false)) return;
  }
  if (left <= warnAt) warnSession(s, left);
  else $('#session-warn').hidden = true;
}

let renewFailed = '';
async function renew(clicked) {
  try {
    await refreshSession();
    renewFailed = '';
    $('#session-warn').hidden = true;
    if (clicked) flash('Your session was renewed.');
    return true;
  } catch (e) {
    if (!currentSession()) return false;
    if (e.status !== 0) renewFailed = errorText(e); // refused: not asked again (a network error is)
    if (clicked) warnSession(currentSession(), currentSession().exp * 1000 - Date.now());
    return false;
  }
}

const minSec = (x) => (x >= 60 ? `${Math.floor(x / 60)}m ${x % 60}s` : `${x}s`);

function warnSession(s, left) {
  const at = new Date(s.exp * 1000).toLocaleTimeString();
  fill($('#session-warn .text'), h('strong', {}, `Your session ends at ${at} (in ${minSec(Math.max(0, Math.round(left / 1000)))}).`),
    renewFailed ? ` It could not be renewed (${renewFailed}): save your work and log in again.`
      : ' Stay logged in to keep working.');
  $('#session-stay').hidden = !!renewFailed || !s.refresh;
  $('#session-warn').hidden = false;
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
  $('#auto-period').textContent = String(REFRESH_MS / 1000);
  // A token near its end is renewed or warned of; one that lapses while the
  // page sits idle ends the session on time (checked as often as the page
  // refreshes, at least every 5 s).
  setInterval(() => { watchSession(); }, Math.min(REFRESH_MS, 5000));
  for (const ev of ['pointerdown', 'keydown', 'wheel', 'touchstart']) {
    document.addEventListener(ev, markActive, {passive: true, capture: true});
  }
  $('#session-stay').addEventListener('click', () => renew(true));
  // the skip link moves focus to the page (a plain #main would be taken as a route)
  $('#skip-link').addEventListener('click', (e) => {
    e.preventDefault();
    $('#main').focus();
  });
  if (currentSession() && !sessionExpired()) startSession();
  else if (currentSession()) endSession('Your session has expired. Log in again.');
  else showLogin('');
}

start();
