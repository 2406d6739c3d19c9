// The dashboard's throughput and stock chart, drawn by uPlot (vendored). A module of its own,
// imported when the chart first comes into view: opening the page does not wait for uPlot's
// 22 KB (BENCHMARKS.md: at most 64 KB to open the page), and a phone that never scrolls down to
// the chart never fetches it. The page keeps the points meanwhile, so the chart starts full.

import uPlot from './vendor/uplot/uPlot.esm.min.js';
import { t } from './i18n.js';

/** A chart of `history` ([times, orders/s, stock]) filling `host`. */
export function drawChart(host, history) {
  return new uPlot({
    width: Math.max(200, host.clientWidth),
    height: host.clientHeight || 130,
    legend: { show: false },
    cursor: { show: false },
    scales: { x: { time: true, range: (u, lo, hi) => [Math.max(lo, hi - 60), Math.max(hi, lo + 5)] }, rps: { range: (u, lo, hi) => [0, Math.max(10, hi)] }, stock: { range: (u, lo, hi) => [0, Math.max(10, hi)] } },
    axes: [
      { stroke: '#5a6270', grid: { stroke: '#eef0f3' }, size: 24, font: '12px system-ui' },
      { scale: 'rps', stroke: '#0072b2', grid: { stroke: '#eef0f3' }, size: 44, font: '12px system-ui' },
      { scale: 'stock', side: 1, stroke: '#d55e00', grid: { show: false }, size: 44, font: '12px system-ui' },
    ],
    series: [
      {},
      { label: t('chart.rps'), scale: 'rps', stroke: '#0072b2', width: 2.5, fill: 'rgba(0,114,178,0.12)' },
      { label: t('chart.stock'), scale: 'stock', stroke: '#d55e00', width: 2, dash: [6, 4] },
    ],
  }, history, host);
}
