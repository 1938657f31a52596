// charts.js: the dashboard's charts, on Chart.js (web/vendor/chart.umd.min.js,
// loaded before the modules as the global Chart). Each helper creates its
// chart once per canvas and afterwards replaces the data in place, without
// animation, so a refresh every few seconds does not flicker. Text and grid
// colours follow the page's theme (light or dark, from the CSS variables).

export const COLORS = {
  quota: '#94a3b8',
  allocated: '#2563eb',
  fair: '#f59e0b',
  total: '#0f766e',
  series: ['#2563eb', '#db2777', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#65a30d', '#4b5563'],
};

const charts = new WeakMap();

function lib() {
  if (!window.Chart) throw new Error('Chart.js did not load (/vendor/chart.umd.min.js)');
  return window.Chart;
}

// The theme's ink and line colours, read from the CSS variables.
function theme() {
  const css = getComputedStyle(document.documentElement);
  return {ink: css.getPropertyValue('--muted').trim() || '#616e7c',
    line: css.getPropertyValue('--line').trim() || '#d9e0e7'};
}

function upsert(canvas, config) {
  const old = charts.get(canvas);
  if (old && old.config.type === config.type) {
    old.data.labels = config.data.labels;
    old.data.datasets = config.data.datasets;
    old.options = config.options;
    old.update('none');
    return old;
  }
  if (old) old.destroy();
  const Chart = lib();
  const c = new Chart(canvas, config);
  charts.set(canvas, c);
  return c;
}

export function destroyChart(canvas) {
  const c = charts.get(canvas);
  if (c) c.destroy();
  charts.delete(canvas);
}

function base() {
  const t = theme();
  return {
    responsive: true,
    maintainAspectRatio: false,
    animation: false,
    color: t.ink,
    plugins: {legend: {position: 'bottom', labels: {boxWidth: 12, color: t.ink}}},
  };
}

function axes(yTitle, extraX) {
  const t = theme();
  return {
    y: {beginAtZero: true, title: {display: !!yTitle, text: yTitle, color: t.ink},
      ticks: {precision: 0, color: t.ink}, grid: {color: t.line}},
    x: {ticks: {color: t.ink, ...(extraX || {})}, grid: {color: t.line}},
  };
}

// Grouped bars: one group per label, one bar per series {label, data, color}.
export function barChart(canvas, labels, series, yTitle, opts = {}) {
  return upsert(canvas, {
    type: 'bar',
    data: {
      labels,
      datasets: series.map((s) => ({label: s.label, data: s.data, backgroundColor: s.color,
        borderColor: s.color, borderWidth: 1, maxBarThickness: 36, stack: s.stack})),
    },
    options: {...base(), indexAxis: opts.horizontal ? 'y' : 'x',
      scales: opts.stacked ? {...axes(yTitle), x: {...axes(yTitle).x, stacked: true},
        y: {...axes(yTitle).y, stacked: true}} : opts.log ? logAxes(yTitle) : axes(yTitle)},
  });
}

// A logarithmic y axis (1, 10, 100, ...), so a bar of 3 shows beside one
// of 10,000; zero values should be given as null.
function logAxes(yTitle) {
  const a = axes(yTitle);
  return {...a, y: {...a.y, type: 'logarithmic', beginAtZero: false, min: 0.8,
    ticks: {color: a.y.ticks.color, callback: (v) => ([1, 10, 100, 1000, 10000, 100000, 1000000].includes(v)
      ? Number(v).toLocaleString('en-US') : '')}}};
}

// Lines over shared x labels: series {label, data, color, dashed, fill,
// thin}. Null values are gaps.
export function lineChart(canvas, labels, series, yTitle) {
  return upsert(canvas, {
    type: 'line',
    data: {
      labels,
      datasets: series.map((s) => ({label: s.label, data: s.data, borderColor: s.color,
        backgroundColor: `${s.color}22`, fill: !!s.fill, borderDash: s.dashed ? [6, 4] : [],
        pointRadius: labels.length < 40 ? 2 : 0, borderWidth: s.thin ? 1 : 2, spanGaps: false,
        stepped: false})),
    },
    options: {...base(), interaction: {mode: 'index', intersect: false},
      scales: axes(yTitle, {maxTicksLimit: 12, autoSkip: true, maxRotation: 0})},
  });
}
