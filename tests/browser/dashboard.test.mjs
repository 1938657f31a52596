// dashboard.test.mjs: the dashboard in headless Chromium (Debian's
// chromium-headless-shell, or chromium: run.sh picks, driven by
// playwright-core) against real allotd --demo
// servers with simulated nodes on free loopback ports, and a real
// allot-agent on the test suite's fake NVML (a node whose GPUs are
// measured, whose pods write logs). Each point of the dashboard is
// asserted, not only looked at:
//   login; the tenant's logo in the header; the over-quota quick start on the Projects page (over quota per
//   pool, rows expanding to their pools) and the Workloads page (the
//   pending reason as a sentence with its code as a tag); the detail pane
//   refreshed in place (focus, text selection and scroll kept) and logs
//   that follow their newest line when asked; URL state (filters, sort,
//   page, the selected workload; Back and a shared link); the Overview
//   (evictions counted on the server, not from recent workloads; the
//   allocation chart spanning its range with max and mean per slot;
//   workloads by type and phase; pending time; ready and idle allocated
//   GPUs per pool; pool and department filters; a researcher's "your
//   projects"); Analytics (the cluster's GPUs over time, a project's GPUs
//   allocated, idle and in use as its agent measures them, utilisation
//   over time, CSV, per department, the longest waits); device strips from the pods' device indices; quotas
//   refused or warned in the form and refused by the API; the submission
//   form for all four types; node pools, projects, departments and access
//   rules created, edited and deleted from the pages; CSV export; a phone
//   (390 px: rows as cards, the detail a full-screen sheet, nothing wider
//   than the screen) and 1,440 px (tables fit, a column chooser, a sticky
//   name column); the dark theme; an ended session; 10,000 workloads
//   (timings printed, not asserted: targets live in bench/).
// Screenshots of every page, light and dark, desktop and phone, go to
// $ALLOT_BROWSER_OUT/screenshots. Any Content-Security-Policy violation or
// uncaught page error fails the run. Every allotd and agent stops with
// SIGTERM at the end and must exit 0 with no sanitizer report in its log.
//
// Environment: ALLOTD, ALLOT_AGENT, ALLOT_FAKE_NVML_LIB (binaries),
// ALLOT_WEB_ROOT (web/), ALLOT_BROWSER_OUT (a writable folder holding
// node_modules/playwright-core), CHROMIUM; ALLOT_TEST_SCALE multiplies
// every deadline (a sanitizer build); ALLOT_BROWSER_BULK submits fewer
// workloads (refused when CI is set).

import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import {createRequire} from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const OUT = process.env.ALLOT_BROWSER_OUT;
const require = createRequire(path.join(OUT, 'package.json'));
const {chromium} = require('playwright-core');

const PASSWORD = 'browser-admin-password';
const SCALE = Number(process.env.ALLOT_TEST_SCALE || 1);
if (process.env.ALLOT_BROWSER_BULK && process.env.CI) {
  throw new Error('ALLOT_BROWSER_BULK weakens this test and is refused when CI is set');
}
const BULK_N = Number(process.env.ALLOT_BROWSER_BULK || 10000);
const SHOTS = path.join(OUT, 'screenshots');
// The pages refresh every second (?refresh=1) instead of every 5 s: the
// checks that wait for a refresh wait a fifth as long. The login test
// checks the default, the stale-server test the banner's period.
const REFRESH_S = 1;
const home = (base) => `${base}/?refresh=${REFRESH_S}`;
const DESKTOP = {width: 1440, height: 900};
const PHONE = {width: 390, height: 844};
const problems = [];
const timings = [];

let URL;         // the main server, which the UI checks use
let BULK_URL;    // a second server that takes the 10,000 submissions meanwhile
let bulkDone;    // resolves to the seconds the submissions took
const servers = [];
let agent;       // the allot-agent process
let browser;
let page;
let adminToken;
let clusterId;
const ids = {};

// ---- the servers and the agent ----

async function startServer(name, extra = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'allot-browser-'));
  const portFile = path.join(dir, 'port');
  const logPath = path.join(OUT, `${name}.log`);
  const log = fs.openSync(logPath, 'w');
  const proc = spawn(process.env.ALLOTD, ['--demo', '--listen', '127.0.0.1:0', '--port-file', portFile,
    '--schedule-period-ms', '100', '--sample-period-ms', '500', '--rate-limit', '0',
    // a kept-alive connection outlives node's own idle timeout (4 s), so the
    // client, not the server, closes it between two requests
    '--request-timeout-ms', '10000',
    '--web-root', process.env.ALLOT_WEB_ROOT, ...extra],
  {cwd: dir, env: {...process.env, ALLOT_ADMIN_PASSWORD: PASSWORD}, stdio: ['ignore', log, log]});
  const exited = new Promise((r) => proc.once('exit', (code, signal) => r({code, signal})));
  servers.push({name, proc, dir, logPath, exited});
  const port = await until(20, () => {
    if (proc.exitCode !== null) throw new Error(`allotd exited at start; see ${name}.log`);
    return fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').trim();
  }, 'allotd to write its port');
  return `http://127.0.0.1:${port}`;
}

// Stops one process with SIGTERM: it must still be running, exit 0 within
// 30 s, and leave no sanitizer report in its log. Returns the problems.
async function stopProcess({name, proc, logPath, exited}) {
  const bad = [];
  if (proc.exitCode !== null || proc.signalCode !== null) {
    bad.push(`${name} ended before the test stopped it (${proc.exitCode ?? proc.signalCode})`);
  } else {
    proc.kill('SIGTERM');
    const timer = sleep(30000 * SCALE).then(() => null);
    const end = await Promise.race([exited, timer]);
    if (!end) {
      proc.kill('SIGKILL');
      bad.push(`${name} did not stop within ${30 * SCALE} s of SIGTERM`);
    } else if (end.code !== 0) {
      bad.push(`${name} exited with ${end.code ?? end.signal} after SIGTERM`);
    }
  }
  await exited;
  const log = fs.readFileSync(logPath, 'utf8');
  if (/ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: \w*Sanitizer/.test(log)) {
    bad.push(`a sanitizer reported in ${path.basename(logPath)}:\n${log.slice(-4000)}`);
  }
  return bad;
}

// allot-agent for node lab-1 in pool gpu-lab, its GPUs from the fake NVML
// (two devices at 0% utilisation), its pods run as plain processes.
async function startAgent() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'allot-browser-agent-'));
  const tok = await call('POST', '/api/v1/agent/tokens', {name: 'lab-1'}, adminToken, 201);
  fs.writeFileSync(path.join(dir, 'token'), tok.token, {mode: 0o600});
  fs.writeFileSync(path.join(dir, 'nvml'), 'gpu 0 GPU-lab-0 81559 1 0 Fake H100 80GB\n' +
    'gpu 1 GPU-lab-1 81559 1 0 Fake H100 80GB\n');
  const logPath = path.join(OUT, 'allot-agent.log');
  const log = fs.openSync(logPath, 'w');
  const proc = spawn(process.env.ALLOT_AGENT, ['--server', URL, '--token-file', path.join(dir, 'token'),
    '--name', 'lab-1', '--node-pool', 'gpu-lab', '--labels', 'lab=gpu', '--work-dir', path.join(dir, 'work'),
    '--heartbeat-ms', '300', '--runtime', 'none', '--gpus', 'auto', '--nvml', process.env.ALLOT_FAKE_NVML_LIB],
  {cwd: dir, env: {...process.env, ALLOT_FAKE_NVML: path.join(dir, 'nvml'), TESTRUN: dir},
    stdio: ['ignore', log, log]});
  const exited = new Promise((r) => proc.once('exit', (code, signal) => r({code, signal})));
  agent = {name: 'allot-agent', proc, dir, logPath, exited};
  await until(30, async () => {
    const n = await call('GET', '/api/v1/nodes');
    return n.nodes.some((x) => x.name === 'lab-1' && x.status === 'Ready');
  }, 'the agent\'s node lab-1 to be Ready');
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Calls fn until it returns a truthy value, for at most `seconds` x SCALE
// of wall-clock time; returns that value, or throws naming `what`.
async function until(seconds, fn, what) {
  const end = Date.now() + seconds * 1000 * SCALE;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`waited ${seconds * SCALE} s for ${what}`);
    await sleep(50);
  }
}

// One API call; `want` is the expected status (any 2xx when absent).
async function call(method, p, body, token = adminToken, want, base = URL) {
  const res = await fetch(base + p, {method, headers: {
    Authorization: `Bearer ${token}`, 'Content-Type': 'application/json'},
  body: body === undefined ? undefined : JSON.stringify(body)});
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (want !== undefined ? res.status !== want : !res.ok) {
    throw new Error(`${method} ${p}: ${res.status} ${text}`);
  }
  return data;
}

async function token(username, password, base = URL) {
  const res = await fetch(`${base}/api/v1/token`, {method: 'POST',
    headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({grantType: 'password', username, password})});
  assert.equal(res.status, 200);
  return (await res.json()).accessToken;
}

async function project(name, gpus, extra = {}, tok = adminToken, base = URL, more = {}) {
  const p = await call('POST', '/api/v1/org-unit/projects', {name, clusterId,
    resources: [{nodePool: {id: '1', name: 'default'}, gpu: {deserved: gpus, limit: -1,
      overQuotaWeight: 1, ...extra}}], ...more}, tok, undefined, base);
  return p.id;
}

async function submit(name, projectId, gpus, tok = adminToken, base = URL, spec = {}) {
  return call('POST', '/api/v1/workloads/trainings', {name, projectId, clusterId,
    spec: {image: 'runai.jfrog.io/demo/quickstart', compute: {gpuDevicesRequest: gpus}, ...spec}},
  tok, undefined, base);
}

// The names bulkSubmit(N) gives: bulk-B-0 .. bulk-B-999 for batch B.
const BATCH = 1000;
const bulkNames = (N) => Array.from({length: N}, (_, i) => `bulk-${Math.floor(i / BATCH)}-${i % BATCH}`);

// Submits N pending workloads to project "bulk" of the second server (in
// pool default, where its limit is 0) as the CLI does, in batches of
// BATCH (POST /api/v1/workloads/submissions with count: one request and one
// commit each), two at a time; a batch again when a kept-alive connection
// was closed under it (a retry that finds its names taken means the first
// try got through).
async function bulkSubmit(N) {
  const tok = await token('admin', PASSWORD, BULK_URL);
  const pid = await project('bulk', 0, {limit: 0}, tok, BULK_URL);
  const t0 = Date.now();
  let next = 0;
  await Promise.all(Array.from({length: 2}, async () => {
    while (next * BATCH < N) {
      const b = next++;
      const body = {type: 'Training', name: `bulk-${b}`, count: Math.min(BATCH, N - b * BATCH), projectId: pid,
        clusterId, spec: {image: 'runai.jfrog.io/demo/quickstart', compute: {gpuDevicesRequest: 1},
          nodePools: ['default']}}; // its limit is 0 there
      for (let i = 0; ; i++) {
        try {
          await call('POST', '/api/v1/workloads/submissions', body, tok, 202, BULK_URL);
          break;
        } catch (e) {
          if (i > 0 && / 409 | 400 .*(taken|exists)/.test(e.message)) break;
          if (i >= 3 || !/fetch failed/.test(e.message)) throw e;
        }
      }
    }
  }));
  return (Date.now() - t0) / 1000;
}

async function workload(name) {
  const l = await call('GET', `/api/v1/workloads?filterBy=name==${name}`);
  return l.workloads[0];
}

async function waitPhase(name, want) {
  let last;
  await until(20, async () => (last = (await workload(name) || {}).phase) === want, `${name} to reach ${want}`)
    .catch(() => assert.fail(`${name} did not reach ${want} (is ${last})`));
}

// ---- the browser ----

function watch(p, who) {
  p.on('console', (m) => {
    const t = m.text();
    if (/Content Security Policy|Refused to/i.test(t)) problems.push(`${who}: ${t}`);
  });
  p.on('pageerror', (e) => problems.push(`${who}: page error: ${e.message}`));
}

async function newPage(who, opts = {}) {
  const context = await browser.newContext({viewport: opts.viewport || DESKTOP, locale: 'en-US',
    colorScheme: opts.colorScheme || 'light', acceptDownloads: true});
  const p = await context.newPage();
  p.setDefaultTimeout(15000 * SCALE);
  watch(p, who);
  return p;
}

async function shot(p, name, fullPage = true) {
  // let a chart finish its layout: a resize is drawn by the next frame
  await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await p.screenshot({path: path.join(SHOTS, `${name}.png`), fullPage});
}

async function login(p, user, password, base = URL) {
  await p.goto(home(base));
  await p.getByLabel('User name').fill(user);
  await p.getByLabel('Password').fill(password);
  await p.getByRole('button', {name: 'Log in'}).click();
  await p.locator('#who-name').filter({hasText: user}).waitFor();
}

// Goes to a page by its hash and waits for its first refresh.
async function go(p, hash) {
  const before = await p.locator('#updated').innerText();
  await p.evaluate((h) => { location.hash = h; }, hash);
  await until(15, async () => (await p.locator('#updated').innerText()) !== before ||
    (await p.locator('main[aria-busy]').count()) === 0, `${hash} to load`);
  await p.locator('main:not([aria-busy])').waitFor();
}

// Waits for n more refreshes of the page shown (the footer's time changes).
async function refreshes(p, n = 1) {
  for (let i = 0; i < n; i++) {
    const t = await p.locator('#updated').innerText();
    await until(20, async () => (await p.locator('#updated').innerText()) !== t, 'a refresh');
    await p.locator('main:not([aria-busy])').waitFor();
  }
}

// The text of a cell, by row key (data-key) and column header, read at
// once from the DOM (no waiting); throws when the table or row is missing.
async function cell(p, tableId, key, header) {
  return p.evaluate(([t, k, hd]) => {
    const table = document.getElementById(t);
    if (!table) throw new Error(`no table ${t}`);
    const heads = [...table.querySelectorAll('thead th')].map((x) => x.innerText.replace(/[▲▼]/g, '').trim());
    const col = heads.indexOf(hd);
    if (col < 0) throw new Error(`no column ${hd} in ${t}: ${heads}`);
    const row = [...table.querySelectorAll('tbody > tr')].find((r) => r.dataset.key === k);
    if (!row) throw new Error(`no row ${k} in ${t}`);
    return row.children[col].innerText.trim();
  }, [tableId, key, header]);
}

// Waits up to 15 s (scaled) for the cell to equal (or match) want.
async function expectCell(p, tableId, key, header, want) {
  const ok = (v) => (want instanceof RegExp ? want.test(v) : v === want);
  let last = '';
  await until(15, async () => {
    try {
      last = await cell(p, tableId, key, header);
    } catch (e) { last = e.message; } // the table is being redrawn
    return ok(last);
  }, `${tableId} ${key} ${header}`)
    .catch(() => assert.fail(`${tableId} ${key} ${header}: ${JSON.stringify(last)}, wanted ${want}`));
}

// The overview's allocation chart once drawn (not a notice in its place),
// with its labels and series; waits until `ok(series)` holds.
async function allocationChart(p, ok) {
  let last;
  await until(30, async () => {
    last = await p.evaluate(() => {
      const canvas = document.getElementById('ov-alloc');
      const chart = canvas && window.Chart && window.Chart.getChart(canvas);
      const box = canvas && canvas.closest('.chart-box');
      if (!chart || box.hidden) return {drawn: false, note: (document.getElementById('ov-chart-note') || {}).innerText};
      const ctx = canvas.getContext('2d');
      const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      let painted = 0;
      for (let i = 3; i < px.length; i += 4) if (px[i]) painted++;
      return {drawn: true, painted, width: canvas.width, labels: chart.data.labels,
        caption: document.getElementById('ov-chart-note').innerText,
        series: chart.data.datasets.map((d) => ({label: d.label, data: d.data}))};
    });
    return last.drawn && ok(last);
  }, 'the allocation chart').catch(() => assert.fail(`the allocation chart: ${JSON.stringify(last).slice(0, 2000)}`));
  assert.ok(last.painted > last.width, `the canvas is nearly blank (${last.painted} pixels)`);
  return last;
}

const series = (c, label) => (c.series.find((s) => s.label === label) || {data: []}).data;

// Downloads a file by clicking `selector`; returns its text.
async function downloadText(p, selector) {
  const [dl] = await Promise.all([p.waitForEvent('download'), p.click(selector)]);
  return fs.readFileSync(await dl.path(), 'utf8');
}

// No horizontal page scroll, and what scrolls sideways inside.
async function widths(p) {
  return p.evaluate(() => ({page: document.documentElement.scrollWidth, view: innerWidth,
    wraps: [...document.querySelectorAll('main .table-wrap')].filter((w) => w.offsetParent)
      .map((w) => w.scrollWidth - w.clientWidth)}));
}

before(async () => {
  fs.mkdirSync(SHOTS, {recursive: true});
  [URL, BULK_URL] = await Promise.all([
    startServer('allotd', ['--simulate-nodes', '2x2:default:pcie']),
    startServer('allotd-bulk', ['--simulate-nodes', '2x2', '--simulate-nodes', '1x4:a100:dgx',
      // its 10,000 pending workloads pass the default caps on pending work
      '--max-pending-per-user', '0', '--max-pending-per-project', '0'])]);
  adminToken = await token('admin', PASSWORD);
  clusterId = (await call('GET', '/api/v1/clusters'))[0].uuid;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  bulkDone = bulkSubmit(BULK_N);
  bulkDone.catch(() => {}); // reported by the test that awaits it
  page = await newPage('admin');
});

after(async () => {
  if (browser) await browser.close();
  const bad = [];
  if (agent) {
    bad.push(...await stopProcess(agent));
    fs.rmSync(agent.dir, {recursive: true, force: true});
  }
  for (const server of servers) {
    bad.push(...await stopProcess(server));
    fs.rmSync(server.dir, {recursive: true, force: true});
  }
  for (const t of timings) console.log(`# ${t}`);
  assert.deepEqual(bad, [], 'every allotd and the agent stop cleanly');
});

test('the files are served with a strict CSP, a favicon, nothing outside web/', async () => {
  const res = await fetch(`${URL}/`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/html/);
  assert.match(res.headers.get('content-security-policy'), /^default-src 'self'/);
  assert.match(await res.text(), /<link rel="icon" href="\/favicon.svg"/);
  const icon = await fetch(`${URL}/favicon.svg`);
  assert.equal(icon.status, 200);
  assert.match(icon.headers.get('content-type'), /^image\/svg\+xml/);
  assert.match((await fetch(`${URL}/app.js`)).headers.get('content-type'), /^text\/javascript/);
  assert.match((await fetch(`${URL}/style.css`)).headers.get('content-type'), /^text\/css/);
  assert.equal((await fetch(`${URL}/vendor/`)).status, 404);
});

test('login: a wrong password is refused, then the user and role show', async () => {
  await page.goto(`${URL}/`);
  await page.getByLabel('User name').fill('admin');
  await page.getByLabel('Password').fill('wrong');
  await page.getByRole('button', {name: 'Log in'}).click();
  await page.locator('#login-error').filter({hasText: 'Wrong user name or password'}).waitFor();
  await shot(page, 'login-error-desktop-light');
  await page.getByLabel('User name').fill('admin');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', {name: 'Log in'}).click();
  await page.locator('#who-name').filter({hasText: 'admin'}).waitFor();
  assert.equal(await page.locator('#who-role').innerText(), 'System administrator');
  const cookies = await page.context().cookies();
  assert.equal(cookies.length, 0, 'the token is never a cookie');
  // the address without ?refresh= refreshes every 5 s; the rest of the
  // test's, every REFRESH_S (the session is the tab's, kept)
  const period = async () => (await page.locator('.foot label').textContent()).replace(/\s+/g, ' ').trim();
  assert.equal(await period(), 'Refresh every 5 s');
  await page.goto(home(URL));
  await page.locator('#who-name').filter({hasText: 'admin'}).waitFor();
  assert.equal(await period(), `Refresh every ${REFRESH_S} s`);
});

test('the tenant logo: none at first, then shown in the header once an administrator sets it', async () => {
  assert.equal(await page.locator('#tenant-logo').isHidden(), true);
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24">' +
    '<rect width="24" height="24" fill="#76b900"/></svg>';
  await call('POST', '/api/v1/logo', {logo: Buffer.from(svg).toString('base64')});
  await page.reload(); // the session is kept (sessionStorage): the header is drawn again
  const logo = page.locator('#tenant-logo');
  await logo.waitFor({state: 'visible'});
  assert.match(await logo.getAttribute('src'), /^data:image\/svg\+xml;base64,/);
  await until(10, () => logo.evaluate((img) => img.complete && img.naturalWidth === 24),
    'the logo to be drawn (the CSP lets data: images in)');
  await shot(page, 'tenant-logo-desktop-light');
});

test('quick start: team-a over quota per pool; a1 Pending with its reason as a sentence and a tag', async () => {
  ids.a = await project('team-a', 2);
  ids.b = await project('team-b', 2);
  await submit('a1', ids.a, 1);
  await submit('a2', ids.a, 2);
  await submit('b1', ids.b, 1);
  for (const w of ['a1', 'a2', 'b1']) await waitPhase(w, 'Running');

  await go(page, '#/projects');
  await expectCell(page, 'projects-table', 'team-a', 'Over quota', 'Yes (default)');
  await expectCell(page, 'projects-table', 'team-a', 'Allocated', '3');
  await expectCell(page, 'projects-table', 'team-b', 'Over quota', 'No');
  // the row opens onto its pools, and the URL keeps it open
  await page.getByRole('button', {name: 'Show team-a per node pool'}).click();
  const sub = page.locator('#projects-table tr[data-key="team-a/pools"] table');
  await sub.locator('tr[data-key="default"]').waitFor();
  const perPool = await sub.locator('tr[data-key="default"] > *').allInnerTexts();
  assert.deepEqual([...perPool.slice(0, 6), perPool[7]], ['default', '2', 'none', '1', 'Normal', '3', 'Yes'],
    `team-a in default: ${perPool}`);
  assert.match(page.url(), /open=team-a/);
  await shot(page, 'projects-team-a-over-quota-desktop-light');

  await submit('b2', ids.b, 1);
  await waitPhase('b2', 'Running');
  await go(page, '#/workloads');
  await expectCell(page, 'workloads-table', 'a1', 'Status', /^Pending\b/);
  await expectCell(page, 'workloads-table', 'b2', 'Status', 'Running');
  const a1 = await workload('a1');
  const code = a1.phaseReason || a1.conditions.find((c) => c.reason).reason;
  const status = page.locator('#workloads-table tr[data-key="a1"] td.status');
  assert.equal(await status.locator('code.tag').innerText(), code);
  const sentence = await status.locator('.reason').innerText();
  assert.ok(sentence.length > 20 && !sentence.startsWith(code) && /\.$/.test(sentence),
    `the reason is a sentence: ${sentence}`);
  assert.ok(a1.phaseMessage.includes(sentence.replace(/\.$/, '').slice(0, 20)), 'the sentence is the server\'s');
  await shot(page, 'workloads-a1-pending-desktop-light');

  await page.getByRole('link', {name: 'Show details of a1'}).click();
  await page.locator('#wl-events').filter({hasText: 'Reclaimed'}).waitFor();
  await page.locator('#wl-facts code.tag').filter({hasText: code}).waitFor();
  await page.locator('#wl-detail table[aria-label="Pods"] th', {hasText: 'GPU use'}).waitFor();
  await shot(page, 'workload-detail-a1-desktop-light', false);

  await go(page, '#/projects');
  await expectCell(page, 'projects-table', 'team-a', 'Over quota', 'No');
  await expectCell(page, 'projects-table', 'team-a', 'Pending', '1');
});

test('the detail pane refreshes in place: focus, text selection and scroll are kept', async () => {
  await page.setViewportSize({width: DESKTOP.width, height: 480}); // room to scroll in
  await go(page, `#/workloads?id=${(await workload('a1')).id}`);
  await page.locator('#wl-detail-name').filter({hasText: 'a1'}).waitFor();
  await page.locator('#wl-events').waitFor();
  const marked = await page.evaluate(() => {
    const d = document.getElementById('wl-detail');
    document.getElementById('wl-suspend').focus({preventScroll: true});
    d.scrollTop = 120;
    document.getElementById('wl-facts').keptAcrossRefreshes = 'kept'; // the same element after
    const code = document.querySelector('#wl-facts dd code:not(.tag)');
    const r = document.createRange();
    r.selectNodeContents(code);
    getSelection().removeAllRanges();
    getSelection().addRange(r);
    return {scroll: d.scrollTop, selected: String(getSelection())};
  });
  assert.ok(marked.scroll > 0 && marked.selected.length === 36, JSON.stringify(marked));
  await refreshes(page, 2);
  const after = await page.evaluate(() => ({
    focus: document.activeElement && document.activeElement.id,
    marker: document.getElementById('wl-facts').keptAcrossRefreshes,
    selected: String(getSelection()),
    scroll: document.getElementById('wl-detail').scrollTop,
  }));
  assert.deepEqual(after, {focus: 'wl-suspend', marker: 'kept', selected: marked.selected, scroll: marked.scroll});
  await page.setViewportSize(DESKTOP);
});

test('the name box keeps focus and every key typed while the page refreshes under it', async () => {
  await go(page, '#/workloads');
  await page.locator('#wl-search').click();
  await page.keyboard.press('a');
  // the box's own refresh (300 ms after the last key) and a timed one land
  await page.waitForURL(/[?&]q=a(&|$)/);
  await refreshes(page, 1);
  await page.keyboard.press('1');
  const after = await page.evaluate(() => ({
    focus: document.activeElement && document.activeElement.id,
    value: document.getElementById('wl-search').value,
  }));
  assert.deepEqual(after, {focus: 'wl-search', value: 'a1'});
  await page.waitForURL(/[?&]q=a1(&|$)/);
  await page.locator('#wl-search').fill('');
  await page.waitForURL((u) => !/[?&]q=/.test(u.hash));
});

test('URL state: filters, sort, page and the selected workload; Back and a shared link', async () => {
  await go(page, '#/workloads');
  await page.locator('#wl-phase').selectOption('Running');
  await until(10, () => /phase=Running/.test(page.url()), 'the filter in the URL');
  await expectCell(page, 'workloads-table', 'b2', 'Status', 'Running');
  await until(10, async () => (await page.locator('#workloads-table tr[data-key="a1"]').count()) === 0,
    'the Pending a1 to leave the filtered table');
  await page.getByRole('button', {name: 'Workload', exact: true}).click();
  await until(10, () => /sort=name/.test(page.url()) && /order=asc/.test(page.url()), 'the sort in the URL');
  await until(10, async () => (await page.locator('#workloads-table tbody tr').first().getAttribute('data-key')) === 'a2',
    'the rows sorted by name');
  await page.getByRole('link', {name: 'Show details of b1'}).click();
  await page.locator('#wl-detail-name').filter({hasText: 'b1'}).waitFor();
  const shared = page.url();
  assert.match(shared, /id=[0-9a-f-]{36}/);
  await page.goBack();
  await page.locator('#wl-detail').waitFor({state: 'hidden'});
  assert.match(page.url(), /phase=Running/);
  await page.goBack();
  await until(10, () => !/sort=name/.test(page.url()), 'Back to undo the sort');
  await page.goBack();
  await until(10, async () => (await page.locator('#wl-phase').inputValue()) === '', 'Back to clear the filter');
  await page.locator('#workloads-table tr[data-key="a1"]').waitFor();
  // the shared link, opened afresh, shows the same
  const other = await newPage('shared-link');
  await login(other, 'admin', PASSWORD);
  await other.goto(shared);
  await other.locator('#wl-detail-name').filter({hasText: 'b1'}).waitFor();
  assert.equal(await other.locator('#wl-phase').inputValue(), 'Running');
  assert.equal(await other.locator('#workloads-table th[aria-sort="ascending"]').innerText(), 'Workload ▲');
  await other.context().close();
});

test('overview: evictions counted on the server, the chart over its whole range, workloads by type and phase', async () => {
  // 30 workloads changed after a1's eviction: a list built from the most
  // recently changed workloads would no longer see it. They stay Pending in
  // pool default, where team-c's limit is 0 (a pool made later, gpu-lab,
  // would otherwise run them one after the other on lab-1's free device)
  ids.c = await project('team-c', 0, {limit: 0});
  for (let i = 0; i < 30; i++) await submit(`c${i}`, ids.c, 1, adminToken, URL, {nodePools: ['default']});
  const count = (await call('GET', '/api/v1/evictions/count')).count;
  assert.ok(count >= 1, 'a1 was evicted');
  await go(page, '#/overview');
  await page.locator('#ov-evictions-count').filter({hasText: String(count)}).waitFor();
  await page.locator('#ov-evictions a', {hasText: 'a1'}).first().waitFor();
  // workloads by type and phase, as the server counts them
  const tele = await call('GET', '/api/v1/workloads/telemetry?telemetryType=WORKLOADS_COUNT&groupBy=Type,Phase');
  const pending = tele.values.filter((v) => v.groups.some((g) => g.value === 'Pending'))
    .reduce((s, v) => s + Number(v.value), 0);
  await expectCell(page, 'ov-types-table', 'Training', 'Pending', String(pending));
  await page.locator('#card-pending .card-value').filter({hasText: String(pending)}).waitFor();
  await page.locator('#ov-pending-text').filter({hasText: `${pending} pending`}).waitFor();
  // the chart: 120 slots of the last hour, max and mean, peak 4 GPUs
  const hour = await allocationChart(page, (c) => Math.max(...series(c, 'Allocated GPUs (max)')) === 4);
  assert.equal(hour.labels.length, 120, 'one label per slot of the hour');
  const mx = series(hour, 'Allocated GPUs (max)');
  const mean = series(hour, 'Allocated GPUs (mean)');
  assert.ok(mx.every((v, i) => v === null || mean[i] === null || v >= mean[i] - 1e-9), 'max >= mean in every slot');
  assert.ok(mx.slice(0, 100).every((v) => v === null), 'the hour before the server started is empty, not squeezed');
  assert.ok(series(hour, 'GPUs in the pool (now)').every((v) => v === 4), 'a capacity line of 4 GPUs');
  await shot(page, 'overview-desktop-light');
  // the department and node-pool filters narrow the evictions too: a1 was
  // evicted in team-a's department and in pool default, none in a new one
  const teamA = (await call('GET', `/api/v1/org-unit/projects/${ids.a}`));
  const quiet = await call('POST', '/api/v1/org-unit/departments', {name: 'quiet', clusterId, resources: []});
  await go(page, `#/overview?dept=${teamA.parentId}&pool=default`);
  await page.locator('#ov-evictions-count').filter({hasText: new RegExp(`^${count}$`)}).waitFor();
  await page.locator('#ov-pre').filter({hasText: 'and node pool default'}).waitFor();
  assert.match(await page.locator('#ov-evictions-all').getAttribute('href'), /dept=.*pool=default/);
  await page.locator('#ov-dept').selectOption(quiet.id);
  await page.locator('#ov-evictions-count').filter({hasText: /^0$/}).waitFor();
  await page.locator('#ov-pre .notice.empty').filter({hasText: 'in department quiet and node pool default'}).waitFor();
  await shot(page, 'overview-filtered-evictions-desktop-light');
  await page.locator('#ov-dept').selectOption(teamA.parentId);
  await page.locator('#ov-pool').selectOption('');
  await page.locator('#ov-evictions-count').filter({hasText: new RegExp(`^${count}$`)}).waitFor();
  // the Evictions page follows the same filters from the link
  await page.locator('#ov-evictions-all').click();
  await page.locator('#ev-range-text').filter({hasText: /in department /}).waitFor();
  await go(page, `#/evictions?dept=${quiet.id}`);
  await page.locator('#ev-range-text').filter({hasText: 'of 0 in the last day in department quiet'}).waitFor();
  await call('DELETE', `/api/v1/org-unit/departments/${quiet.id}`);
  await go(page, '#/overview?range=hour');
  // the whole day, even with a few minutes of samples
  await page.locator('#ov-range').selectOption('day');
  const day = await allocationChart(page, (c) => c.labels.length === 144);
  assert.ok(series(day, 'Allocated GPUs (max)').filter((v) => v !== null).length >= 1);
  assert.match(day.caption, /Last day, 144 slots of 10m/);
  assert.match(page.url(), /range=day/);
  // all the evictions, from the link
  await page.locator('#ov-evictions-all').click();
  await page.locator('#evictions-table tbody tr').first().waitFor();
  assert.equal(await page.locator('#evictions-table tbody tr').count(), count);
  assert.match(await page.locator('#ev-range-text').innerText(), new RegExp(`of ${count} in the last day`));
  await shot(page, 'evictions-desktop-light');
});

test('node pools created and edited from the page; a measured node; devices from the pods\' indices', async () => {
  await go(page, '#/nodes');
  await page.getByRole('button', {name: 'New node pool'}).click();
  const dlg = page.locator('#pool-dialog');
  await dlg.locator('input[name=name]').fill('gpu-lab');
  await dlg.locator('input[name=labelKey]').fill('lab');
  await dlg.locator('input[name=labelValue]').fill('gpu');
  await dlg.locator('select[name=gpuPlacement]').selectOption('spread');
  await dlg.locator('input[name=minRuntime]').fill('30m');
  await dlg.locator('input[name=tbfEnabled]').check();
  await dlg.locator('input[name=tbfWindow]').fill('24');
  await dlg.locator('input[name=tbfK]').fill('0.5');
  await shot(page, 'pool-dialog-desktop-light', false);
  await dlg.getByRole('button', {name: 'Create node pool'}).click();
  await dlg.waitFor({state: 'detached'});
  await expectCell(page, 'pools-table', 'gpu-lab', 'Minimum runtime', '30m');
  const pools = (await call('GET', '/api/v1/node-pools')).nodepools;
  const lab = pools.find((p) => p.name === 'gpu-lab');
  const sc = lab.schedulingConfiguration;
  assert.deepEqual([lab.labelKey, lab.labelValue, lab.placementStrategy.gpu, sc.minGuaranteedRuntime,
    sc.timeBasedFairshare.enabled, sc.timeBasedFairshare.windowSeconds, sc.timeBasedFairshare.kValue],
  ['lab', 'gpu', 'spread', '30m', true, 86400, 0.5]);
  await page.getByRole('button', {name: 'Edit node pool gpu-lab'}).click();
  await dlg.locator('input[name=minRuntime]').fill('1h');
  await dlg.getByRole('button', {name: 'Save'}).click();
  await dlg.waitFor({state: 'detached'});
  await expectCell(page, 'pools-table', 'gpu-lab', 'Minimum runtime', '1h');
  // a pool created and deleted
  await page.getByRole('button', {name: 'New node pool'}).click();
  await dlg.locator('input[name=name]').fill('spare');
  await dlg.locator('input[name=labelValue]').fill('spare');
  await dlg.getByRole('button', {name: 'Create node pool'}).click();
  await dlg.waitFor({state: 'detached'});
  await page.getByRole('button', {name: 'Delete node pool spare'}).click();
  await page.getByRole('dialog').getByRole('button', {name: 'Delete'}).click();
  await until(10, async () => !(await call('GET', '/api/v1/node-pools')).nodepools.some((p) => p.name === 'spare'),
    'the pool spare to go');

  // the agent's node joins gpu-lab; a workload there talks, and holds a device at 0%
  await startAgent();
  ids.lab = await project('lab', 0, {}, adminToken, URL,
    {resources: [{nodePool: {id: lab.id, name: 'gpu-lab'}, gpu: {deserved: 2, limit: -1, overQuotaWeight: 1}}]});
  await submit('talker', ids.lab, 1, adminToken, URL, {image: undefined, command: 'sh', nodePools: ['gpu-lab'],
    args: '-c \'i=0; while [ $i -lt 120 ]; do echo "line $i"; i=$((i+1)); done; ' +
      'while true; do echo "line $i"; i=$((i+1)); sleep 0.3; done\''});
  await waitPhase('talker', 'Running');
  const talker = await workload('talker');
  const pods = await call('GET', `/api/v1/workloads/${talker.id}/pods`);
  const given = pods.pods[0].gpuDevices;
  assert.equal(given.length, 1);
  await expectCell(page, 'nodes-table', 'lab-1', 'Status', 'Ready');
  await until(30, async () => (await page.locator('#nodes-table tr[data-key="lab-1"] .dev.used').count()) === 1,
    'lab-1\'s strip to show one device used');
  assert.equal(await page.locator('#nodes-table tr[data-key="lab-1"] .dev.used').getAttribute('data-index'),
    String(given[0]), 'the strip marks the device the pod was given');
  // every simulated node: the strip is the pods' devices
  const wl = (await call('GET', '/api/v1/workloads?filterBy=phase==Running&limit=200')).workloads;
  const held = {};
  for (const w of wl) {
    for (const p of (await call('GET', `/api/v1/workloads/${w.id}/pods`)).pods) {
      if (p.nodeName) for (const d of p.gpuDevices) (held[p.nodeName] ||= new Set()).add(d);
    }
  }
  for (const n of ['node-1', 'node-2', 'lab-1']) {
    const shown = await page.locator(`#nodes-table tr[data-key="${n}"] .dev.used`).evaluateAll(
      (els) => els.map((e) => Number(e.dataset.index)));
    assert.deepEqual(shown.sort(), [...(held[n] || [])].sort(), `the devices of ${n}`);
  }
  await shot(page, 'nodes-desktop-light');
  // a network topology on gpu-lab (the agent's label lab, then the host):
  // its nodes are grouped by domain, lab-1's the value of its label lab
  const labs = await call('POST', '/api/v1/network-topologies',
    {name: 'labs', clusterId, levels: ['lab', 'kubernetes.io/hostname']}, adminToken, 201);
  await call('PATCH', `/api/v1/node-pools/${lab.id}`, {networkTopologyId: labs.id});
  await expectCell(page, 'nodes-table', 'lab-1', 'Domain', 'gpu');
  await call('DELETE', `/api/v1/network-topologies/${labs.id}`, undefined, adminToken, 204);
  // the overview: one allocated GPU measured, and idle
  await go(page, '#/overview');
  await page.locator('#card-idle .card-value').filter({hasText: /^1$/}).waitFor();
  await page.locator('#card-idle .card-sub').filter({hasText: 'of 1 measured by agents'}).waitFor();
  await expectCell(page, 'ov-pools-table', 'gpu-lab', 'Idle allocated', '1 of 1');
  await expectCell(page, 'ov-pools-table', 'gpu-lab', 'Ready GPUs', '2/2');
  // the pool filter narrows the cards, and is in the URL
  await page.locator('#ov-pool').selectOption('gpu-lab');
  await page.locator('#card-gpus .card-value').filter({hasText: /^2$/}).waitFor();
  assert.match(page.url(), /pool=gpu-lab/);
  await page.locator('#ov-pool').selectOption('');
});

test('a workspace\'s port is reached at its URL, and the detail pane\'s Connect link points to it', async () => {
  const port = 20000 + (process.pid % 9000);
  const r = await call('POST', '/api/v1/workloads/workspaces', {name: 'notebook', projectId: ids.lab, clusterId,
    spec: {command: 'python3', args: `-m http.server ${port} --bind 127.0.0.1`, nodePools: ['gpu-lab'],
      compute: {gpuDevicesRequest: 0},
      exposedUrls: [{container: port, toolType: 'jupyter', toolName: 'notebook'}]}}, adminToken, 202);
  await waitPhase('notebook', 'Running');
  const w = await call('GET', `/api/v1/workloads/${r.workloadId}`);
  assert.deepEqual(w.urls, [`http://127.0.0.1:${port}`], 'the workload answers its URL');
  await until(20, async () => {
    try {
      return (await fetch(w.urls[0])).ok;
    } catch (e) {
      return false;
    }
  }, 'the notebook to answer at its URL');
  await go(page, `#/workloads?id=${r.workloadId}`);
  const link = page.locator('#wl-connect a');
  await link.waitFor();
  assert.equal(await link.getAttribute('href'), w.urls[0], 'the Connect link is the URL');
  assert.equal((await fetch(await link.getAttribute('href'))).status, 200, 'the link opens the port');
  await shot(page, 'workload-connect-desktop-light');
  await call('DELETE', `/api/v1/workloads/${r.workloadId}`, undefined, adminToken, 202);
});

test('logs follow the newest line when asked, and stay where the reader left them otherwise', async () => {
  const talker = await workload('talker');
  await go(page, `#/workloads?id=${talker.id}`);
  const pre = page.locator('#wl-logs');
  await pre.waitFor();
  await until(15, async () => /line 119/.test(await pre.innerText()), 'the first lines');
  // it opens at the newest line, following
  assert.equal(await page.locator('#wl-follow').isChecked(), true, 'the logs open following');
  await until(10, async () => pre.evaluate((e) => e.scrollHeight - e.clientHeight - e.scrollTop <= 4),
    'the log view at its newest line');
  // the pod table fits the pane
  const podsWrap = await page.locator('#wl-pods').evaluate((t) => {
    const w = t.closest('.table-wrap');
    return w.scrollWidth - w.clientWidth;
  });
  assert.ok(podsWrap <= 1, `the pod table is cut by ${podsWrap} px`);
  await pre.evaluate((e) => { e.scrollTop = 40; });
  const text0 = await pre.innerText();
  await refreshes(page, 2);
  const kept = await pre.evaluate((e) => ({top: e.scrollTop, text: e.textContent}));
  assert.equal(kept.top, 40, 'the reader\'s place is kept while lines arrive');
  assert.notEqual(kept.text, text0, 'new lines arrived meanwhile');
  await page.locator('#wl-follow').check();
  await refreshes(page, 1);
  const followed = await pre.evaluate((e) => ({gap: e.scrollHeight - e.clientHeight - e.scrollTop,
    last: e.textContent.trim().split('\n').pop()}));
  assert.ok(followed.gap <= 4, `following: ${followed.gap} px from the end`);
  await refreshes(page, 1);
  const later = await pre.evaluate((e) => ({gap: e.scrollHeight - e.clientHeight - e.scrollTop,
    last: e.textContent.trim().split('\n').pop()}));
  assert.ok(later.gap <= 4 && later.last !== followed.last, `still following: ${JSON.stringify([followed, later])}`);
  await shot(page, 'workload-detail-logs-desktop-light', false);
  // scrolling up stops following
  await pre.evaluate((e) => { e.scrollTop = 0; e.dispatchEvent(new Event('scroll')); });
  assert.equal(await page.locator('#wl-follow').isChecked(), false);
  // Escape closes the pane
  await page.keyboard.press('Escape');
  await page.locator('#wl-detail').waitFor({state: 'hidden'});
  assert.doesNotMatch(page.url(), /id=/);
});

// The Analytics page's chart of id, once it has data: {labels, series: {label: data}}.
async function analyticsChart(p, id, ok) {
  let last;
  await until(30, async () => {
    last = await p.evaluate((cid) => {
      const c = window.Chart && window.Chart.getChart(document.getElementById(cid));
      return c ? {labels: c.data.labels, series: Object.fromEntries(c.data.datasets.map((d) => [d.label, d.data]))} : null;
    }, id);
    return last && ok(last);
  }, `the chart ${id}`).catch(() => assert.fail(`the chart ${id}: ${JSON.stringify(last).slice(0, 2000)}`));
  return last;
}

const lastValue = (xs) => [...(xs || [])].reverse().find((x) => x !== null);

// lab-1's devices at util percent (the fake NVML's file, read at each query)
function labUtil(util) {
  fs.writeFileSync(path.join(agent.dir, 'nvml'), `gpu 0 GPU-lab-0 81559 1 ${util} Fake H100 80GB\n` +
    `gpu 1 GPU-lab-1 81559 1 ${util} Fake H100 80GB\n`);
}

test('analytics: GPUs over time, and per project allocated against in use, from the recorded series', async () => {
  // lab's talker holds one of lab-1's devices, measured at 0%: allocated and idle
  assert.equal((await workload('talker')).phase, 'Running');
  const nodes = (await call('GET', '/api/v1/nodes')).nodes;
  const ready = nodes.filter((n) => n.status === 'Ready').reduce((a, n) => a + n.gpuInfo.gpuCount, 0);
  await go(page, '#/analytics?range=min5');
  const cl = await analyticsChart(page, 'an-cluster', (c) => lastValue(c.series['Allocated']) > 0 &&
    lastValue(c.series['Allocated but idle (0% measured)']) === 1);
  assert.equal(lastValue(cl.series.GPUs), ready, 'the GPUs of the ready nodes');
  assert.equal(lastValue(cl.series['Unallocated (idle)']), ready - lastValue(cl.series.Allocated));
  assert.equal(cl.labels.length, 60, 'the range\'s 60 slots');
  await expectCell(page, 'an-usage-table', 'lab', 'Allocated now', '1');
  await expectCell(page, 'an-usage-table', 'lab', 'Quota', '2');
  await expectCell(page, 'an-usage-table', 'lab', 'Idle allocated now', '1');
  await expectCell(page, 'an-usage-table', 'lab', 'Utilisation (mean)', '0%');
  const usage = await analyticsChart(page, 'an-usage', (c) => c.labels.includes('lab'));
  assert.ok(usage.series['Allocated (mean)'][usage.labels.indexOf('lab')] > 0, 'lab\'s mean allocation');
  const alloc = await analyticsChart(page, 'an-alloc', (c) => lastValue(c.series.lab) === 1);
  assert.ok(Object.keys(alloc.series).length >= 1);
  await analyticsChart(page, 'an-util', (c) => lastValue(c.series.lab) === 0 &&
    lastValue(c.series['Every measured GPU']) === 0);
  // the device gets busy: lab's GPU is in use, no longer idle
  labUtil(60);
  try {
    await expectCell(page, 'an-usage-table', 'lab', 'Idle allocated now', '0');
    await expectCell(page, 'an-usage-table', 'lab', 'In use (mean)', /^0\.\d*[1-9]|^[1-9]/);
    await analyticsChart(page, 'an-cluster', (c) => lastValue(c.series['Allocated but idle (0% measured)']) === 0);
    await analyticsChart(page, 'an-util', (c) => lastValue(c.series.lab) === 60 &&
      lastValue(c.series['Every measured GPU']) === 60);
    await shot(page, 'analytics-desktop-light');
    // the CSV of a chart is its data
    const text = await downloadText(page, '#an-usage-csv');
    assert.match(text, /^Project,quota,allocated now,allocated mean,in use mean,utilisation mean %,idle allocated now\r\n/);
    assert.match(text, /\r\nlab,2,1,[0-9.]+,0\.[0-9]*[1-9][0-9]*,[0-9.]+,0\r\n/);
    const lines = (await downloadText(page, '#an-cluster-csv')).trim().split('\r\n');
    assert.equal(lines.length, 61, 'a header and a row per slot');
  } finally {
    labUtil(0);
  }
  // per department, in the URL
  await page.locator('#an-group').selectOption('Department');
  assert.match(page.url(), /group=Department/);
  await expectCell(page, 'an-usage-table', 'default', 'Allocated now', /^[1-9]/);
  // the longest waits: the pending workloads, longest first (several may
  // have been pending since the same cycle: the first row's time is the
  // oldest's)
  const pending = (await call('GET',
    '/api/v1/workloads?filterBy=phase==Pending&sortBy=phaseUpdatedAt&sortOrder=asc&limit=1')).workloads;
  if (pending.length) {
    const since = page.locator('#an-longest tbody tr:first-child time');
    let seen;
    await until(15, async () => (await since.count()) === 1 &&
      (seen = await since.getAttribute('datetime')) === pending[0].phaseUpdatedAt, 'the longest wait first')
      .catch(() => assert.fail(`the first of the longest waits is pending since ${seen}, ` +
        `the oldest since ${pending[0].phaseUpdatedAt}`));
  } else await page.locator('#an-wait-panel').getByText('No workload is pending now.').waitFor();
});

test('quotas: a limit below the quota and a project above its department are refused, oversubscription and quotas not backed warned', async () => {
  await go(page, '#/projects');
  const dlgD = page.locator('#department-dialog');
  await page.getByRole('button', {name: 'New department'}).click();
  await dlgD.locator('input[name=name]').fill('research');
  await dlgD.getByLabel('GPU quota in default').fill('2');
  await dlgD.getByRole('button', {name: 'Create department'}).click();
  await dlgD.waitFor({state: 'detached'});
  const dlg = page.locator('#project-dialog');
  await page.getByRole('button', {name: 'New project'}).click();
  await dlg.locator('input[name=name]').fill('big');
  await dlg.locator('select[name=parentId]').selectOption({label: 'research'});
  await dlg.getByLabel('GPU quota in default').fill('3');
  await dlg.locator('#q-messages .field-error').filter({hasText: 'above that of department research (2)'}).waitFor();
  assert.equal(await dlg.getByRole('button', {name: 'Create project'}).isDisabled(), true);
  await dlg.getByLabel('GPU quota in default').fill('2');
  await dlg.getByLabel('GPU limit in default').fill('1');
  await dlg.locator('#q-messages .field-error').filter({hasText: 'the limit (1) is below the quota (2)'}).waitFor();
  assert.equal(await dlg.getByRole('button', {name: 'Create project'}).isDisabled(), true);
  await shot(page, 'project-dialog-refused-desktop-light', false);
  await dlg.getByLabel('GPU limit in default').fill('-1');
  await until(5, async () => (await dlg.locator('#q-messages .field-error').count()) === 0, 'no error left');
  await dlg.getByRole('button', {name: 'Create project'}).click();
  await dlg.waitFor({state: 'detached'});
  // a second project: the department would be oversubscribed: a warning, and it saves
  await page.getByRole('button', {name: 'New project'}).click();
  await dlg.locator('input[name=name]').fill('big2');
  await dlg.locator('select[name=parentId]').selectOption({label: 'research'});
  await dlg.getByLabel('GPU quota in default').fill('1');
  await dlg.locator('#q-messages .notice.warn').filter({hasText: 'more than the department\'s 2'}).waitFor();
  await dlg.getByRole('button', {name: 'Create project'}).click();
  await dlg.waitFor({state: 'detached'});
  await page.locator('.notice.warn').filter({hasText: 'Department research: its projects\' quotas add up'}).waitFor();
  // a project quota its department cannot back (no entry in gpu-lab: 0 there) is said
  await expectCell(page, 'projects-table', 'big', 'Quota backed', 'Yes');
  const lab = (await call('GET', '/api/v1/node-pools')).nodepools.find((p) => p.name === 'gpu-lab');
  const thin = await call('POST', '/api/v1/org-unit/departments', {name: 'thin', clusterId,
    resources: [{nodePool: {id: '1', name: 'default'}, gpu: {deserved: 1}}]});
  const loose = await call('POST', '/api/v1/org-unit/projects', {name: 'loose', clusterId, parentId: thin.id,
    resources: [{nodePool: {id: String(lab.id), name: 'gpu-lab'}, gpu: {deserved: 1, limit: -1}}]});
  await expectCell(page, 'projects-table', 'loose', 'Quota backed', 'No (gpu-lab: 1 > 0)');
  await page.locator('.notice.warn').filter({hasText: 'Project loose: deserved 1 GPUs in node pool gpu-lab exceed the 0'}).waitFor();
  await call('DELETE', `/api/v1/org-unit/projects/${loose.id}`);
  await call('DELETE', `/api/v1/org-unit/departments/${thin.id}`);
  await until(10, async () => (await page.locator('.notice.warn').filter({hasText: 'Project loose'}).count()) === 0,
    'the warning to go with loose');
  // the API refuses what the form refuses
  const research = (await call('GET', '/api/v1/org-unit/departments')).departments.find((d) => d.name === 'research');
  const res = await fetch(`${URL}/api/v1/org-unit/projects`, {method: 'POST',
    headers: {Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json'},
    body: JSON.stringify({name: 'bigger', parentId: research.id, resources: [{nodePool: {id: '1', name: 'default'},
      gpu: {deserved: 3, limit: -1}}]})});
  assert.equal(res.status, 400);
  assert.match((await res.json()).details, /above that of its department research \(2\)/);
  // editing team-a: a limit below its quota is refused by the server too
  const bad = await fetch(`${URL}/api/v1/org-unit/projects/${ids.a}/resources`, {method: 'PUT',
    headers: {Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json'},
    body: JSON.stringify([{nodePool: {id: '1', name: 'default'}, gpu: {deserved: 2, limit: 1}}])});
  assert.equal(bad.status, 400);
  // delete a project and a department from the page
  await page.getByRole('button', {name: 'Delete big2'}).click();
  await page.getByRole('dialog').getByRole('button', {name: 'Delete'}).click();
  await until(10, async () => !(await call('GET', '/api/v1/org-unit/projects')).projects.some((p) => p.name === 'big2'),
    'big2 to go');
  await page.getByRole('button', {name: 'New department'}).click();
  await dlgD.locator('input[name=name]').fill('short-lived');
  await dlgD.getByRole('button', {name: 'Create department'}).click();
  await dlgD.waitFor({state: 'detached'});
  await page.getByRole('button', {name: 'Delete short-lived'}).click();
  await page.getByRole('dialog').getByRole('button', {name: 'Delete'}).click();
  await until(10, async () => !(await call('GET', '/api/v1/org-unit/departments')).departments
    .some((d) => d.name === 'short-lived'), 'short-lived to go');
  // an edit says what it would do before it is saved (a what-if of the
  // new quotas): team-b's fair share before -> after; Cancel saves nothing
  await page.getByRole('button', {name: 'Edit team-b'}).click();
  await dlg.getByLabel('GPU quota in default').fill('1');
  await dlg.locator('.notice.preview').filter({hasText: /^Would .*team-b's fair share in default: \S+ -> \S+ GPUs/}).waitFor();
  await dlg.getByRole('button', {name: 'Cancel'}).click();
  await dlg.waitFor({state: 'detached'});
  const tb = (await call('GET', '/api/v1/org-unit/projects')).projects.find((p) => p.name === 'team-b');
  assert.equal(tb.resources[0].gpu.deserved, 2, 'a previewed quota was not saved');
});

test('a project\'s node-pool order, rank, node types and scheduling rules from its form; CSV export', async () => {
  await go(page, '#/projects');
  await page.getByRole('button', {name: 'Edit team-c'}).click();
  const dlg = page.locator('#project-dialog');
  await dlg.locator('input[name=rank]').fill('3');
  await dlg.locator('input[name="order-gpu-lab"]').check();
  await dlg.locator('input[name="order-default"]').check();
  await dlg.getByRole('button', {name: 'Move default up'}).click();
  await dlg.locator('input[name=trainTypes]').fill('pcie');
  await dlg.locator('input[name=trainingJobTimeLimitSeconds]').fill('7200');
  await dlg.getByRole('button', {name: 'Save'}).click();
  await dlg.waitFor({state: 'detached'});
  const c = await call('GET', `/api/v1/org-unit/projects/${ids.c}`);
  assert.deepEqual([c.rank, c.defaultNodePools, c.nodeTypes.training, c.schedulingRules.trainingJobTimeLimitSeconds,
    c.resources[0].gpu.limit], [3, ['default', 'gpu-lab'], ['pcie'], 7200, 0]);
  // CSV: one line per project and pool
  const text = await downloadText(page, '#pj-export');
  const lines = text.trim().split('\r\n');
  assert.equal(lines[0], 'Project,Department,Node pool,GPU quota,GPU limit,Over-quota weight,Priority,' +
    'Allocated GPUs,Fair share,Over quota');
  assert.ok(lines.some((l) => /^team-a,default,default,2,-1,1,Normal,\d+(\.\d+)?,[\d.]*,(Yes|No)$/.test(l)), text);
  assert.ok(lines.some((l) => l.startsWith('big,research,default,2,-1,')), text);
  await shot(page, 'projects-desktop-light');
  await go(page, '#/workloads?project=team-c');
  const wtext = await downloadText(page, '#wl-export');
  const wl = wtext.trim().split('\r\n');
  assert.match(wl[0], /^Workload,Id,Type,Preemptible,Status,Pending reason,Reason code,Project,/);
  assert.equal(wl.length, 31, 'the 30 workloads of team-c, every page');
  assert.ok(wl.slice(1).every((l) => /,team-c,/.test(l)));
});

test('submit: all four types, the form checks the name, shows the free quota, and words the server\'s refusal', async () => {
  await go(page, '#/workloads');
  const open = async () => {
    await page.locator('#submit-workload').click();
    const d = page.locator('#submit-dialog');
    await d.waitFor();
    return d;
  };
  // free quota judged per pool, in the order the workload tries them: a
  // project with 1 GPU free in each of two pools has no room for 2
  const lab = (await call('GET', '/api/v1/node-pools')).nodepools.find((x) => x.name === 'gpu-lab');
  await call('POST', '/api/v1/org-unit/projects', {name: 'split', clusterId, resources: [
    {nodePool: {id: '1', name: 'default'}, gpu: {deserved: 1, limit: -1}},
    {nodePool: {id: lab.id, name: 'gpu-lab'}, gpu: {deserved: 1, limit: -1}}]});
  await page.locator('#wl-project').waitFor(); // the page has read the projects again
  await refreshes(page, 1);
  let dlg = await open();
  const name = dlg.locator('input[name=name]');
  // an invalid name sends no dry run (it would only be refused)
  const dryRuns = [];
  const onRequest = (r) => { if (/dryRun=true/.test(r.url())) dryRuns.push(r.url()); };
  page.on('request', onRequest);
  await name.fill('Bad_Name');
  await dlg.locator('#sf-name-check').filter({hasText: 'Not a valid name'}).waitFor();
  await sleep(1200);
  page.off('request', onRequest);
  assert.deepEqual(dryRuns, [], 'no dry run for an invalid name');
  await dlg.locator('select[name=project]').selectOption({label: 'split'});
  await dlg.locator('select[name=type]').selectOption('Workspace');
  await dlg.locator('input[name=gpus]').fill('2');
  const verdict = dlg.locator('#sf-verdict');
  await verdict.filter({hasText: 'fits in none of split\'s node pools (default: 1 free quota; gpu-lab: 1 free quota)'}).waitFor();
  await dlg.locator('#sf-order').filter({hasText: 'default → gpu-lab'}).waitFor();
  await shot(page, 'submit-form-per-pool-desktop-light', false);
  await dlg.locator('input[name=gpus]').fill('1');
  await verdict.filter({hasText: 'fits in split\'s free quota in node pool default (1 free)'}).waitFor();
  await dlg.locator('#sf-quota tr.chosen[data-key="default"]').waitFor();
  await dlg.locator('input[name="pool-gpu-lab"]').check();
  await verdict.filter({hasText: 'fits in split\'s free quota in node pool gpu-lab (1 free)'}).waitFor();
  await dlg.locator('#sf-order').filter({hasText: 'the pools chosen below): gpu-lab.'}).waitFor();
  await dlg.locator('input[name="pool-gpu-lab"]').uncheck();
  await dlg.getByRole('button', {name: 'Cancel'}).click();
  dlg = await open();
  await name.fill('Bad_Name');
  await dlg.locator('#sf-name-check').filter({hasText: 'Not a valid name'}).waitFor();
  await dlg.locator('select[name=project]').selectOption({label: 'team-a'});
  await name.fill('a1');
  await dlg.locator('#sf-name-check').filter({hasText: 'team-a already has a workload named a1.'}).waitFor();
  // the free quota of team-a, and what this request does to it
  const quotaRow = dlg.locator('#sf-quota tr[data-key="default"] > *');
  assert.deepEqual((await quotaRow.allInnerTexts()).slice(0, 3), ['1.', 'default', '2']);
  await dlg.locator('input[name=gpus]').fill('5');
  await dlg.locator('#sf-verdict').filter({hasText: 'fits in none of team-a\'s node pools'}).waitFor();
  await dlg.locator('select[name=type]').selectOption('Workspace');
  await dlg.locator('#sf-verdict').filter({hasText: 'a non-preemptible workload runs only within quota'}).waitFor();
  await shot(page, 'submit-form-desktop-light', false);
  // a training: pools in order, node type, CPU, memory, variables, parallel pods
  await dlg.locator('select[name=type]').selectOption('Training');
  await name.fill('form-train');
  await dlg.locator('#sf-name-check').filter({hasText: 'form-train is free in team-a.'}).waitFor();
  await dlg.locator('input[name=gpus]').fill('1');
  await dlg.locator('input[name=cpu]').fill('0.5');
  await dlg.locator('input[name=memory]').fill('1G');
  await dlg.locator('input[name=parallelism]').fill('2');
  await dlg.locator('input[name="pool-gpu-lab"]').check();
  await dlg.locator('input[name="pool-default"]').check();
  await dlg.getByRole('button', {name: 'Move default up'}).click();
  await dlg.locator('select[name=nodeType]').selectOption('pcie');
  await dlg.locator('#sf-env-add').click();
  await dlg.getByLabel('Variable 1 name').fill('EPOCHS');
  await dlg.getByLabel('Variable 1 value').fill('3');
  // the preview (a dry run of this very request): where it would start, or
  // why it would wait in the words the scheduler then writes on it
  const preview = dlg.locator('.notice.preview').filter({hasText: /^Would (start now on \S+.* in node pool \S+|wait: .+)/});
  await preview.waitFor();
  // the dry run's verdict sits beside the Submit button, in view without scrolling
  assert.equal(await dlg.locator('.dialog-actions .notice.preview').count(), 1);
  const pv = await preview.boundingBox();
  const sb = await dlg.getByRole('button', {name: 'Submit'}).boundingBox();
  const vh = page.viewportSize().height;
  assert.ok(pv.y + pv.height <= vh && sb.y + sb.height <= vh && Math.abs(pv.y - sb.y) < 120,
    `the preview (${JSON.stringify(pv)}) is by the button (${JSON.stringify(sb)})`);
  await sleep(600); // the last change's ask has settled
  const foreseen = await preview.textContent();
  await dlg.getByRole('button', {name: 'Submit'}).click();
  await dlg.waitFor({state: 'detached'});
  await page.locator('#wl-detail-name').filter({hasText: 'form-train'}).waitFor();
  if (foreseen.startsWith('Would wait: ')) {
    let ready;
    await until(20, async () => {
      const w = await workload('form-train');
      ready = (w.conditions || []).find((c) => c.type === 'Ready');
      return w.phase === 'Pending' && ready && ready.message !== '';
    }, 'form-train to be pending with a message');
    assert.equal(ready.message, foreseen.replace(/^Would wait: /, ''), 'the preview said why it would wait');
  } else {
    await waitPhase('form-train', 'Running');
  }
  assert.match(page.url(), /id=/);
  const t = await workload('form-train');
  const ts = (await call('GET', `/api/v1/workloads/trainings/${t.id}`)).spec;
  assert.deepEqual([ts.nodePools, ts.nodeType, ts.compute.cpuCoreRequest, ts.compute.cpuMemoryRequest,
    ts.parallelism, ts.environmentVariables.find((e) => e.name === 'EPOCHS').value, t.submittedBy],
  [['default', 'gpu-lab'], 'pcie', 0.5, '1G', 2, '3', 'admin']);
  // a workspace with GPU memory
  dlg = await open();
  await dlg.locator('select[name=type]').selectOption('Workspace');
  await dlg.locator('input[name=name]').fill('form-ws');
  await dlg.locator('select[name=project]').selectOption({label: 'team-b'});
  await dlg.locator('select[name=gpuKind]').selectOption('memory');
  await dlg.locator('input[name=gpuMemory]').fill('20G');
  await dlg.getByRole('button', {name: 'Submit'}).click();
  await dlg.waitFor({state: 'detached'});
  const ws = await workload('form-ws');
  assert.equal(ws.type, 'Workspace');
  assert.equal((await call('GET', `/api/v1/workloads/workspaces/${ws.id}`)).spec.compute.gpuMemoryRequest, '20G');
  // a distributed training with 2 workers
  dlg = await open();
  await dlg.locator('select[name=type]').selectOption('Distributed');
  await dlg.locator('input[name=name]').fill('form-dist');
  await dlg.locator('select[name=project]').selectOption({label: 'team-b'});
  await dlg.locator('input[name=gpus]').fill('0');
  await dlg.locator('input[name=workers]').fill('2');
  await dlg.locator('select[name=framework]').selectOption('PyTorch');
  await dlg.getByRole('button', {name: 'Submit'}).click();
  await dlg.waitFor({state: 'detached'});
  const dist = await workload('form-dist');
  const ds = (await call('GET', `/api/v1/workloads/distributed/${dist.id}`)).spec;
  assert.deepEqual([dist.type, ds.numWorkers, ds.distributedFramework], ['Distributed', 2, 'PyTorch']);
  // an inference with 1 to 2 replicas
  dlg = await open();
  await dlg.locator('select[name=type]').selectOption('Inference');
  await dlg.locator('input[name=name]').fill('form-inf');
  await dlg.locator('select[name=project]').selectOption({label: 'team-b'});
  await dlg.locator('input[name=gpus]').fill('0');
  await dlg.locator('input[name=maxReplicas]').fill('2');
  await dlg.getByRole('button', {name: 'Submit'}).click();
  await dlg.waitFor({state: 'detached'});
  const inf = await workload('form-inf');
  const is = (await call('GET', `/api/v1/workloads/inferences/${inf.id}`)).spec;
  assert.deepEqual([inf.type, is.autoscaling.minReplicas, is.autoscaling.maxReplicas], ['Inference', 1, 2]);
  // the server's refusal, in words, in the form that stays open
  dlg = await open();
  await dlg.locator('input[name=name]').fill('form-bad');
  await dlg.locator('select[name=gpuKind]').selectOption('memory');
  await dlg.locator('input[name=gpuMemory]').fill('lots');
  await dlg.getByRole('button', {name: 'Submit'}).click();
  await dlg.locator('.notice.error').filter({hasText: /^The server refused the form: .*gpuMemoryRequest/}).waitFor();
  await dlg.getByRole('button', {name: 'Cancel'}).click();
  assert.equal(await workload('form-bad'), undefined);
});

test('access rules from the page; a researcher of team-a sees "your projects" only', async () => {
  const u = await call('POST', '/api/v1/users', {email: 'alice@example.com'}, adminToken, 201);
  ids.alice = u.id;
  await go(page, '#/access');
  await page.getByRole('button', {name: 'New access rule'}).click();
  const dlg = page.locator('#rule-dialog');
  await dlg.locator('input[name=subjectId]').fill('alice@example.com');
  await dlg.locator('select[name=roleId]').selectOption({label: 'L1 researcher'});
  await dlg.locator('select[name=scopeType]').selectOption('project');
  await dlg.locator('select[name=scopeId]').selectOption({label: 'team-a'});
  await dlg.getByRole('button', {name: 'Add the rule'}).click();
  await dlg.waitFor({state: 'detached'});
  const rulesNow = async () => {
    const r = await call('GET', '/api/v1/authorization/access-rules?limit=500');
    return (Array.isArray(r) ? r : r.accessRules).filter((x) => x.subjectId === 'alice@example.com');
  };
  const rules = await rulesNow();
  assert.equal(rules.length, 1);
  assert.deepEqual([rules[0].roleName, rules[0].scopeType, String(rules[0].scopeId)], ['L1 researcher', 'project', ids.a]);
  await page.locator('#rules-table tbody tr').filter({hasText: 'alice@example.com'}).waitFor();
  await shot(page, 'access-desktop-light');

  const alice = await newPage('alice');
  await login(alice, 'alice@example.com', u.tempPassword);
  assert.match(await alice.locator('#who-role').innerText(), /L1 researcher/);
  assert.equal(await alice.locator('#nav-access').isVisible(), false);
  await alice.locator('#ov-scope').filter({hasText: 'Your projects: team-a.'}).waitFor();
  await go(alice, '#/workloads');
  await expectCell(alice, 'workloads-table', 'a1', 'Project', 'team-a');
  const names = await alice.locator('#workloads-table tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.key));
  assert.deepEqual(names.sort(), ['a1', 'a2', 'form-train']);
  await shot(alice, 'researcher-workloads-desktop-light');
  await go(alice, '#/projects');
  await expectCell(alice, 'projects-table', 'team-a', 'GPU quota', '2');
  assert.equal(await alice.getByRole('button', {name: 'New project'}).count(), 0);
  assert.equal(await alice.locator('#projects-table tbody > tr[data-key]:not(.sub-row)').count(), 1);

  // the rule deleted from the page; then alice's tokens revoked: her dashboard goes back to login
  const row = page.locator('#rules-table tbody tr').filter({hasText: 'alice@example.com'});
  await row.getByRole('button', {name: /^Delete the rule/}).click();
  await page.getByRole('dialog').getByRole('button', {name: 'Delete'}).click();
  await until(10, async () => (await rulesNow()).length === 0, 'the rule to go');
  await call('POST', `/api/v1/users/${ids.alice}/logout`, undefined, adminToken, 200);
  await alice.locator('#login-message').filter({hasText: 'expired or was revoked'}).waitFor({timeout: 15000 * SCALE});
  await shot(alice, 'session-revoked-desktop-light');
  await alice.context().close();
});

test('assets: an environment and a compute resource made on the page run a workload; a credential is never shown', async () => {
  await go(page, '#/assets');
  await page.getByRole('button', {name: 'New environment'}).click();
  let dlg = page.getByRole('dialog');
  await dlg.locator('input[name=name]').fill('web-env');
  await dlg.locator('select[name=scope]').selectOption('project');
  await dlg.locator('select[name=project]').selectOption({label: 'team-a'});
  await dlg.locator('input[name=image]').fill('runai.jfrog.io/demo/quickstart');
  await dlg.locator('input[name=args]').fill('--from-env');
  await dlg.getByRole('button', {name: 'Create the environment'}).click();
  await dlg.waitFor({state: 'detached'});
  await page.getByRole('button', {name: 'New compute resource'}).click();
  dlg = page.getByRole('dialog');
  await dlg.locator('input[name=name]').fill('half-gpu');
  await dlg.locator('select[name=scope]').selectOption('tenant');
  await dlg.locator('input[name=gpus]').fill('1');
  await dlg.locator('input[name=portion]').fill('0.5');
  await dlg.getByRole('button', {name: 'Create the compute resource'}).click();
  await dlg.waitFor({state: 'detached'});
  await call('POST', '/api/v1/asset/credentials/password', {meta: {name: 'db-cred', scope: 'project',
    projectId: ids.a}, spec: {user: 'alice', password: 'browser-secret-pw'}}, adminToken, 202);
  await expectCell(page, 'assets-environment', (await call('GET', '/api/v1/asset/environment')).entries[0].meta.id,
    'Image', 'runai.jfrog.io/demo/quickstart');
  await page.locator('#assets-compute tbody tr').filter({hasText: '1 × 0.5'}).waitFor();
  await page.locator('#assets-credential tbody tr').filter({hasText: 'user alice'}).waitFor();
  assert.equal((await page.content()).includes('browser-secret-pw'), false);
  await shot(page, 'assets-desktop-light');

  // the Submit form starts from them (their values in its fields), the arguments overridden: it runs
  await go(page, '#/workloads');
  await page.locator('#submit-workload').click();
  const sf = page.locator('#submit-dialog');
  await sf.waitFor();
  await sf.locator('select[name=project]').selectOption({label: 'team-a'});
  await sf.locator('select[name=environment]').selectOption({label: 'web-env (project team-a)'});
  await sf.locator('select[name=computeAsset]').selectOption({label: 'half-gpu (tenant)'});
  assert.equal(await sf.locator('input[name=image]').inputValue(), 'runai.jfrog.io/demo/quickstart');
  assert.equal(await sf.locator('input[name=args]').inputValue(), '--from-env');
  assert.equal(await sf.locator('select[name=gpuKind]').inputValue(), 'portion');
  assert.equal(await sf.locator('input[name=portion]').inputValue(), '0.5');
  await sf.locator('input[name=name]').fill('from-assets');
  await sf.locator('input[name=args]').fill('--mine');
  await shot(page, 'submit-from-assets-desktop-light');
  await sf.getByRole('button', {name: 'Submit'}).click();
  await sf.waitFor({state: 'detached'});
  await waitPhase('from-assets', 'Running');
  const w = await call('GET', `/api/v1/workloads/trainings/${(await workload('from-assets')).id}`);
  assert.deepEqual([w.spec.image, w.spec.args, w.spec.compute.gpuPortionRequest, w.spec.assets.environment.name,
    w.spec.assets.compute.name], ['runai.jfrog.io/demo/quickstart', '--mine', 0.5, 'web-env', 'half-gpu']);

  // deleting the environment it came from is refused, naming it; once it is gone, allowed
  await go(page, '#/assets');
  const envRow = page.locator('#assets-environment tbody tr').filter({hasText: 'web-env'});
  await envRow.getByRole('button', {name: 'Delete web-env'}).click();
  await page.getByRole('dialog').getByRole('button', {name: 'Delete'}).click();
  await page.locator('#action-error').filter({hasText: 'from-assets'}).waitFor();
  await call('DELETE', `/api/v1/workloads/${(await workload('from-assets')).id}`, undefined, adminToken, 202);
  await envRow.getByRole('button', {name: 'Delete web-env'}).click();
  await page.getByRole('dialog').getByRole('button', {name: 'Delete'}).click();
  await envRow.waitFor({state: 'detached'});
});

test('users: an administrator creates a user on the Users page, who logs in with the password shown once', async () => {
  await go(page, '#/users');
  assert.equal(await page.locator('#nav-users').isVisible(), true);
  await page.locator('#users-table tbody tr[data-key="admin"]').waitFor();
  // allot has no disable: the page says so, and what locks a user out instead
  await page.locator('main .notice.info').filter({hasText: 'allot cannot disable a user'}).waitFor();
  assert.equal(await page.getByRole('button', {name: 'Delete admin'}).isDisabled(), true);
  await page.getByRole('button', {name: 'New user'}).click();
  const dlg = page.locator('#user-dialog');
  await dlg.locator('input[name=email]').fill('bob@example.com');
  await dlg.getByRole('button', {name: 'Create the user'}).click();
  const secret = page.locator('#secret-dialog');
  const shown = async () => {
    await secret.waitFor();
    const pw = (await secret.locator('#temp-password').innerText()).trim();
    assert.ok(pw.length >= 16, `a temporary password: ${pw}`);
    await secret.getByRole('button', {name: 'Done'}).click();
    await secret.waitFor({state: 'detached'});
    assert.equal((await page.content()).includes(pw), false, 'the password is gone once its dialog closes');
    return pw;
  };
  const pw = await shown();
  // the page refreshed at once (not on its 5 s timer)
  const bobRow = page.locator('#users-table tbody tr[data-key="bob@example.com"]');
  await bobRow.waitFor({timeout: 4000 * SCALE});
  await expectCell(page, 'users-table', 'bob@example.com', 'Last login', 'never');
  await expectCell(page, 'users-table', 'bob@example.com', 'Created by', 'admin');
  await shot(page, 'users-desktop-light');

  const bob = await newPage('bob');
  await login(bob, 'bob@example.com', pw);
  assert.equal(await bob.locator('#who-role').innerText(), 'no role');
  assert.equal(await bob.locator('#nav-users').isVisible(), false);
  await bob.context().close();

  // a new password from the page: shown once; the old one no longer logs in, the new one does
  await page.locator('#users-table').getByRole('button', {name: 'Reset password bob@example.com'}).click();
  await page.getByRole('dialog').getByRole('button', {name: 'Reset password'}).click();
  const pw2 = await shown();
  // the page refreshed after the reset, which came after bob's login
  await expectCell(page, 'users-table', 'bob@example.com', 'Last login', /\d/);
  assert.notEqual(pw2, pw);
  const grant = async (password) => (await fetch(`${URL}/api/v1/token`, {method: 'POST',
    headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({grantType: 'password', username: 'bob@example.com', password})})).status;
  assert.notEqual(await grant(pw), 200, 'the old password is refused');
  assert.equal(await grant(pw2), 200, 'the new password logs in');

  // deleted from the page: gone from the list and from the server
  await page.locator('#users-table').getByRole('button', {name: 'Delete bob@example.com'}).click();
  await page.getByRole('dialog').getByRole('button', {name: 'Delete'}).click();
  await bobRow.waitFor({state: 'detached', timeout: 4000 * SCALE});
  assert.equal((await call('GET', '/api/v1/users')).some((u) => u.username === 'bob@example.com'), false);
  assert.notEqual(await grant(pw2), 200, 'a deleted user cannot log in');
});

// A department with a training default and a project in it with a
// training rule (no quota, so nothing it submits runs), and a project
// under no policy; the policy viewer and the submit form read them.
async function policyProject() {
  const free = await call('POST', '/api/v1/org-unit/departments', {name: 'pol-free', clusterId, resources: []});
  await project('pol-free', 0, {limit: 0}, adminToken, URL, {parentId: free.id});
  const dept = await call('POST', '/api/v1/org-unit/departments', {name: 'pol-dept', clusterId, resources: []});
  const pid = await project('pol-proj', 0, {limit: 0}, adminToken, URL, {parentId: dept.id});
  await call('PUT', '/api/v2/policy/trainings', {meta: {name: 'pol-dept', scope: 'department', departmentId: dept.id},
    policy: {defaults: {compute: {cpuCoreRequest: 0.5}}}});
  await call('PUT', '/api/v2/policy/trainings', {meta: {name: 'pol-proj', scope: 'project', projectId: pid},
    policy: {rules: {compute: {gpuDevicesRequest: {max: 2}}, imagePullPolicy: {options: [{value: 'IfNotPresent'}]}}}});
  return pid;
}

test('policy viewer: a project\'s effective policy, a project rule and a department default with their scopes', async () => {
  ids.pol = await policyProject();
  await go(page, '#/policies?project=pol-proj&type=Training');
  const row = 'compute.gpuDevicesRequest';
  await expectCell(page, 'policy-table', row, 'Max', '2');
  await expectCell(page, 'policy-table', row, 'Rule from', 'project pol-proj');
  await expectCell(page, 'policy-table', row, 'Default', '-');
  await expectCell(page, 'policy-table', 'compute.cpuCoreRequest', 'Default', '0.5');
  await expectCell(page, 'policy-table', 'compute.cpuCoreRequest', 'Default from', 'department pol-dept');
  await expectCell(page, 'policy-table', 'compute.cpuCoreRequest', 'Rule from', '-');
  await expectCell(page, 'policy-table', 'imagePullPolicy', 'Options', 'IfNotPresent');
  assert.equal(await page.locator('#po-project').inputValue(), 'pol-proj');
  await page.locator('#po-caption').filter({hasText: 'submitted to pol-proj (department pol-dept)'}).waitFor();
  await shot(page, 'policies-desktop-light');
  // another type: none of these applies; the URL follows
  await page.locator('#po-type').selectOption('Workspace');
  await page.locator('main .notice.empty').filter({hasText: 'No policy sets a default or a rule for a workspace in pol-proj'})
    .waitFor({timeout: 4000 * SCALE});
  assert.match(page.url(), /type=Workspace/);
});

test('submit: the project\'s policy fills its defaults, shows its limits, and flags a value over a max before sending', async () => {
  await go(page, '#/workloads');
  await page.locator('#submit-workload').click();
  const dlg = page.locator('#submit-dialog');
  await dlg.waitFor();
  await dlg.locator('select[name=project]').selectOption({label: 'pol-proj'});
  const cpu = dlg.locator('input[name=cpu]');
  await until(10, async () => (await cpu.inputValue()) === '0.5', 'the department\'s default CPU in the form');
  // a project outside pol-dept (no such default): the field goes back to what it held; and back again
  await dlg.locator('select[name=project]').selectOption({label: 'pol-free'});
  await until(10, async () => (await cpu.inputValue()) === '', 'the CPU field empty again for pol-free');
  await dlg.locator('select[name=project]').selectOption({label: 'pol-proj'});
  await until(10, async () => (await cpu.inputValue()) === '0.5', 'the default again for pol-proj');
  await dlg.locator('#sf-policy-compute-cpuCoreRequest').filter({hasText: 'Policy: default 0.5 (set by department pol-dept).'}).waitFor();
  await dlg.locator('#sf-policy-compute-gpuDevicesRequest').filter({hasText: 'Policy: max 2 (set by project pol-proj).'}).waitFor();
  await dlg.locator('#sf-policy-rest').filter({hasText: 'imagePullPolicy: one of IfNotPresent (set by project pol-proj)'}).waitFor();
  await dlg.locator('input[name=name]').fill('pol-train');
  const gpus = dlg.locator('input[name=gpus]');
  await gpus.fill('3');
  await dlg.locator('#sf-policy-compute-gpuDevicesRequest')
    .filter({hasText: 'Breaks the policy: 3 is over the max 2 set by project pol-proj.'}).waitFor();
  assert.equal(await gpus.getAttribute('aria-invalid'), 'true');
  await dlg.locator('#sf-policy-verdict').filter({hasText: 'compute.gpuDevicesRequest'}).waitFor();
  await shot(page, 'submit-policy-desktop-light', false);
  await dlg.getByRole('button', {name: 'Submit'}).click();
  await dlg.locator('.notice.error').filter({hasText: /^The project's policy refuses the form \(nothing was sent\): compute\.gpuDevicesRequest: 3 is over the max 2/}).waitFor();
  assert.equal(await workload('pol-train'), undefined);
  // the policy tightened meanwhile: the form passes 2, the server's 400 is shown in the form
  await gpus.fill('2');
  assert.equal(await gpus.getAttribute('aria-invalid'), null);
  await call('PATCH', '/api/v2/policy/trainings', {meta: {name: 'pol-proj', scope: 'project', projectId: ids.pol},
    policy: {rules: {compute: {gpuDevicesRequest: {max: 1}}}}});
  await dlg.getByRole('button', {name: 'Submit'}).click();
  await dlg.locator('.notice.error').filter({hasText: /^The server refused the form: spec\.compute\.gpuDevicesRequest 2 breaks the rule max 1 of the project policy \(pol-proj\)/}).waitFor();
  await gpus.fill('1');
  await dlg.getByRole('button', {name: 'Submit'}).click();
  await dlg.waitFor({state: 'detached'});
  const w = await workload('pol-train');
  const spec = (await call('GET', `/api/v1/workloads/trainings/${w.id}`)).spec;
  assert.deepEqual([spec.compute.cpuCoreRequest, spec.compute.gpuDevicesRequest], [0.5, 1]);
  await call('DELETE', `/api/v1/workloads/${w.id}`, undefined, adminToken, 202);
});

test('an expired token goes back to login with a message', async () => {
  const p = await newPage('expiry');
  await login(p, 'admin', PASSWORD);
  await p.evaluate(() => {
    const s = JSON.parse(sessionStorage.getItem('allot.session'));
    s.exp = Math.floor(Date.now() / 1000) - 5;
    sessionStorage.setItem('allot.session', JSON.stringify(s));
  });
  await p.reload();
  await p.locator('#login-message').filter({hasText: 'Your session has expired'}).waitFor();
  assert.ok(await p.locator('#login').isVisible());
  await p.context().close();
});

test('a server that stops answering: its last figures greyed, under a banner that says since when', async () => {
  const p = await newPage('stale');
  await login(p, 'admin', PASSWORD);
  await go(p, '#/overview');
  await p.locator('#ov-pools-table').waitFor();
  await p.route('**/api/**', (r) => r.abort('connectionrefused'));
  const banner = p.locator('#stale');
  await banner.filter({hasText: /The server has not answered since \d/}).waitFor({timeout: 20000 * SCALE});
  assert.match(await banner.innerText(), new RegExp(`trying again every ${REFRESH_S} s\\.`));
  const last = await p.locator('#updated').innerText();
  assert.match(await banner.innerText(), new RegExp(`since ${last.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+s ago\\)`));
  assert.ok(await p.locator('main').evaluate((e) => e.classList.contains('stale') &&
    getComputedStyle(e).filter.includes('grayscale')), 'the figures are greyed');
  assert.ok(await p.locator('#ov-pools-table').isVisible(), 'the last figures stay');
  await shot(p, 'server-not-answering-desktop-light', false);
  await p.unroute('**/api/**');
  await banner.waitFor({state: 'hidden', timeout: 20000 * SCALE});
  assert.equal(await p.locator('main.stale').count(), 0);
  assert.notEqual(await p.locator('#updated').innerText(), last);
  await p.context().close();
});

test('the session: renewed silently while the tab is in use, else a warning before it ends', async () => {
  const p = await newPage('session');
  await login(p, 'admin', PASSWORD);
  const stored = () => p.evaluate(() => JSON.parse(sessionStorage.getItem('allot.session')));
  const setStored = (change) => p.evaluate((c) => {
    const s = JSON.parse(sessionStorage.getItem('allot.session'));
    s.exp = Math.floor(Date.now() / 1000) + c.left;
    sessionStorage.setItem('allot.session', JSON.stringify(s));
    if (c.idle) sessionStorage.setItem('allot.active', String(Date.now() - c.idle * 1000));
  }, change);
  const s0 = await stored();
  assert.ok(s0.refresh && s0.ttl === 3600, 'the refresh token and the lifetime are kept');
  // 100 s left while the tab is in use (the login was just typed): renewed, no warning
  await setStored({left: 100});
  await p.reload();
  await p.locator('#who-name').filter({hasText: 'admin'}).waitFor();
  await until(15, async () => (await stored()).refresh !== s0.refresh, 'the session to be renewed');
  const s1 = await stored();
  assert.ok(s1.exp * 1000 > Date.now() + 3000e3, `renewed for the token's lifetime: ${s1.exp}`);
  assert.equal(await p.locator('#session-warn').isVisible(), false);
  await refreshes(p, 1); // the pages go on with the new token
  // 90 s left and no key or click for 20 minutes: a warning with a way to stay
  await setStored({left: 90, idle: 1200});
  await p.reload();
  const warn = p.locator('#session-warn');
  await warn.filter({hasText: /Your session ends at .+ \(in 1m \d+s\)\. Stay logged in/}).waitFor({timeout: 15000 * SCALE});
  assert.equal((await stored()).refresh, s1.refresh, 'an idle tab is not renewed behind its user\'s back');
  await shot(p, 'session-warning-desktop-light', false);
  await p.getByRole('button', {name: 'Stay logged in'}).click();
  await warn.waitFor({state: 'hidden'});
  await p.locator('#flash').filter({hasText: 'Your session was renewed.'}).waitFor();
  assert.ok((await stored()).exp * 1000 > Date.now() + 3000e3);
  await p.context().close();
});

test('bulk delete: the rows ticked, or every workload matching the filters, after a question that says how many', async () => {
  const gone = async (n) => { const w = await workload(n); return !w || w.phase === 'Deleting'; };
  await go(page, '#/workloads?project=team-c');
  await page.locator('#workloads-table tr[data-key="c0"] input.pick').check();
  await page.locator('#workloads-table tr[data-key="c1"] input.pick').check();
  await page.locator('#wl-selected').filter({hasText: '2 selected'}).waitFor();
  await refreshes(page, 1);
  assert.equal(await page.locator('#workloads-table tr[data-key="c0"] input.pick').isChecked(), true,
    'the ticks survive a refresh');
  await page.locator('#wl-delete-selected').click();
  const q = page.getByRole('dialog');
  await q.filter({hasText: 'Delete the 2 selected workloads?'}).waitFor();
  await shot(page, 'bulk-delete-selected-desktop-light', false);
  await q.getByRole('button', {name: 'Delete 2 workloads'}).click();
  await page.locator('#flash').filter({hasText: 'Deleted 2 workloads.'}).waitFor();
  await until(10, async () => (await gone('c0')) && (await gone('c1')), 'c0 and c1 to go');
  assert.equal(await gone('c2'), false, 'only the ticked ones');
  // every match of the filters, over all pages: c2, c20..c29
  await page.locator('#wl-search').fill('c2');
  await page.waitForURL(/[?&]q=c2(&|$)/);
  await page.locator('#wl-delete-matching').filter({hasText: 'Delete all 11 matching'}).waitFor();
  await page.locator('#wl-size').selectOption('25');
  await page.locator('#wl-delete-matching').click();
  await q.filter({hasText: 'Delete all 11 workloads with project team-c, a name containing "c2"?'}).waitFor();
  await shot(page, 'bulk-delete-matching-desktop-light', false);
  await q.getByRole('button', {name: 'Delete 11 workloads'}).click();
  await page.locator('#flash').filter({hasText: 'Deleted 11 workloads.'}).waitFor();
  await until(10, async () => (await gone('c2')) && (await gone('c29')), 'c2 and c29 to go');
  assert.equal(await gone('c3'), false, 'only the matching ones');
  await page.locator('#wl-search').fill('');
  await page.waitForURL((u) => !/[?&]q=/.test(u.hash));
});

test('1,440 px: tables fit, a column chooser that persists, a sticky name column', async () => {
  await go(page, '#/workloads');
  await page.locator('#workloads-table').waitFor();
  for (const [hash, table] of [['#/workloads', 'workloads-table'], ['#/projects', 'projects-table'],
    ['#/nodes', 'nodes-table'], ['#/overview', 'ov-pools-table']]) {
    await go(page, hash);
    await page.locator(`#${table}`).waitFor();
    const w = await widths(page);
    assert.ok(w.page <= w.view, `${hash}: the page is ${w.page} px wide`);
    assert.ok(w.wraps.every((x) => x <= 1), `${hash}: a table scrolls sideways by ${w.wraps}`);
  }
  await go(page, '#/workloads');
  assert.equal(await page.locator('#workloads-table thead th.sticky').evaluate((e) => getComputedStyle(e).position), 'sticky');
  // a skip link: the first Tab shows it, Enter moves focus to the page
  await page.reload(); // focus starts at the top of the document
  await page.locator('#workloads-table').waitFor();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'skip-link');
  assert.ok((await page.locator('#skip-link').boundingBox()).y >= 0, 'the skip link shows when focused');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'main');
  assert.match(page.url(), /#\/workloads/);
  await page.locator('#wl-columns summary').click();
  await page.locator('#wl-columns input[name=col-type]').uncheck();
  await until(10, async () => !(await page.locator('#workloads-table thead th').allInnerTexts()).includes('Type'),
    'the Type column to go');
  await page.reload();
  await page.locator('#workloads-table').waitFor();
  assert.equal((await page.locator('#workloads-table thead th').allInnerTexts()).includes('Type'), false,
    'the choice of columns survives a reload');
  await page.locator('#wl-columns summary').click();
  await page.locator('#wl-columns input[name=col-type]').check();
  await until(10, async () => (await page.locator('#workloads-table thead th').allInnerTexts()).includes('Type'),
    'the Type column back');
  await page.locator('#wl-columns summary').click();
});

test('a 390 px phone: nothing wider than the screen, rows as cards, the detail a full-screen sheet', async () => {
  const p = await newPage('phone', {viewport: PHONE});
  await login(p, 'admin', PASSWORD);
  for (const hash of ['#/overview', '#/projects', '#/workloads', '#/nodes', '#/access', '#/evictions']) {
    await go(p, hash);
    const w = await widths(p);
    assert.ok(w.page <= PHONE.width, `${hash}: the page is ${w.page} px wide on a phone`);
  }
  await go(p, '#/workloads');
  const row = p.locator('#workloads-table tr[data-key="a1"]');
  assert.equal(await row.evaluate((e) => getComputedStyle(e).display), 'grid', 'a row is a card');
  assert.equal(await p.locator('#workloads-table thead').evaluate((e) => e.getBoundingClientRect().height <= 1), true);
  assert.match(await row.locator('td[data-col="project"]').evaluate((e) => getComputedStyle(e, '::before').content), /Project/);
  await p.getByRole('link', {name: 'Show details of a1'}).click();
  const sheet = p.locator('#wl-detail');
  await p.locator('#wl-detail-name').filter({hasText: 'a1'}).waitFor();
  const box = await sheet.boundingBox();
  assert.deepEqual([box.x, box.y, Math.round(box.width), Math.round(box.height)], [0, 0, PHONE.width, PHONE.height],
    'the detail covers the screen');
  await p.getByRole('button', {name: 'Close the details'}).click();
  await sheet.waitFor({state: 'hidden'});
  await p.context().close();
});

test('the dark theme follows prefers-color-scheme', async () => {
  const p = await newPage('dark', {colorScheme: 'dark'});
  await login(p, 'admin', PASSWORD);
  const lum = (rgb) => {
    const [r, g, b] = rgb.match(/\d+/g).map(Number);
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  };
  const bg = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const ink = await p.evaluate(() => getComputedStyle(document.body).color);
  assert.ok(lum(bg) < 0.15 && lum(ink) > 0.7, `dark: background ${bg}, text ${ink}`);
  await p.context().close();
});

test('screenshots of every page: light and dark, desktop and phone', async () => {
  const talker = await workload('talker');
  // the four at once, each in a context of its own: their waits for the
  // pages' refreshes overlap
  const variants = [];
  for (const [device, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    for (const scheme of ['light', 'dark']) variants.push({device, viewport, scheme});
  }
  await Promise.all(variants.map(async ({device, viewport, scheme}) => {
    const p = await newPage(`shots-${device}-${scheme}`, {viewport, colorScheme: scheme});
    await login(p, 'admin', PASSWORD);
    for (const pg of ['overview', 'projects', 'workloads', 'nodes', 'access', 'evictions', 'analytics', 'policies',
      'users']) {
      await go(p, `#/${pg}`);
      if (pg === 'overview') await allocationChart(p, () => true);
      await shot(p, `${pg}-${device}-${scheme}`);
    }
    await go(p, `#/workloads?id=${talker.id}`);
    await p.locator('#wl-logs').waitFor();
    await shot(p, `workload-detail-${device}-${scheme}`, false);
    await p.getByRole('button', {name: 'Close the details'}).click(); // a phone's sheet covers the page
    await p.locator('#wl-detail').waitFor({state: 'hidden'});
    await p.locator('#submit-workload').click();
    await p.locator('#submit-dialog').waitFor();
    await shot(p, `submit-form-${device}-${scheme}`, false);
    await p.context().close();
  }));
  const files = fs.readdirSync(SHOTS);
  for (const pg of ['overview', 'projects', 'workloads', 'nodes', 'access', 'evictions', 'analytics', 'policies',
    'users', 'workload-detail', 'submit-form']) {
    for (const v of ['desktop-light', 'desktop-dark', 'phone-light', 'phone-dark']) {
      assert.ok(files.includes(`${pg}-${v}.png`), `no screenshot ${pg}-${v}`);
    }
  }
  // the talker ends before its agent stops
  await call('DELETE', `/api/v1/workloads/${talker.id}`, undefined, adminToken, 202);
});

test('10,000 workloads: server-side pages, sorting and filtering, and the overview\'s counts', {timeout: 240000 * SCALE}, async () => {
  const submitS = await bulkDone;
  const all = BULK_N.toLocaleString('en-US');
  const p = await newPage('bulk');
  await login(p, 'admin', PASSWORD, BULK_URL);
  await go(p, '#/workloads');
  await p.locator('#wl-range').filter({hasText: `of ${all} `}).waitFor();
  const t1 = Date.now();
  await p.getByRole('button', {name: 'Next ›'}).click();
  await p.locator('#wl-range').filter({hasText: `51–100 of ${all} `}).waitFor();
  const pageMs = Date.now() - t1;
  assert.match(p.url(), /page=2/);
  const t2 = Date.now();
  await p.getByRole('button', {name: 'Workload', exact: true}).click(); // sort by name
  await p.locator('#workloads-table tbody tr').first().filter({hasText: 'bulk-0-0'}).waitFor();
  const sortMs = Date.now() - t2;
  const t3 = Date.now();
  await p.locator('#wl-phase').selectOption('Pending');
  // as a reader does: the filtered page shows, then a name is typed
  await p.waitForURL(/phase=Pending/);
  await p.locator('main:not([aria-busy])').waitFor();
  const found = bulkNames(BULK_N).filter((n) => n.includes('bulk-0-12')).sort(); // bulk-0-12, bulk-0-120..129
  await p.locator('#wl-search').fill('bulk-0-12');
  const range = new RegExp(`^1–${found.length} of ${found.length} `);
  await until(30, async () => range.test(await p.locator('#wl-range').innerText()),
    'the filtered range').catch(async (e) => {
    await shot(p, 'workloads-10000-filter-failed');
    throw new Error(`${e.message}: ${await p.locator('#wl-range').innerText()} at ${p.url()}`);
  });
  const filterMs = Date.now() - t3;
  await shot(p, 'workloads-10000-desktop-light');
  const names = await p.locator('#workloads-table tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.key));
  assert.deepEqual(names, found);
  // the overview counts them on the server
  const t4 = Date.now();
  await go(p, '#/overview');
  await expectCell(p, 'ov-types-table', 'Training', 'Pending', all);
  await p.locator('#card-pending .card-value').filter({hasText: all}).waitFor(); // cards and tables alike
  const overviewMs = Date.now() - t4;
  await p.locator('#ov-pending-text').filter({hasText: `${all} pending`}).waitFor();
  await expectCell(p, 'ov-pools-table', 'a100', 'Ready GPUs', '4/4');
  await shot(p, 'overview-10000-desktop-light');
  // a project over quota in one pool only: "over quota" is per pool
  const tokB = await token('admin', PASSWORD, BULK_URL);
  const a100 = (await call('GET', '/api/v1/node-pools', undefined, tokB, undefined, BULK_URL)).nodepools
    .find((x) => x.name === 'a100');
  const mix = await call('POST', '/api/v1/org-unit/projects', {name: 'mix', resources: [
    {nodePool: {id: '1', name: 'default'}, gpu: {deserved: 4}},
    {nodePool: {id: a100.id, name: 'a100'}, gpu: {deserved: 1}}]}, tokB, 201, BULK_URL);
  await call('POST', '/api/v1/workloads/trainings', {name: 'mix-1', projectId: mix.id,
    spec: {image: 'x', nodePools: ['a100'], compute: {gpuDevicesRequest: 3}}}, tokB, 202, BULK_URL);
  await go(p, '#/projects');
  await expectCell(p, 'projects-table', 'mix', 'Over quota', 'Yes (a100)');
  await expectCell(p, 'projects-table', 'mix', 'Allocated', '3');
  await expectCell(p, 'projects-table', 'mix', 'GPU quota', '5'); // 3 of 5 in all: not over on totals
  await p.locator('#pj-pool').selectOption('default');
  await expectCell(p, 'projects-table', 'mix', 'Over quota', 'No');
  await expectCell(p, 'projects-table', 'mix', 'GPU quota', '4');
  await p.locator('#pj-pool').selectOption('a100');
  await expectCell(p, 'projects-table', 'mix', 'Over quota', 'Yes');
  assert.match(p.url(), /pool=a100/);
  await shot(p, 'projects-per-pool-desktop-light');
  // a project of 10,000 workloads emptied from the page: every match of the filter
  await go(p, '#/workloads?project=bulk');
  await p.locator('#wl-delete-matching').filter({hasText: `Delete all ${all} matching`}).waitFor();
  await p.locator('#wl-delete-matching').click();
  const q = p.getByRole('dialog');
  await q.filter({hasText: `Delete all ${all} workloads with project bulk?`}).waitFor();
  const t5 = Date.now();
  await q.getByRole('button', {name: `Delete ${all} workloads`}).click();
  await p.locator('#flash').filter({hasText: `Deleted ${all} workloads.`}).waitFor({timeout: 120000 * SCALE});
  const deleteMs = Date.now() - t5;
  const left = await call('GET', '/api/v1/workloads/count?filterBy=projectName==bulk,phase!=Deleting', undefined, tokB,
    undefined, BULK_URL);
  assert.equal(Number(left.count), 0, 'the project is empty');
  await shot(p, 'workloads-bulk-emptied-desktop-light');
  // figures only: the targets are bench/'s, and this also runs under the sanitizers
  timings.push(`submitted ${all} in ${submitS.toFixed(1)} s; next page ${pageMs} ms; sort ${sortMs} ms; ` +
    `filter ${filterMs} ms; overview with ${all} ${overviewMs} ms; deleted ${all} from the page in ${deleteMs} ms`);
  await p.context().close();
});

test('no Content-Security-Policy violation or page error', () => {
  assert.deepEqual(problems, []);
});
