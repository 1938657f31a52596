// policy.test.mjs: the dashboard's reading of workload policies
// (web/js/policy.js) against a real allotd --demo on a free loopback port:
// for each case a project policy is set, and policy.js's verdict on a value
// (breach: flagged in the Submit form before sending) must be the
// server's own on a dry-run submission with that value (a 400 naming the
// policy, or not); and the scope policy.js gives a default and a rule is
// where the server merged them from. No browser: policy.js runs in node,
// its requests going to the server with the admin's token.
//
// Environment: ALLOTD (the binary), ALLOT_WEB_ROOT (web/). Node 20 reads
// web/js as ES modules with --experimental-detect-module (CMakeLists.txt).

import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const PASSWORD = 'policy-test-password';
const SCALE = Number(process.env.ALLOT_TEST_SCALE || 1);
let base;
let server;
let exited;
let token;
let clusterId;
let pol;  // web/js/policy.js
const ids = {};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function call(method, p, body, want) {
  const res = await fetch(base + p, {method, headers: {Authorization: `Bearer ${token}`,
    'Content-Type': 'application/json'}, body: body === undefined ? undefined : JSON.stringify(body)});
  const text = await res.text();
  if (want !== undefined && res.status !== want) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return {status: res.status, data: text ? JSON.parse(text) : null};
}

before(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'allot-policy-'));
  const portFile = path.join(dir, 'port');
  server = spawn(process.env.ALLOTD, ['--demo', '--listen', '127.0.0.1:0', '--port-file', portFile,
    '--rate-limit', '0', '--web-root', process.env.ALLOT_WEB_ROOT],
  {cwd: dir, env: {...process.env, ALLOT_ADMIN_PASSWORD: PASSWORD}, stdio: ['ignore', 'ignore', 'inherit']});
  exited = new Promise((r) => server.once('exit', (code) => r(code)));
  const end = Date.now() + 20000 * SCALE;
  while (!(fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').trim())) {
    if (server.exitCode !== null || Date.now() > end) throw new Error('allotd did not start');
    await sleep(50);
  }
  base = `http://127.0.0.1:${fs.readFileSync(portFile, 'utf8').trim()}`;
  const res = await fetch(`${base}/api/v1/token`, {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({grantType: 'password', username: 'admin', password: PASSWORD})});
  token = (await res.json()).accessToken;
  // what api.js reads in a browser: the session in sessionStorage, and
  // fetch on the page's own origin
  const store = new Map([['allot.session', JSON.stringify({token, user: 'admin',
    exp: Math.floor(Date.now() / 1000) + 3600})]]);
  globalThis.sessionStorage = {getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v),
    removeItem: (k) => store.delete(k)};
  const realFetch = globalThis.fetch;
  globalThis.fetch = (p, o) => realFetch(p.startsWith('/') ? base + p : p, o);
  pol = await import(pathToFileURL(path.join(process.env.ALLOT_WEB_ROOT, 'js', 'policy.js')).href);
  clusterId = (await call('GET', '/api/v1/clusters', undefined, 200)).data[0].uuid;
  ids.dept = (await call('POST', '/api/v1/org-unit/departments', {name: 'rules', clusterId, resources: []})).data.id;
  ids.project = (await call('POST', '/api/v1/org-unit/projects', {name: 'ruled', clusterId, parentId: ids.dept,
    resources: [{nodePool: {id: '1', name: 'default'}, gpu: {deserved: 0, limit: -1}}]})).data.id;
  assert.ok(ids.dept && ids.project, 'a department and a project');
});

after(async () => {
  if (server && server.exitCode === null) server.kill('SIGTERM');
  assert.equal(await exited, 0, 'allotd stops cleanly');
});

const project = () => ({id: ids.project, name: 'ruled', parentId: ids.dept});

async function setProjectPolicy(policy) {
  await call('PUT', '/api/v2/policy/trainings', {meta: {name: 'ruled', scope: 'project', projectId: ids.project},
    policy}, 200);
}

// The server's verdict on a training whose spec has value at path: the
// 400's details when the policy refuses it, else ''.
async function serverSays(p, value) {
  const spec = {image: 'busybox', compute: {gpuDevicesRequest: 0}};
  if (value !== undefined) {
    const keys = p.split('.');
    const last = keys.pop();
    keys.reduce((o, k) => (o[k] = o[k] || {}), spec)[last] = value;
  }
  const r = await call('POST', '/api/v1/workloads/trainings?dryRun=true',
    {name: 'probe', projectId: ids.project, clusterId, spec});
  if (r.status === 200) return '';
  assert.equal(r.status, 400, JSON.stringify(r.data));
  assert.match(r.data.details, /breaks the rule/, 'refused by the policy, not for another reason');
  return r.data.details;
}

// [policy, path, values that keep it, values that break it]
const CASES = [
  [{rules: {compute: {gpuDevicesRequest: {max: 2}}}}, 'compute.gpuDevicesRequest', [0, 2], [3]],
  [{rules: {compute: {gpuDevicesRequest: {min: 1, step: 2}}}, defaults: {compute: {gpuDevicesRequest: 1}}},
    'compute.gpuDevicesRequest', [1, 3, 5], [2, 4]],
  [{rules: {compute: {cpuCoreRequest: {min: 0.5, max: 4, step: 0.5}}}}, 'compute.cpuCoreRequest',
    [undefined, 0.5, 1.5, 4], [0.25, 0.7, 4.5]],
  [{rules: {compute: {cpuMemoryRequest: {max: '1Gi'}}}}, 'compute.cpuMemoryRequest',
    ['1G', '1024Mi', '1Gi', '5e8'], ['1025Mi', '2G', '1.1Gi']],
  [{rules: {image: {options: [{value: 'busybox'}, {value: 'alpine'}]}}}, 'image', ['busybox', 'alpine'], ['ubuntu']],
  [{rules: {priorityClass: {canEdit: false}}, defaults: {priorityClass: 'train'}}, 'priorityClass',
    [undefined, 'train'], ['build']],
  [{rules: {workingDir: {required: true}}}, 'workingDir', ['/w'], [undefined]],
  [{rules: {nodePools: {options: [{value: 'default'}]}}}, 'nodePools', [['default']], [['default', 'other']]],
];

test('policy.js flags exactly the values the server refuses, rule by rule', async () => {
  for (const [policy, p, keep, breakIt] of CASES) {
    await setProjectPolicy(policy);
    const {rows} = await pol.projectPolicy(project(), 'rules', 'Training');
    const row = rows.find((r) => r.path === p);
    assert.ok(row, `a row for ${p}`);
    for (const v of [...keep, ...breakIt]) {
      const server = await serverSays(p, v);
      const mine = pol.breach(row, v);
      const what = `${p} = ${JSON.stringify(v)} under ${JSON.stringify(policy)}: server "${server}", policy.js "${mine}"`;
      assert.equal(mine !== '', breakIt.includes(v), what);
      assert.equal(server !== '', breakIt.includes(v), what);
    }
  }
});

test('a default\'s scope is the lowest policy that has it, a rule\'s the highest', async () => {
  await setProjectPolicy({defaults: {compute: {cpuCoreRequest: 1}}, rules: {compute: {gpuDevicesRequest: {max: 3}}}});
  await call('PUT', '/api/v2/policy/trainings', {meta: {name: 'rules', scope: 'department', departmentId: ids.dept},
    policy: {defaults: {compute: {cpuCoreRequest: 0.5, gpuDevicesRequest: 1}, image: 'busybox'}}}, 200);
  await call('PUT', '/api/v2/policy/trainings', {meta: {name: 'tenant', scope: 'tenant'},
    policy: {defaults: {image: 'alpine'}, rules: {compute: {gpuDevicesRequest: {max: 2}}}}}, 200);
  const {rows} = await pol.projectPolicy(project(), 'rules', 'Training');
  const by = Object.fromEntries(rows.map((r) => [r.path, r]));
  assert.deepEqual([by['compute.cpuCoreRequest'].def, by['compute.cpuCoreRequest'].defFrom], [1, 'project ruled']);
  assert.deepEqual([by['compute.gpuDevicesRequest'].def, by['compute.gpuDevicesRequest'].defFrom],
    [1, 'department rules']);
  assert.deepEqual([by.image.def, by.image.defFrom], ['busybox', 'department rules']);
  // the tenant's rule wins over the project's: a rule comes from the highest scope
  assert.deepEqual([by['compute.gpuDevicesRequest'].rule.max, by['compute.gpuDevicesRequest'].ruleFrom], [2, 'tenant']);
  assert.equal(pol.breach(by['compute.gpuDevicesRequest'], 3), '3 is over the max 2 set by tenant');
  // a distributed policy keeps its fields under "worker"
  await call('PUT', '/api/v2/policy/distributed', {meta: {name: 'ruled', scope: 'project', projectId: ids.project},
    policy: {defaults: {worker: {numWorkers: 2}}, rules: {worker: {numWorkers: {max: 4}}}}}, 200);
  const dist = (await pol.projectPolicy(project(), 'rules', 'Distributed')).rows.find((r) => r.path === 'numWorkers');
  assert.deepEqual([dist.def, dist.defFrom, dist.rule.max, dist.ruleFrom], [2, 'project ruled', 4, 'project ruled']);
  await call('DELETE', '/api/v2/policy/trainings?scope=tenant', undefined, 204);
});
