// Published agents: publish a profile, each agent's settings, agent keys (shown once) and metrics charts.
import { api, atLeastAdmin, ErrorNote, fmtDate, fmtNumber, fmtUsd, html, Loading, Page, Status, useAction, useLoad, useState, whoami } from './lib.js';
import { OneTimeSecret } from './keys.js';
import { TimeChart } from './chart.js';

export function Published() {
  const list = useLoad(() => api('/published'), []);
  const profiles = useLoad(() => api('/profiles'), []);
  const action = useAction();
  const publish = (e) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const body = { visibility: f.get('visibility') };
    if (String(f.get('slug') ?? '').trim()) body.slug = String(f.get('slug')).trim();
    action.run(async () => {
      await api(`/profiles/${encodeURIComponent(String(f.get('profile')))}/publish`, { method: 'POST', body });
      list.reload();
    });
  };
  const agents = list.data?.publishedAgents ?? [];
  return html`<${Page} title="Published agents">
    <form class="inline-form" onSubmit=${publish}>
      <label for="pub-profile">Profile</label>
      <select id="pub-profile" name="profile" required>${(profiles.data ?? []).map((p) => html`<option value=${p.name}>${p.name}</option>`)}</select>
      <label for="pub-slug">Slug</label><input id="pub-slug" name="slug" placeholder="from the name" autocomplete="off" />
      <label for="pub-visibility">Visibility</label>
      <select id="pub-visibility" name="visibility"><option value="private">private (agent keys)</option><option value="org">org</option><option value="public">public</option></select>
      <button type="submit" disabled=${action.busy || !profiles.data?.length}>Publish</button>
    </form>
    <p class="muted">Publishing needs role admin or owner.</p>
    <${ErrorNote} error=${list.error ?? action.error} />
    ${list.loading && !list.data ? html`<${Loading} />` : null}
    ${list.data && !agents.length ? html`<p class="muted">No published agents yet.</p>` : null}
    ${agents.map((a) => html`<${Agent} key=${a.id} agent=${a} onChange=${list.reload} />`)}
  </${Page}>`;
}

function Agent({ agent, onChange }) {
  const name = encodeURIComponent(agent.profileName);
  // agent keys are an admin's business: a member is not shown them (the API would refuse the list)
  const keys = useLoad(async () => (atLeastAdmin(await whoami()) ? api(`/profiles/${name}/keys`) : null), [agent.profileName]);
  const metrics = useLoad(() => api(`/profiles/${name}/metrics?window=24h`), [agent.profileName]);
  const [issued, setIssued] = useState(undefined);
  const action = useAction();
  const issue = (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    const label = String(new FormData(form).get('label') ?? '');
    action.run(async () => {
      setIssued(await api(`/profiles/${name}/keys`, { method: 'POST', body: { label } }));
      form.reset();
      keys.reload();
    });
  };
  const revoke = (k) => action.run(async () => {
    await api(`/profiles/${name}/keys/${encodeURIComponent(k.id)}`, { method: 'DELETE' });
    keys.reload();
  });
  const toggle = () => action.run(async () => {
    await api(`/profiles/${name}/published`, { method: 'PATCH', body: { enabled: !agent.enabled } });
    onChange();
  });
  const unpublish = () => action.run(async () => {
    if (!confirm(`Unpublish ${agent.slug}? Its keys stop working.`)) return;
    await api(`/profiles/${name}/published`, { method: 'DELETE' });
    onChange();
  });
  const m = metrics.data;
  const headingId = `agent-${agent.id}`;
  return html`<section class="card agent" aria-labelledby=${headingId}>
    <h2 id=${headingId}>${agent.slug} <span class="muted">(${agent.profileName})</span></h2>
    <dl class="facts"><dt>Visibility</dt><dd>${agent.visibility}</dd><dt>Enabled</dt><dd><${Status} status=${agent.enabled ? 'enabled' : 'disabled'} /></dd>
      <dt>Chat</dt><dd>${agent.visibility === 'public' ? html`<a href=${`/chat/${encodeURIComponent(agent.slug)}`}>/chat/${agent.slug}</a>` : html`<code>/chat/${agent.slug}</code> <span class="muted">(API only: the chat page is for public agents)</span>`}</dd><dt>Rate limit</dt><dd>${agent.rateLimitRpm} requests a minute</dd></dl>
    <div class="row"><button type="button" class="secondary" onClick=${toggle} disabled=${action.busy}>${agent.enabled ? 'Disable' : 'Enable'}</button>
      <button type="button" class="danger" onClick=${unpublish} disabled=${action.busy}>Unpublish</button></div>
    ${m
      ? html`<p>${fmtNumber(m.totals.requests)} requests, ${fmtNumber(m.totals.conversations)} conversations, ${fmtNumber(m.totals.tokens)} tokens, ${fmtUsd(m.totals.costCents / 100)} in the last 24 hours.</p>
        <${TimeChart} title=${`${agent.slug}: requests per hour, last 24 hours`} times=${m.buckets.map((b) => b.start)}
          series=${[{ label: 'requests', values: m.buckets.map((b) => b.ingressRequests), color: '#2456d6' }, { label: 'tokens', values: m.buckets.map((b) => b.tokens), color: '#8a5cd6' }]} />`
      : null}
    <h3>Agent keys</h3>
    ${keys.data === null ? html`<p class="muted">Agent keys need role admin or owner.</p>` : null}
    ${keys.data === null
      ? null
      : html`<form class="inline-form" onSubmit=${issue}>
      <label for=${`label-${agent.id}`}>Key label</label><input id=${`label-${agent.id}`} name="label" required autocomplete="off" />
      <button type="submit" disabled=${action.busy}>Issue agent key</button>
    </form>`}
    ${issued ? html`<${OneTimeSecret} label=${`Agent key ${issued.label ?? ''} issued.`} token=${issued.token} onDone=${() => setIssued(undefined)} />` : null}
    <${ErrorNote} error=${keys.error ?? action.error} />
    ${keys.data?.length
      ? html`<ul class="plain">${keys.data.map(
          (k) => html`<li><code>${k.prefix ?? k.id}…</code> ${k.label} <span class="muted">${fmtDate(k.createdAt)}</span> ${k.revokedAt ? html`<${Status} status="revoked" />` : html`<button type="button" class="secondary" aria-label=${`Revoke agent key ${k.label}`} onClick=${() => revoke(k)}>Revoke</button>`}</li>`,
        )}</ul>`
      : null}
  </section>`;
}
