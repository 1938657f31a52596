// charts.js: the dashboard's charts, on Chart.js (web/vendor/chart.umd.min.js,
// loaded before the modules as the global Chart). Each helper creates its
// chart once per canvas and afterwards replaces the data in place, without
// animation, so a refresh every few seconds does not flicker.

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

const BASE = {
  responsive: true,
  maintainAspectRatio: false,
  animation: false,
  plugins: {legend: {position: 'bottom', labels: {boxWidth: 12}}},
};

// Grouped bars: one group per label, one bar per series {label, data, color}.
export function barChart(canvas, labels, series, yTitle) {
  return upsert(canvas, {
    type: 'bar',
    data: {
      labels,
      datasets: series.map((s) => ({label: s.label, data: s.data, backgroundColor: s.color,
        borderColor: s.color, borderWidth: 1, maxBarThickness: 36})),
    },
    options: {...BASE, scales: {y: {beginAtZero: true, title: {display: !!yTitle, text: yTitle},
      ticks: {precision: 0}}}},
  });
}

// Lines over shared x labels: series {label, data, color, dashed, fill}.
export function lineChart(canvas, labels, series, yTitle) {
  return upsert(canvas, {
    type: 'line',
    data: {
      labels,
      datasets: series.map((s) => ({label: s.label, data: s.data, borderColor: s.color,
        backgroundColor: `${s.color}22`, fill: !!s.fill, borderDash: s.dashed ? [6, 4] : [],
        pointRadius: labels.length < 20 ? 3 : 0, borderWidth: 2, stepped: true, spanGaps: true})),
    },
    options: {...BASE, interaction: {mode: 'index', intersect: false},
      scales: {y: {beginAtZero: true, title: {display: !!yTitle, text: yTitle},
        ticks: {precision: 0}}, x: {ticks: {maxTicksLimit: 12, autoSkip: true}}}},
  });
}
