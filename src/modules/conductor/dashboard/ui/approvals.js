// Approvals: tool calls under an `ask` permission that wait for a person. The pending count (the nav badge), the
// list of the tenant's approvals, and the decision form on a waiting run's page (Approve / Deny, an optional message).
import { api, apiPage, ErrorNote, fmtDate, html, json, Link, Loading, navigate, Page, Status, useAction, useEffect, useLoad, useLocation, useState } from './lib.js';
import { excerpt } from './runs.js';

const STATUSES = ['pending', 'approved', 'denied', 'expired', 'cancelled'];
const POLL_MS = 3000;
const PAGE = 100;

/** Re-loads `reload` every few seconds. */
function useEvery(reload) {
  useEffect(() => {
    const t = setInterval(reload, POLL_MS);
    return () => clearInterval(t);
  }, [reload]);
}

/** How many approvals wait for a decision (the nav badge), followed while the dashboard is open. */
export function usePendingCount() {
  const pending = useLoad(() => apiPage('/approvals?status=pending&limit=1'), []);
  useEvery(pending.reload);
  return pending.data?.total ?? 0;
}

/** The badge beside "Approvals" in the navigation: nothing while none waits. */
export function PendingBadge() {
  const n = usePendingCount();
  if (!n) return null;
  return html` <span class="badge" data-testid="pending-approvals" title=${`${n} pending`}>${n}<span class="sr-only"> pending</span></span>`;
}

export function Approvals() {
  const loc = useLocation();
  const params = new URLSearchParams(loc.split('?')[1] ?? '');
  const status = params.get('status') ?? 'pending';
  const list = useLoad(() => api(`/approvals?limit=${PAGE}${status ? `&status=${encodeURIComponent(status)}` : ''}`), [status]);
  useEvery(list.reload);
  const items = list.data ?? [];
  const setStatus = (value) => navigate(`/dashboard/approvals${value === 'pending' ? '' : `?status=${encodeURIComponent(value)}`}`);
  return html`<${Page} title="Approvals">
    <p class="muted">Tool calls under an <code>ask</code> permission wait here for a person. Open the run to approve or deny.</p>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <label>Status <select name="status" value=${status} onChange=${(e) => setStatus(e.currentTarget.value)}>
        <option value="">any</option>${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
      </select></label>
    </form>
    <${ErrorNote} error=${list.error} />
    ${list.loading && !list.data ? html`<${Loading} />` : null}
    ${list.data && !items.length ? html`<p class="muted">${status === 'pending' ? 'Nothing waits for a decision.' : 'No approvals.'}</p>` : null}
    ${items.length
      ? html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">Tool</th><th scope="col">Input</th><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Expires</th></tr></thead>
          <tbody>${items.map(
            (a) => html`<tr data-approval=${a.id}>
              <td><code class="tool-name">${a.toolName}</code></td>
              <td class="prompt"><code class="approval-input">${excerpt(JSON.stringify(a.input ?? {}), 120)}</code></td>
              <td><${Link} href=${`/dashboard/runs/${encodeURIComponent(a.runId)}`} aria-label=${`Open run ${a.runId}`}><code>${a.runId}</code></${Link}></td>
              <td><${Status} status=${a.status} /></td>
              <td>${a.status === 'pending' ? fmtDate(a.expiresAt) : fmtDate(a.decidedAt)}</td>
            </tr>`,
          )}</tbody></table></div>`
      : null}
  </${Page}>`;
}

/** One pending approval of a run: what the tool would do, and Approve / Deny with an optional message. */
function Decide({ runId, approval, onDecided }) {
  const [message, setMessage] = useState('');
  const action = useAction();
  const field = `approval-message-${approval.id}`;
  const decide = (decision) => action.run(async () => {
    const body = { decision, ...(message.trim() ? { message: message.trim() } : {}) };
    await api(`/runs/${encodeURIComponent(runId)}/approvals/${encodeURIComponent(approval.id)}`, { method: 'POST', body });
    onDecided();
  });
  return html`<div class="card approval" data-approval=${approval.id}>
    <p><strong>Waiting for approval:</strong> <code class="tool-name">${approval.toolName}</code> <span class="muted">until ${fmtDate(approval.expiresAt)}</span></p>
    <pre class="tool-input">${json(approval.input)}</pre>
    <div class="field"><label for=${field}>Message (optional)</label><textarea id=${field} rows="2" value=${message} onInput=${(e) => setMessage(e.currentTarget.value)}></textarea></div>
    <div class="row">
      <button type="button" onClick=${() => decide('approve')} disabled=${action.busy}>Approve</button>
      <button type="button" class="danger" onClick=${() => decide('deny')} disabled=${action.busy}>Deny</button>
    </div>
    <${ErrorNote} error=${action.error} />
  </div>`;
}

/** The pending approvals of a run, with their decision forms; `version` changes when the run's stream says one came or went. */
export function RunApprovals({ runId, version, onDecided }) {
  const pending = useLoad(() => api(`/runs/${encodeURIComponent(runId)}/approvals?status=pending`), [runId, version]);
  const items = pending.data ?? [];
  if (!items.length && !pending.error) return null;
  return html`<section aria-label="Pending approvals">
    <h2>Pending approvals</h2>
    <${ErrorNote} error=${pending.error} />
    ${items.map((a) => html`<${Decide} key=${a.id} runId=${runId} approval=${a} onDecided=${() => { pending.reload(); onDecided?.(); }} />`)}
  </section>`;
}
