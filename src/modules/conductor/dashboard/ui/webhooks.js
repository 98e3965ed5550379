// Webhooks: the endpoints, and one endpoint's page (its delivery log with retries, a test event, secret rotation).
import { api, atLeastAdmin, ErrorNote, fmtDate, html, Link, Loading, navigate, Page, Status, useAction, useEffect, useLoad, useState, whoami } from './lib.js';

/** A secret the API answered this once: shown until the page changes, with the reason it is shown. */
function OneTimeSecret({ secret }) {
  if (!secret) return null;
  return html`<div class="card" role="status"><p>The signing secret, shown this once: keep it now.</p><p><code>${secret}</code></p></div>`;
}

export function Webhooks() {
  const list = useLoad(() => api('/webhooks'), []);
  const who = useLoad(whoami, []);
  const action = useAction();
  const [secret, setSecret] = useState(undefined);
  const create = (e) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const form = e.currentTarget;
    action.run(async () => {
      const events = String(f.get('events')).split(',').map((s) => s.trim()).filter(Boolean);
      const made = await api('/webhooks', { method: 'POST', body: { url: f.get('url'), events, description: f.get('description') } });
      setSecret(made.secret);
      form.reset();
      list.reload();
    });
  };
  const rows = list.data ?? [];
  return html`<${Page} title="Webhooks">
    <${ErrorNote} error=${list.error} />
    ${list.loading && !list.data ? html`<${Loading} />` : null}
    ${list.data && !rows.length ? html`<p class="muted">No webhook endpoints yet.</p>` : null}
    ${rows.length
      ? html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Description</th></tr></thead>
          <tbody>${rows.map(
            (w) => html`<tr><td><${Link} href=${`/dashboard/webhooks/${encodeURIComponent(w.id)}`}>${w.url}</${Link}></td><td><code>${w.events.join(', ')}</code></td>
              <td><${Status} status=${w.enabled ? 'enabled' : 'disabled'} /></td><td>${w.description}</td></tr>`,
          )}</tbody></table></div>`
      : null}
    ${atLeastAdmin(who.data)
      ? html`<h2>New endpoint</h2>
        <${OneTimeSecret} secret=${secret} />
        <form class="stack" onSubmit=${create}>
          <div class="grid2">
            <div class="field"><label for="w-url">URL</label><input id="w-url" name="url" type="url" required autocomplete="off" placeholder="https://example.com/hooks/svc" /></div>
            <div class="field"><label for="w-events">Events (comma-separated; run.* or * for all)</label><input id="w-events" name="events" required autocomplete="off" placeholder="run.completed, run.failed" /></div>
          </div>
          <div class="field"><label for="w-description">Description</label><input id="w-description" name="description" autocomplete="off" /></div>
          <div class="row"><button type="submit" disabled=${action.busy}>Create endpoint</button></div>
          <${ErrorNote} error=${action.error} />
        </form>`
      : null}
  </${Page}>`;
}

export function WebhookDetail({ id }) {
  const path = `/webhooks/${encodeURIComponent(id)}`;
  const w = useLoad(() => api(path), [id]);
  const deliveries = useLoad(() => api(`${path}/deliveries?limit=100`), [id]);
  const who = useLoad(whoami, []);
  const action = useAction();
  const [secret, setSecret] = useState(undefined);
  const call = (sub, method = 'POST', body) => action.run(async () => {
    const r = await api(`${path}${sub}`, { method, body });
    w.reload();
    deliveries.reload();
    return r;
  });
  const rotate = async () => setSecret((await call('/rotate-secret'))?.secret);
  const remove = () => action.run(async () => {
    if (!confirm('Delete this endpoint and its delivery log?')) return;
    await api(path, { method: 'DELETE' });
    navigate('/dashboard/webhooks');
  });
  // while a delivery is pending its next attempt may land any moment: the log is read again every 2 s meanwhile
  const pending = (deliveries.data ?? []).some((x) => x.status === 'pending');
  useEffect(() => {
    if (!pending) return undefined;
    const timer = setInterval(() => deliveries.reload(), 2000);
    return () => clearInterval(timer);
  }, [pending]);
  const d = w.data;
  const admin = atLeastAdmin(who.data);
  return html`<${Page} title=${d ? `Webhook ${d.url}` : 'Webhook'} actions=${admin && d ? html`
      <button type="button" onClick=${() => call('/test')} disabled=${action.busy}>Send test event</button>
      <button type="button" class="secondary" onClick=${() => call('', 'PATCH', { enabled: !d.enabled })} disabled=${action.busy}>${d.enabled ? 'Disable' : 'Enable'}</button>
      <button type="button" class="secondary" onClick=${rotate} disabled=${action.busy}>Rotate secret</button>
      <button type="button" class="danger" onClick=${remove} disabled=${action.busy}>Delete</button>` : null}>
    <${ErrorNote} error=${w.error ?? action.error} />
    <${OneTimeSecret} secret=${secret} />
    ${d
      ? html`<dl class="facts"><dt>URL</dt><dd><code>${d.url}</code></dd><dt>Events</dt><dd><code>${d.events.join(', ')}</code></dd>
          <dt>State</dt><dd><${Status} status=${d.enabled ? 'enabled' : 'disabled'} />${d.disabledReason ? html` <span class="muted">${d.disabledReason}</span>` : null}</dd>
          <dt>Failing since</dt><dd>${fmtDate(d.failingSince)}</dd><dt>Description</dt><dd>${d.description || '—'}</dd></dl>`
      : w.loading ? html`<${Loading} />` : null}
    <h2>Deliveries</h2>
    <${ErrorNote} error=${deliveries.error} />
    ${deliveries.data && !deliveries.data.length ? html`<p class="muted">No deliveries yet.</p>` : null}
    ${deliveries.data?.length
      ? html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Next attempt</th><th scope="col">Error</th>${admin ? html`<th scope="col"><span class="sr-only">Retry</span></th>` : null}</tr></thead>
          <tbody>${deliveries.data.map(
            (x) => html`<tr><td>${fmtDate(x.createdAt)}</td><td><code>${x.event}</code> <span class="muted">${x.eventId}</span></td><td><${Status} status=${x.status} /></td>
              <td>${x.attempts}</td><td>${x.lastResponseCode ?? '—'}${x.lastLatencyMs !== null ? html` <span class="muted">${x.lastLatencyMs} ms</span>` : null}</td>
              <td>${fmtDate(x.nextAttemptAt)}</td><td>${x.lastError ?? ''}</td>
              ${admin ? html`<td><button type="button" class="secondary" onClick=${() => call(`/deliveries/${encodeURIComponent(x.id)}/retry`)} disabled=${action.busy || !d?.enabled}>Retry</button></td>` : null}</tr>`,
          )}</tbody></table></div>`
      : null}
  </${Page}>`;
}
