// Sessions: the list, one session's runs, and continuing its conversation.
import { api, ErrorNote, fmtDate, html, Link, Loading, navigate, Page, Status, useAction, useLoad, useState } from './lib.js';
import { excerpt, isLive, RunTable, usePoll } from './runs.js';
import { Conversation } from './playground.js';

export function Sessions() {
  const [q, setQ] = useState('');
  const sessions = useLoad(() => api(`/sessions?limit=100${q ? `&q=${encodeURIComponent(q)}` : ''}`), [q]);
  const list = sessions.data ?? [];
  return html`<${Page} title="Sessions">
    <form class="filters" role="search" onSubmit=${(e) => { e.preventDefault(); setQ(new FormData(e.currentTarget).get('q')); }}>
      <label>Search <input type="search" name="q" placeholder="id, profile or prompt" /></label>
      <button type="submit" class="secondary">Search</button>
    </form>
    <${ErrorNote} error=${sessions.error} />
    ${sessions.loading && !sessions.data ? html`<${Loading} />` : null}
    ${sessions.data && !list.length ? html`<p class="muted">No sessions yet: a run opens one.</p>` : null}
    ${list.length
      ? html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">Session</th><th scope="col">Profile</th><th scope="col">Status</th><th scope="col">Runs</th><th scope="col">Last prompt</th><th scope="col">Last used</th></tr></thead>
          <tbody>${list.map(
            (s) => html`<tr>
              <td><${Link} href=${`/dashboard/sessions/${encodeURIComponent(s.id)}`}><code>${s.id}</code></${Link}></td>
              <td>${s.origin === 'v1' ? html`<span class="muted">/v1 agent session</span>` : s.profile}</td><td><${Status} status=${s.status} /></td><td>${s.runCount}</td>
              <td class="prompt">${excerpt(s.lastPrompt ?? '')}</td><td>${fmtDate(s.lastUsedAt)}</td></tr>`,
          )}</tbody></table></div>`
      : null}
  </${Page}>`;
}

export function SessionDetail({ id }) {
  const session = useLoad(() => api(`/sessions/${encodeURIComponent(id)}`), [id]);
  const runs = useLoad(() => api(`/sessions/${encodeURIComponent(id)}/runs?limit=100`), [id]);
  usePoll((runs.data ?? []).some((r) => isLive(r.status)), runs.reload);
  const action = useAction();
  const end = () => action.run(async () => {
    if (!confirm('End this session? Its runner state is shut down; its runs stay listed.')) return;
    await api(`/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' });
    navigate('/dashboard/sessions');
  });
  const s = session.data;
  return html`<${Page} title=${`Session ${id}`} actions=${html`<button type="button" class="danger" onClick=${end} disabled=${action.busy || !s}>End session</button>`}>
    <${ErrorNote} error=${session.error ?? runs.error ?? action.error} />
    ${s
      ? html`<dl class="facts">
          <dt>Profile</dt><dd>${s.origin === 'v1' ? html`none saved: a /v1 agent session (its agent's configuration; continue it through /v1)` : html`<${Link} href=${`/dashboard/profiles/${encodeURIComponent(s.profile)}`}>${s.profile}</${Link}>`} (${s.runtime})</dd>
          <dt>Status</dt><dd><${Status} status=${s.status} /></dd>
          <dt>Created</dt><dd>${fmtDate(s.createdAt)}</dd>
          <dt>Last used</dt><dd>${fmtDate(s.lastUsedAt)}</dd>
        </dl>`
      : session.loading ? html`<${Loading} />` : null}
    <h2>Runs</h2>
    ${runs.data ? html`<${RunTable} runs=${runs.data} />` : null}
    ${s && s.origin !== 'v1' ? html`<h2>Continue the conversation</h2><${Conversation} profile=${s.profile} sessionId=${id} onSession=${() => runs.reload()} />` : null}
  </${Page}>`;
}
