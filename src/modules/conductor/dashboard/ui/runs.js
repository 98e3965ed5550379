// Runs: the list (filters, live status) and one run's page (its timeline streaming live, cancel and terminate).
import { api, apiPage, ErrorNote, fmtDate, html, Link, Loading, navigate, Page, Status, useAction, useEffect, useLoad, useLocation, useState } from './lib.js';
import { Timeline, useRunStream } from './timeline.js';
import { RunApprovals } from './approvals.js';

// `queued`: posted to a busy session with multitask enqueue or interrupt, waiting its turn; `waiting`: a tool call
// of the run waits for a person's approval
const STATUSES = ['queued', 'running', 'waiting', 'ok', 'error', 'cancelled', 'interrupted'];
export const isLive = (status) => status === 'queued' || status === 'running' || status === 'waiting';
const POLL_MS = 3000;
const PAGE = 50;

export const promptOf = (run) => String(run.subTask?.prompt ?? '');
export const excerpt = (text, n = 80) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

export function RunTable({ runs, caption }) {
  if (!runs.length) return html`<p class="muted">No runs yet.</p>`;
  return html`<div class="table-wrap"><table>
    ${caption ? html`<caption>${caption}</caption>` : null}
    <thead><tr><th scope="col">Run</th><th scope="col">Profile</th><th scope="col">Status</th><th scope="col">Prompt</th><th scope="col">Started</th><th scope="col">Finished</th></tr></thead>
    <tbody>${runs.map(
      (r) => html`<tr data-run=${r.id}>
        <td><${Link} href=${`/dashboard/runs/${encodeURIComponent(r.id)}`}><code>${r.id}</code></${Link}></td>
        <td>${r.subTask?.profile ?? ''}</td>
        <td><${Status} status=${r.status} /></td>
        <td class="prompt">${excerpt(promptOf(r))}</td>
        <td>${fmtDate(r.startedAt)}</td>
        <td>${fmtDate(r.finishedAt)}</td>
      </tr>`,
    )}</tbody>
  </table></div>`;
}

/** Re-loads `reload` every few seconds while `active` (runs still running show their new status without a refresh). */
export function usePoll(active, reload) {
  useEffect(() => {
    if (!active) return undefined;
    const t = setInterval(reload, POLL_MS);
    return () => clearInterval(t);
  }, [active, reload]);
}

export function Runs() {
  const loc = useLocation();
  const params = new URLSearchParams(loc.split('?')[1] ?? '');
  const status = params.get('status') ?? '';
  const profile = params.get('profile') ?? '';
  const offset = Math.max(0, Number(params.get('offset')) || 0);
  const profiles = useLoad(() => api('/profiles'), []);
  const runs = useLoad(() => apiPage(`${profile ? `/profiles/${encodeURIComponent(profile)}/runs` : '/runs'}?limit=${PAGE}&offset=${offset}`), [profile, offset]);
  const items = runs.data?.items ?? [];
  const shown = items.filter((r) => !status || r.status === status);
  usePoll(items.some((r) => isLive(r.status)), runs.reload);
  const setFilter = (key, value) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    if (key !== 'offset') next.delete('offset');
    const q = next.toString();
    navigate(`/dashboard/runs${q ? `?${q}` : ''}`);
  };
  return html`<${Page} title="Runs" actions=${html`<${Link} class="button" href="/dashboard/playground">New run</${Link}>`}>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <label>Status <select name="status" value=${status} onChange=${(e) => setFilter('status', e.currentTarget.value)}>
        <option value="">any</option>${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
      </select></label>
      <label>Profile <select name="profile" value=${profile} onChange=${(e) => setFilter('profile', e.currentTarget.value)}>
        <option value="">any</option>${(profiles.data ?? []).map((p) => html`<option value=${p.name}>${p.name}</option>`)}
      </select></label>
      <button type="button" class="secondary" onClick=${runs.reload}>Refresh</button>
    </form>
    <${ErrorNote} error=${runs.error} />
    ${runs.data ? html`<${RunTable} runs=${shown} />` : runs.loading ? html`<${Loading} />` : null}
    ${runs.data && runs.data.total > PAGE
      ? html`<nav class="row pager" aria-label="Pages of runs">
          <button type="button" class="secondary" disabled=${offset === 0} onClick=${() => setFilter('offset', String(Math.max(0, offset - PAGE)) === '0' ? '' : String(offset - PAGE))}>Newer</button>
          <span class="muted">${offset + 1}–${Math.min(offset + PAGE, runs.data.total)} of ${runs.data.total}</span>
          <button type="button" class="secondary" disabled=${offset + PAGE >= runs.data.total} onClick=${() => setFilter('offset', String(offset + PAGE))}>Older</button>
        </nav>`
      : null}
  </${Page}>`;
}

export function RunDetail({ id }) {
  const run = useLoad(() => api(`/runs/${encodeURIComponent(id)}`), [id]);
  const stream = useRunStream(id, () => run.reload());
  const action = useAction();
  const running = isLive(run.data?.status) && !stream.ended;
  const cancel = () => action.run(async () => {
    await api(`/runs/${encodeURIComponent(id)}`, { method: 'DELETE' });
    run.reload();
  });
  const terminate = () => action.run(async () => {
    if (!confirm('Force-terminate this run? Its session is released even if the worker does not answer.')) return;
    await api(`/runs/${encodeURIComponent(id)}/terminate`, { method: 'POST' });
    run.reload();
  });
  const r = run.data;
  // an approval came or went in the stream: the run's status and its pending approvals are read again
  const approvalEvents = stream.items.filter((it) => it.kind === 'approval').length + stream.items.filter((it) => it.kind === 'approval' && it.decision).length;
  useEffect(() => {
    if (approvalEvents) run.reload();
  }, [approvalEvents]);
  return html`<${Page} title=${`Run ${id}`} actions=${html`
      <button type="button" onClick=${cancel} disabled=${!running || action.busy}>Cancel run</button>
      <button type="button" class="danger" onClick=${terminate} disabled=${!running || action.busy}>Terminate</button>`}>
    <${ErrorNote} error=${run.error ?? action.error} />
    ${r
      ? html`<dl class="facts">
          <dt>Status</dt><dd><${Status} status=${r.status} /></dd>
          <dt>Profile</dt><dd><${Link} href=${`/dashboard/profiles/${encodeURIComponent(r.subTask?.profile ?? '')}`}>${r.subTask?.profile}</${Link}></dd>
          <dt>Session</dt><dd><${Link} href=${`/dashboard/sessions/${encodeURIComponent(r.subTask?.sessionId ?? '')}`}><code>${r.subTask?.sessionId}</code></${Link}></dd>
          <dt>Started</dt><dd>${fmtDate(r.startedAt)}</dd>
          <dt>Finished</dt><dd>${fmtDate(r.finishedAt)}</dd>
          <dt>Prompt</dt><dd class="prompt-full">${promptOf(r)}</dd>
        </dl>`
      : run.loading ? html`<${Loading} />` : null}
    ${r && isLive(r.status) && !stream.ended ? html`<${RunApprovals} runId=${id} version=${approvalEvents} onDecided=${run.reload} />` : null}
    <h2>Events</h2>
    ${stream.error ? html`<p class="error" role="alert">The event stream stopped: ${stream.error}. Reload the page to follow it again.</p>` : null}
    <${Timeline} items=${stream.items} ended=${stream.ended || Boolean(stream.error)} />
  </${Page}>`;
}
