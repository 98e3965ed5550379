// Overview: runs per hour and failure rate over the last day, tokens and cost this month (GET /api/stats).
import { api, ErrorNote, fmtNumber, fmtUsd, html, Link, Loading, Page, useLoad } from './lib.js';
import { TimeChart } from './chart.js';

const sum = (buckets, key) => buckets.reduce((n, b) => n + (b[key] ?? 0), 0);
const monthStart = () => {
  const d = new Date();
  return new Date(d.getFullYear(), d.getMonth(), 1).getTime();
};

export function Overview() {
  const day = useLoad(() => api('/stats?window=24h'), []);
  const month = useLoad(() => api('/stats?window=30d'), []);
  const b = day.data?.buckets ?? [];
  const runs = sum(b, 'runs');
  const failed = sum(b, 'failedRuns');
  // this calendar month, in the viewer's timezone: the 30-day window's daily buckets from the 1st on
  const thisMonth = (month.data?.buckets ?? []).filter((x) => new Date(x.end).getTime() > monthStart());
  return html`<${Page} title="Overview" actions=${html`<${Link} class="button" href="/dashboard/playground">Open the playground</${Link}>`}>
    <${ErrorNote} error=${day.error ?? month.error} />
    ${day.loading && !day.data ? html`<${Loading} />` : null}
    <div class="cards">
      <div class="card"><h2>Runs, last 24 h</h2><p class="big" data-testid="runs-24h">${fmtNumber(runs)}</p><p class="muted">${fmtNumber(sum(b, 'runningRuns'))} running now${sum(b, 'waitingRuns') ? html`, <${Link} href="/dashboard/approvals">${fmtNumber(sum(b, 'waitingRuns'))} waiting for approval</${Link}>` : ''}</p></div>
      <div class="card"><h2>Failure rate, last 24 h</h2><p class="big">${runs ? `${Math.round((failed / runs) * 1000) / 10}%` : '—'}</p><p class="muted">${fmtNumber(failed)} failed</p></div>
      <div class="card"><h2>Tokens this month</h2><p class="big">${fmtNumber(sum(thisMonth, 'tokens'))}</p></div>
      <div class="card"><h2>Cost this month</h2><p class="big">${fmtUsd(sum(thisMonth, 'costCents') / 100)}</p></div>
    </div>
    ${day.data
      ? html`<${TimeChart} title="Runs per hour, last 24 hours" times=${b.map((x) => x.start)}
          series=${[{ label: 'runs', values: b.map((x) => x.runs), color: '#2456d6' }, { label: 'failed', values: b.map((x) => x.failedRuns), color: '#b3261e' }]} />`
      : null}
    ${month.data
      ? html`<${TimeChart} title="Cost per day (USD), last 30 days" times=${month.data.buckets.map((x) => x.start)}
          series=${[{ label: 'cost', values: month.data.buckets.map((x) => x.costCents / 100), color: '#0a7d45' }]} />`
      : null}
  </${Page}>`;
}
