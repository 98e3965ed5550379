// Charts with uPlot (small, canvas): a time series per bucket, drawn in the viewer's timezone.
import uPlot from 'uplot';
import { html, useEffect, useRef } from './lib.js';

/** `series`: [{ label, values, color }] over `times` (ISO strings); `title` labels the figure for screen readers. */
export function TimeChart({ title, times, series, height = 180 }) {
  const ref = useRef(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    const data = [times.map((t) => new Date(t).getTime() / 1000), ...series.map((s) => s.values)];
    const opts = {
      width: Math.max(240, el.clientWidth || 600),
      height,
      legend: { show: true },
      cursor: { y: false },
      scales: { x: { time: true } },
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, fill: `${s.color}22`, width: 2, points: { show: false } }))],
      axes: [{}, { size: 50 }],
    };
    const plot = new uPlot(opts, data, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(240, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [JSON.stringify(times), JSON.stringify(series)]);
  const total = series.map((s) => `${s.label}: ${s.values.reduce((a, b) => a + (b ?? 0), 0)}`).join(', ');
  return html`<figure class="chart"><figcaption>${title}</figcaption><div ref=${ref} role="img" aria-label=${`${title}. Totals: ${total}`}></div></figure>`;
}
