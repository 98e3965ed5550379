// Automations: the list, one automation's firings, run now, start/stop, and its memory note.
import { api, ErrorNote, fmtDate, html, Link, Loading, Page, Status, useAction, useLoad, useState } from './lib.js';

export function Automations() {
  const list = useLoad(() => api('/automations'), []);
  const firings = useLoad(() => api('/automations/firings?limit=20'), []);
  const action = useAction();
  const create = (e) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const form = e.currentTarget;
    action.run(async () => {
      await api('/automations', {
        method: 'POST',
        body: { name: f.get('name'), profile: f.get('profile'), cron: f.get('cron'), prompt: f.get('prompt'), timezone: Intl.DateTimeFormat().resolvedOptions().timeZone },
      });
      form.reset();
      list.reload();
    });
  };
  const rows = list.data ?? [];
  return html`<${Page} title="Automations">
    <${ErrorNote} error=${list.error} />
    ${list.loading && !list.data ? html`<${Loading} />` : null}
    ${list.data && !rows.length ? html`<p class="muted">No automations yet.</p>` : null}
    ${rows.length
      ? html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">Name</th><th scope="col">Profile</th><th scope="col">Schedule</th><th scope="col">Status</th><th scope="col">Next run</th><th scope="col">Last fired</th></tr></thead>
          <tbody>${rows.map(
            (a) => html`<tr><td><${Link} href=${`/dashboard/automations/${encodeURIComponent(a.id)}`}>${a.name}</${Link}></td><td>${a.profile}</td>
              <td><code>${a.cron}</code> <span class="muted">${a.timezone}</span></td><td><${Status} status=${a.status} /></td>
              <td>${fmtDate(a.nextRunAt)}</td><td>${fmtDate(a.lastFiredAt)}</td></tr>`,
          )}</tbody></table></div>`
      : null}
    <h2>New automation</h2>
    <form class="stack" onSubmit=${create}>
      <div class="grid2">
        <div class="field"><label for="a-name">Name</label><input id="a-name" name="name" required autocomplete="off" /></div>
        <div class="field"><label for="a-profile">Profile</label><input id="a-profile" name="profile" required autocomplete="off" /></div>
        <div class="field"><label for="a-cron">Cron</label><input id="a-cron" name="cron" required placeholder="0 8 * * 1-5" autocomplete="off" /></div>
      </div>
      <div class="field"><label for="a-prompt">Prompt</label><textarea id="a-prompt" name="prompt" rows="3"></textarea></div>
      <p class="muted">Runs in your timezone (${Intl.DateTimeFormat().resolvedOptions().timeZone}).</p>
      <div class="row"><button type="submit" disabled=${action.busy}>Create automation</button></div>
      <${ErrorNote} error=${action.error} />
    </form>
    <h2>Recent firings</h2>
    ${firings.data ? html`<${Firings} firings=${firings.data} />` : null}
  </${Page}>`;
}

function Firings({ firings }) {
  if (!firings.length) return html`<p class="muted">No firings yet.</p>`;
  return html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">Fired</th><th scope="col">Scheduled for</th><th scope="col">Outcome</th><th scope="col">Run</th><th scope="col">Error</th></tr></thead>
    <tbody>${firings.map(
      (f) => html`<tr><td>${fmtDate(f.firedAt)}</td><td>${fmtDate(f.scheduledFor)}</td><td><${Status} status=${f.outcome ?? 'running'} /></td>
        <td>${f.runId ? html`<${Link} href=${`/dashboard/runs/${encodeURIComponent(f.runId)}`}><code>${f.runId}</code></${Link}>` : '—'}</td><td>${f.error ?? ''}</td></tr>`,
    )}</tbody></table></div>`;
}

export function AutomationDetail({ id }) {
  const a = useLoad(() => api(`/automations/${encodeURIComponent(id)}`), [id]);
  const firings = useLoad(() => api(`/automations/firings?automation=${encodeURIComponent(id)}&limit=50`), [id]);
  const memory = useLoad(() => api(`/automations/${encodeURIComponent(id)}/memory`), [id]);
  const action = useAction();
  const [note, setNote] = useState(undefined);
  const call = (path, method = 'POST', body) => action.run(async () => {
    await api(`/automations/${encodeURIComponent(id)}${path}`, { method, body });
    a.reload();
    firings.reload();
    memory.reload();
  });
  const d = a.data;
  return html`<${Page} title=${d ? `Automation ${d.name}` : 'Automation'} actions=${html`
      <button type="button" onClick=${() => call('/run')} disabled=${action.busy}>Run now</button>
      ${d?.status === 'active' ? html`<button type="button" class="secondary" onClick=${() => call('/stop')} disabled=${action.busy}>Stop</button>`
        : html`<button type="button" class="secondary" onClick=${() => call('/start')} disabled=${action.busy}>Start</button>`}`}>
    <${ErrorNote} error=${a.error ?? action.error} />
    ${d
      ? html`<dl class="facts"><dt>Profile</dt><dd>${d.profile}</dd><dt>Schedule</dt><dd><code>${d.cron}</code> (${d.timezone})</dd><dt>Status</dt><dd><${Status} status=${d.status} /></dd>
          <dt>Next run</dt><dd>${fmtDate(d.nextRunAt)}</dd><dt>Prompt</dt><dd class="prompt-full">${d.prompt}</dd></dl>`
      : a.loading ? html`<${Loading} />` : null}
    <h2>Firings</h2>
    ${firings.data ? html`<${Firings} firings=${firings.data} />` : null}
    <h2>Memory</h2>
    ${memory.data
      ? html`<form class="stack" onSubmit=${(e) => { e.preventDefault(); call('/memory', 'PUT', { body: note ?? memory.data.body }); }}>
          <div class="field"><label for="memory">Memory note (the automation's runs read and rewrite it)</label>
          <textarea id="memory" rows="6" value=${note ?? memory.data.body} onInput=${(e) => setNote(e.currentTarget.value)}></textarea></div>
          <p class="muted">${memory.data.updatedAt ? `Updated ${fmtDate(memory.data.updatedAt)}` : 'Empty so far.'}</p>
          <div class="row"><button type="submit" disabled=${action.busy}>Save memory</button></div></form>`
      : null}
  </${Page}>`;
}
