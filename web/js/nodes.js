// nodes.js: the Nodes page: node pools (label, placement, minimum
// guaranteed runtime, time-based fairshare, nodes ready, GPUs allocated and
// free) and nodes (status, GPU type, used and free GPUs drawn per device
// from the pods' own device indices, utilisation where an agent measures
// it), filterable by pool and name (#/nodes?pool=&q=). In a pool that
// names a network topology, nodes are grouped by domain: a Domain column
// (the node's value at each level but the host, widest first) orders them.
// System administrators create, edit and delete node pools here.

import {api, get} from './api.js';
import {h, fill, fillIn, gpu, meter, badge, notice, formDialog, confirmDialog} from './dom.js';

const MAX_ROWS = 500;
let el = {};
const filt = {pool: '', q: ''};
let agentNodes = new Map(); // node name -> agent's view (devices with figures)
let poolLevels = new Map(); // pool name -> its network topology's levels (none: absent)

// The node's domain in its pool's topology: its values at every level but
// the host, widest first ('' when its pool has no topology).
export function domainOf(n, levels) {
  if (!levels || !levels.length) return '';
  return levels.filter((l) => l !== 'kubernetes.io/hostname')
    .map((l) => (n.labels && n.labels[l]) || '?').join(' / ');
}

function applyParams(params) {
  filt.pool = params.get('pool') || '';
  filt.q = params.get('q') || '';
  if (el.name && document.activeElement !== el.name) el.name.value = filt.q;
}

export default {
  id: 'nodes',
  title: 'Nodes',
  applyParams,

  mount(root, ctx, params) {
    applyParams(params);
    el.pools = h('div', {class: 'table-wrap'});
    el.nodes = h('div', {class: 'table-wrap'});
    el.poolSel = h('select', {id: 'nd-pool', onchange: (e) => { ctx.setParams({pool: e.target.value}); }},
      h('option', {value: ''}, 'All'));
    el.name = h('input', {id: 'nd-name', type: 'search', value: filt.q, autocomplete: 'off',
      placeholder: 'part of a name'});
    el.name.oninput = () => {
      filt.q = el.name.value.trim();
      ctx.setParams({q: filt.q}, {push: false});
    };
    fill(root,
      h('div', {class: 'page-head'}, h('h1', {}, 'Nodes and node pools'),
        ctx.can.nodeWrite ? h('button', {type: 'button', class: 'primary', id: 'new-pool',
          onclick: () => editPool(ctx, null)}, 'New node pool') : null),
      h('section', {class: 'panel', 'aria-labelledby': 'np-h'},
        h('h2', {id: 'np-h'}, 'Node pools'), el.pools),
      h('section', {class: 'panel', 'aria-labelledby': 'nd-h'},
        h('h2', {id: 'nd-h'}, 'Nodes'),
        h('form', {class: 'filters', role: 'search', 'aria-label': 'Filter nodes',
          onsubmit: (e) => e.preventDefault()},
        h('span', {class: 'filter'}, h('label', {for: 'nd-pool'}, 'Node pool'), el.poolSel),
        h('span', {class: 'filter'}, h('label', {for: 'nd-name'}, 'Name'), el.name)),
        el.nodes));
  },

  unmount() {
    el = {};
  },

  async refresh(ctx, signal) {
    const [pl, nd, ag, tp] = await Promise.all([
      get('/api/v1/node-pools', {signal}),
      get('/api/v1/nodes', {signal}),
      get('/api/v1/agent/nodes', {signal}).catch((e) => {
        if (e.name === 'AbortError') throw e;
        return {nodes: []};
      }),
      get('/api/v1/network-topologies', {signal}).catch((e) => {
        if (e.name === 'AbortError') throw e;
        return {networkTopologies: []};
      }),
    ]);
    const levelsOf = new Map((tp.networkTopologies || []).map((t) => [t.id, t.levels || []]));
    poolLevels = new Map((pl.nodepools || []).filter((p) => p.networkTopologyId)
      .map((p) => [p.name, levelsOf.get(p.networkTopologyId) || []]));
    const pools = (pl.nodepools || []).slice().sort((a, b) => a.name.localeCompare(b.name));
    const nodes = nd.nodes || [];
    agentNodes = new Map((ag.nodes || []).map((n) => [n.name || n.nodeName, n]));
    renderPools(ctx, pools, nodes);
    const names = pools.map((p) => p.name);
    if (el.poolSel.dataset.list !== names.join('\n') || el.poolSel.value !== filt.pool) {
      el.poolSel.dataset.list = names.join('\n');
      fill(el.poolSel, h('option', {value: ''}, 'All'),
        names.map((n) => h('option', {value: n, selected: n === filt.pool}, n)));
      el.poolSel.value = filt.pool;
    }
    renderNodes(nodes);
  },
};

function tbfText(sc) {
  const t = sc && sc.timeBasedFairshare;
  if (!t || !t.enabled) return 'off';
  const days = Number(t.windowSeconds || 0) / 86400;
  return `on, ${days >= 1 ? `${+days.toFixed(1)} d` : `${Math.round(Number(t.windowSeconds) / 3600)} h`} window, k ${t.kValue}`;
}

function renderPools(ctx, pools, nodes) {
  if (!pools.length) {
    fillIn(el.pools, notice('empty', 'No node pools.'));
    return;
  }
  const cols = ['Node pool', 'Label', 'GPU / CPU placement', 'Minimum runtime', 'Time-based fairshare',
    'Nodes', 'GPUs', 'Allocated', 'Free', 'Usage'];
  fillIn(el.pools, h('table', {class: 'data cards-on-phone', id: 'pools-table', 'aria-label': 'Node pools'},
    h('thead', {}, h('tr', {}, cols.map((c, i) =>
      h('th', {scope: 'col', class: i === 0 ? 'sticky' : i >= 5 && i <= 8 ? 'num' : null}, c)),
    ctx.can.nodeWrite ? h('th', {scope: 'col'}, h('span', {class: 'sr-only'}, 'Actions')) : null)),
    h('tbody', {}, pools.map((p) => {
      const mine = nodes.filter((n) => n.nodePool === p.name);
      const ready = mine.filter((n) => n.status === 'Ready').length;
      const total = Number(p.gpus || 0);
      const alloc = Number(p.allocatedGpus || 0);
      const sc = p.schedulingConfiguration || {};
      const ps = p.placementStrategy || sc.placementStrategy || {};
      const td = (i, v, cls) => h('td', {class: cls || null, dataset: {label: cols[i]}}, v);
      return h('tr', {dataset: {key: p.name}},
        h('th', {scope: 'row', class: 'sticky', dataset: {label: cols[0]}}, p.name),
        td(1, h('code', {}, `${p.labelKey}=${p.labelValue}`)),
        td(2, `${ps.gpu || 'fragmentation'} / ${ps.cpu || '-'}`),
        td(3, sc.minGuaranteedRuntime || 'none'),
        td(4, tbfText(sc)),
        td(5, [`${ready}/${mine.length} ready`, p.phase && p.phase !== 'Ready'
          ? [' ', badge(p.phase), p.phaseMessage ? h('small', {class: 'reason'}, p.phaseMessage) : null] : null], 'num'),
        td(6, gpu(total), 'num'),
        td(7, gpu(alloc), 'num'),
        td(8, gpu(Math.max(0, total - alloc)), 'num'),
        td(9, meter(alloc, total, total ? `${Math.round((100 * alloc) / total)}%` : '-')),
        ctx.can.nodeWrite ? h('td', {class: 'row-actions', dataset: {label: ''}},
          h('button', {type: 'button', class: 'small', 'aria-label': `Edit node pool ${p.name}`,
            onclick: () => editPool(ctx, p)}, 'Edit'),
          p.isDefault || p.name === 'default' ? null : h('button', {type: 'button', class: 'small danger',
            'aria-label': `Delete node pool ${p.name}`, onclick: () => deletePool(ctx, p, mine.length)}, 'Delete'))
          : null);
    }))));
}

// Per-device slots from the node's gpuDevices (what the pods placed on each
// device hold there); a node that does not list them shows its totals only.
function devices(n) {
  const count = Number((n.gpuInfo && n.gpuInfo.gpuCount) || 0);
  const list = Array.isArray(n.gpuDevices) ? n.gpuDevices : null;
  const label = `${gpu(n.allocatedGpus)} of ${count} GPUs allocated`;
  if (!list) return h('span', {class: 'muted'}, label);
  const agent = agentNodes.get(n.name);
  const measured = new Map(((agent && agent.gpus) || []).map((g) => [Number(g.index), g]));
  return h('span', {class: 'devices', role: 'img', 'aria-label': label, dataset: {devices: list.map((d) =>
    Number(d.allocated || 0).toFixed(2)).join(',')}},
  list.map((d) => {
    const u = Math.min(1, Math.max(0, Number(d.allocated || 0)));
    const fillEl = h('span', {class: 'dev-fill'});
    fillEl.style.height = `${Math.round(u * 100)}%`;
    const m = measured.get(Number(d.index));
    const util = m && m.utilization !== undefined && m.utilization !== null && m.utilization >= 0
      ? `, ${Math.round(m.utilization)}% busy` : '';
    return h('span', {class: `dev${u > 0 ? ' used' : ''}`, dataset: {index: String(d.index)},
      title: `GPU ${d.index}: ${Math.round(u * 100)}% allocated to ${d.pods || 0} pod${d.pods === 1 ? '' : 's'}${util}`},
    fillEl);
  }));
}

function utilisation(n) {
  const agent = agentNodes.get(n.name);
  const g = ((agent && agent.gpus) || []).map((x) => x.utilization).filter((v) => v !== null && v !== undefined && v >= 0);
  const v = g.length ? g.reduce((s, x) => s + Number(x), 0) / g.length
    : n.gpuUtilization ?? n.utilization ?? (n.gpuInfo && n.gpuInfo.utilization);
  if (v === undefined || v === null) {
    return h('span', {class: 'muted', title: n.simulated ? 'simulated node' : 'not reported'},
      n.simulated ? 'n/a (simulated)' : 'not reported');
  }
  return `${Math.round(Number(v))}%`;
}

function renderNodes(nodes) {
  const shown = nodes.filter((n) => (!filt.pool || n.nodePool === filt.pool) &&
    (!filt.q || n.name.includes(filt.q)));
  const domain = new Map(shown.map((n) => [n.name, domainOf(n, poolLevels.get(n.nodePool))]));
  const grouped = [...domain.values()].some(Boolean);
  if (grouped) {
    shown.sort((a, b) => (a.nodePool || '').localeCompare(b.nodePool || '') ||
      domain.get(a.name).localeCompare(domain.get(b.name)) || a.name.localeCompare(b.name));
  }
  if (!shown.length) {
    fillIn(el.nodes, notice('empty', nodes.length ? 'No nodes match these filters.' : 'No nodes.'));
    return;
  }
  const cols = ['Node', 'Node pool', 'Status', 'GPU type', 'GPUs', 'Used', 'Free', 'Devices', 'GPU utilisation',
    ...(grouped ? ['Domain'] : [])];
  fillIn(el.nodes,
    shown.length > MAX_ROWS ? notice('info', `Showing ${MAX_ROWS} of ${shown.length} nodes; filter to see the others.`) : null,
    h('table', {class: 'data cards-on-phone', id: 'nodes-table', 'aria-label': 'Nodes'},
      h('thead', {}, h('tr', {}, cols.map((c, i) =>
        h('th', {scope: 'col', class: i === 0 ? 'sticky' : i >= 4 && i <= 6 ? 'num' : null}, c)))),
      h('tbody', {}, shown.slice(0, MAX_ROWS).map((n) => {
        const td = (i, v, cls) => h('td', {class: cls || null, dataset: {label: cols[i]}}, v);
        return h('tr', {dataset: {key: n.name}},
          h('th', {scope: 'row', class: 'sticky', dataset: {label: cols[0]}}, n.name),
          td(1, n.nodePool || '-'),
          td(2, badge(n.status || 'Unknown')),
          td(3, (n.gpuInfo && n.gpuInfo.gpuType) || '-'),
          td(4, String((n.gpuInfo && n.gpuInfo.gpuCount) ?? '-'), 'num'),
          td(5, gpu(n.allocatedGpus), 'num'),
          td(6, gpu(n.freeGpus), 'num'),
          td(7, devices(n)),
          td(8, utilisation(n)),
          grouped ? td(9, domain.get(n.name) || '-') : null);
      }))));
}

// ---- node pools: create, edit, delete ----

function editPool(ctx, p) {
  const sc = (p && p.schedulingConfiguration) || {};
  const ps = (p && (p.placementStrategy || sc.placementStrategy)) || {gpu: 'fragmentation', cpu: 'spread'};
  const tbf = sc.timeBasedFairshare || {enabled: false, windowSeconds: 604800, halfLifeSeconds: 0, kValue: 1};
  const placement = [{value: 'fragmentation', label: 'fragmentation (strand the fewest GPUs)'},
    {value: 'binpack', label: 'binpack (fill nodes first)'}, {value: 'spread', label: 'spread'}];
  const fields = [];
  if (!p) fields.push({name: 'name', label: 'Name', required: true, placeholder: 'a100',
    hint: 'lowercase letters, digits and -'});
  fields.push(
    {name: 'labelKey', label: 'Node label key', required: true, value: p ? p.labelKey : 'node-type'},
    {name: 'labelValue', label: 'Node label value', required: true, value: p ? p.labelValue : '',
      hint: 'nodes carrying this label join the pool'},
    {name: 'gpuPlacement', label: 'GPU placement', type: 'select', value: ps.gpu || 'fragmentation', options: placement},
    {name: 'cpuPlacement', label: 'CPU placement', type: 'select', value: ps.cpu || 'spread', options: placement},
    {name: 'minRuntime', label: 'Minimum guaranteed runtime', value: sc.minGuaranteedRuntime || '',
      placeholder: 'none', hint: 'e.g. 30m, 2h, 1d12h: a preemptible workload is not evicted sooner'},
    {type: 'heading', label: 'Time-based fairshare'},
    {name: 'tbfEnabled', label: 'On', type: 'checkbox', value: !!tbf.enabled},
    {name: 'tbfWindow', label: 'Window (hours)', type: 'number', min: 0.001, step: 'any',
      value: Number(tbf.windowSeconds || 604800) / 3600},
    {name: 'tbfHalfLife', label: 'Half-life (hours)', type: 'number', min: 0, step: 'any',
      value: Number(tbf.halfLifeSeconds || 0) / 3600, hint: '0: no decay'},
    {name: 'tbfK', label: 'k (how much past usage counts)', type: 'number', min: 0, step: 'any',
      value: tbf.kValue ?? 1});
  const dlg = formDialog({
    title: p ? `Edit node pool ${p.name}` : 'New node pool',
    submitLabel: p ? 'Save' : 'Create node pool',
    fields,
    onSubmit: async (v) => {
      const body = {labelKey: v.labelKey.trim(), labelValue: v.labelValue.trim(),
        placementStrategy: {gpu: v.gpuPlacement, cpu: v.cpuPlacement},
        schedulingConfiguration: {minGuaranteedRuntime: v.minRuntime.trim() || null,
          timeBasedFairshare: {enabled: !!v.tbfEnabled, windowSeconds: Math.round(Number(v.tbfWindow) * 3600),
            halfLifeSeconds: Math.round(Number(v.tbfHalfLife || 0) * 3600), kValue: Number(v.tbfK)}}};
      if (p) {
        await api('PATCH', `/api/v1/node-pools/${encodeURIComponent(p.id)}`, body);
        ctx.flash(`Saved node pool ${p.name}.`);
      } else {
        body.name = v.name.trim();
        body.clusterId = ctx.clusterId;
        await api('POST', '/api/v1/node-pools', body);
        ctx.flash(`Created node pool ${body.name}.`);
      }
      ctx.kick();
    },
  });
  dlg.id = 'pool-dialog';
}

async function deletePool(ctx, p, nodeCount) {
  if (!await confirmDialog(`Delete node pool ${p.name}?${nodeCount ? ` It still holds ${nodeCount} node${nodeCount === 1 ? '' : 's'}: ` +
    'the server refuses until they leave it.' : ''}`, 'Delete')) return;
  try {
    await api('DELETE', `/api/v1/node-pools/${encodeURIComponent(p.id)}`);
    ctx.flash(`Deleted node pool ${p.name}.`);
  } catch (e) {
    ctx.showError(e.status === 409 ? new Error(`Node pool ${p.name} cannot be deleted: ${e.details || e.message}.`) : e);
  }
  ctx.kick();
}

