// Tenant API keys: issue (the token is shown once), list, revoke.
import { api, ErrorNote, fmtDate, html, Loading, Page, Status, useAction, useLoad, useState } from './lib.js';

/** A freshly issued secret, shown once with a copy button. */
export function OneTimeSecret({ label, token, onDone }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(token);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return html`<div class="secret" role="status">
    <p><strong>${label}</strong> Copy it now: it is not shown again.</p>
    <code class="token">${token}</code>
    <div class="row"><button type="button" class="secondary" onClick=${copy}>${copied ? 'Copied' : 'Copy'}</button>
      <button type="button" class="secondary" onClick=${onDone}>Done</button></div>
  </div>`;
}

export function Keys() {
  const keys = useLoad(() => api('/api-keys'), []);
  const [issued, setIssued] = useState(undefined);
  const action = useAction();
  const issue = (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    const name = String(new FormData(form).get('name') ?? '');
    action.run(async () => {
      setIssued(await api('/api-keys', { method: 'POST', body: { name } }));
      form.reset();
      keys.reload();
    });
  };
  const revoke = (k) => action.run(async () => {
    if (!confirm(`Revoke key ${k.name} (${k.prefix}…)? Clients using it stop working at once.`)) return;
    await api(`/api-keys/${encodeURIComponent(k.id)}`, { method: 'DELETE' });
    keys.reload();
  });
  return html`<${Page} title="API keys">
    <form class="inline-form" onSubmit=${issue}>
      <label for="key-name">New key name</label><input id="key-name" name="name" required autocomplete="off" placeholder="ci, laptop, …" />
      <button type="submit" disabled=${action.busy}>Issue key</button>
    </form>
    <p class="muted">A new key has your own role.</p>
    ${issued ? html`<${OneTimeSecret} label=${`Key ${issued.name} issued.`} token=${issued.token} onDone=${() => setIssued(undefined)} />` : null}
    <${ErrorNote} error=${keys.error ?? action.error} />
    ${keys.loading && !keys.data ? html`<${Loading} />` : null}
    ${keys.data
      ? html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>${keys.data.map(
            (k) => html`<tr data-key=${k.id}><td>${k.name}</td><td><code>${k.prefix}…</code></td><td>${k.role}</td><td><${Status} status=${k.status} /></td>
              <td>${fmtDate(k.createdAt)}</td><td>${fmtDate(k.expiresAt)}</td>
              <td>${k.status === 'active' ? html`<button type="button" class="secondary" aria-label=${`Revoke key ${k.name}`} onClick=${() => revoke(k)}>Revoke</button>` : null}</td></tr>`,
          )}</tbody></table></div>`
      : null}
  </${Page}>`;
}
