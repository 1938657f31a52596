// nodes.js: the Nodes page: node pools (labels, placement, GPUs allocated
// and free) and nodes (status, GPU type, used / free GPUs drawn per device,
// utilisation where the node reports it), filterable by pool and name.

import {get} from './api.js';
import {h, fill, gpu, meter, badge, notice} from './dom.js';

const MAX_ROWS = 500;
let el = {};
const filt = {pool: '', name: ''};

export default {
  id: 'nodes',
  title: 'Nodes',

  mount(root, ctx) {
    el.pools = h('div', {class: 'table-wrap'});
    el.nodes = h('div', {class: 'table-wrap'});
    el.poolSel = h('select', {id: 'nd-pool'}, h('option', {value: ''}, 'All'));
    el.poolSel.addEventListener('change', () => { filt.pool = el.poolSel.value; ctx.kick(); });
    const name = h('input', {id: 'nd-name', type: 'search', value: filt.name, autocomplete: 'off',
      placeholder: 'part of a name'});
    name.addEventListener('input', () => { filt.name = name.value.trim(); ctx.kick(); });
    fill(root,
      h('h1', {}, 'Nodes and node pools'),
      h('section', {class: 'panel', 'aria-labelledby': 'np-h'},
        h('h2', {id: 'np-h'}, 'Node pools'), el.pools),
      h('section', {class: 'panel', 'aria-labelledby': 'nd-h'},
        h('h2', {id: 'nd-h'}, 'Nodes'),
        h('form', {class: 'filters', role: 'search', 'aria-label': 'Filter nodes',
          onsubmit: (e) => e.preventDefault()},
        h('span', {class: 'filter'}, h('label', {for: 'nd-pool'}, 'Node pool'), el.poolSel),
        h('span', {class: 'filter'}, h('label', {for: 'nd-name'}, 'Name'), name)),
        el.nodes));
  },

  unmount() {
    el = {};
  },

  async refresh(ctx, signal) {
    const [pl, nd] = await Promise.all([
      get('/api/v1/node-pools', {signal}),
      get('/api/v1/nodes', {signal}),
    ]);
    const pools = pl.nodepools || [];
    const nodes = nd.nodes || [];
    renderPools(pools, nodes);
    const names = pools.map((p) => p.name);
    if ([...el.poolSel.options].slice(1).map((o) => o.value).join('\n') !== names.join('\n')) {
      fill(el.poolSel, h('option', {value: ''}, 'All'),
        names.map((n) => h('option', {value: n, selected: n === filt.pool}, n)));
    }
    renderNodes(nodes);
  },
};

function renderPools(pools, nodes) {
  if (!pools.length) {
    fill(el.pools, notice('empty', 'No node pools.'));
    return;
  }
  fill(el.pools, h('table', {class: 'data', id: 'pools-table', 'aria-label': 'Node pools'},
    h('thead', {}, h('tr', {}, ['Node pool', 'Label', 'GPU / CPU placement', 'Nodes', 'GPUs',
      'Allocated', 'Free', 'Phase', 'Usage'].map((c, i) =>
      h('th', {scope: 'col', class: i >= 3 && i <= 6 ? 'num' : null}, c)))),
    h('tbody', {}, pools.map((p) => {
      const mine = nodes.filter((n) => n.nodePool === p.name);
      const ready = mine.filter((n) => n.status === 'Ready').length;
      const total = Number(p.gpus || 0);
      const alloc = Number(p.allocatedGpus || 0);
      const ps = p.placementStrategy || {};
      return h('tr', {dataset: {key: p.name}},
        h('th', {scope: 'row'}, p.name),
        h('td', {}, h('code', {}, `${p.labelKey}=${p.labelValue}`)),
        h('td', {}, `${ps.gpu || '-'} / ${ps.cpu || '-'}`),
        h('td', {class: 'num'}, `${ready}/${mine.length} ready`),
        h('td', {class: 'num'}, gpu(total)),
        h('td', {class: 'num'}, gpu(alloc)),
        h('td', {class: 'num'}, gpu(Math.max(0, total - alloc))),
        h('td', {}, badge(p.phase || '-'), p.phaseMessage ? h('small', {class: 'reason'}, p.phaseMessage) : null),
        h('td', {}, meter(alloc, total, `${gpu(alloc)} of ${gpu(total)} allocated`)));
    }))));
}

// Per-device slots: the node's own device list when it reports one, else
// whole devices filled in order from the allocated count.
function devices(n) {
  const count = Number((n.gpuInfo && n.gpuInfo.gpuCount) || 0);
  const list = Array.isArray(n.gpuDevices) ? n.gpuDevices : Array.isArray(n.devices) ? n.devices : null;
  let used;
  if (list && list.length) {
    used = list.map((d) => Math.min(1, Math.max(0, Number(d.allocated ?? d.allocation ?? d.used ?? 0))));
  } else {
    let left = Number(n.allocatedGpus || 0);
    used = Array.from({length: count}, () => {
      const u = Math.min(1, left);
      left = Math.max(0, left - u);
      return u;
    });
  }
  const wrap = h('span', {class: 'devices', role: 'img',
    'aria-label': `${gpu(n.allocatedGpus)} of ${count} GPUs allocated`});
  used.forEach((u, i) => {
    const fillEl = h('span', {class: 'dev-fill'});
    fillEl.style.height = `${Math.round(u * 100)}%`;
    wrap.appendChild(h('span', {class: 'dev', title: `GPU ${i}: ${Math.round(u * 100)}% allocated`}, fillEl));
  });
  return wrap;
}

function utilisation(n) {
  const v = n.gpuUtilization ?? n.utilization ?? (n.gpuInfo && n.gpuInfo.utilization);
  if (v === undefined || v === null) {
    return h('span', {class: 'muted', title: n.simulated ? 'simulated node' : 'not reported'},
      n.simulated ? 'n/a (simulated)' : 'not reported');
  }
  return `${Math.round(Number(v))}%`;
}

function renderNodes(nodes) {
  const shown = nodes.filter((n) => (!filt.pool || n.nodePool === filt.pool) &&
    (!filt.name || n.name.includes(filt.name)));
  if (!shown.length) {
    fill(el.nodes, notice('empty', nodes.length ? 'No nodes match these filters.' : 'No nodes.'));
    return;
  }
  fill(el.nodes,
    shown.length > MAX_ROWS ? notice('info', `Showing ${MAX_ROWS} of ${shown.length} nodes; filter to see the others.`) : null,
    h('table', {class: 'data', id: 'nodes-table', 'aria-label': 'Nodes'},
      h('thead', {}, h('tr', {}, ['Node', 'Node pool', 'Status', 'GPU type', 'GPUs', 'Used', 'Free',
        'Devices', 'GPU utilisation'].map((c, i) =>
        h('th', {scope: 'col', class: i >= 4 && i <= 6 ? 'num' : null}, c)))),
      h('tbody', {}, shown.slice(0, MAX_ROWS).map((n) => h('tr', {dataset: {key: n.name}},
        h('th', {scope: 'row'}, n.name),
        h('td', {}, n.nodePool || '-'),
        h('td', {}, badge(n.status || 'Unknown')),
        h('td', {}, (n.gpuInfo && n.gpuInfo.gpuType) || '-'),
        h('td', {class: 'num'}, String((n.gpuInfo && n.gpuInfo.gpuCount) ?? '-')),
        h('td', {class: 'num'}, gpu(n.allocatedGpus)),
        h('td', {class: 'num'}, gpu(n.freeGpus)),
        h('td', {}, devices(n)),
        h('td', {}, utilisation(n)))))));
}
