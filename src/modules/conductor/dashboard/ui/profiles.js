// Profiles: the list, and create/edit with the API's own validation messages; a profile's recent runs are its usage.
import { api, ErrorNote, fmtDate, fmtNumber, fmtUsd, html, json, Link, Loading, navigate, Page, useAction, useLoad, useState } from './lib.js';
import { RunTable } from './runs.js';

const RUNTIMES = ['general', 'runtime_a', 'runtime_b'];
/** Fields the form edits one by one; the rest of a profile is edited as JSON under "Other settings". */
const FORM_FIELDS = ['name', 'runtime', 'model', 'systemPrompt', 'tools'];
const READ_ONLY = ['id', 'workerPlacement', 'createdAt', 'updatedAt', 'tenantId', 'version', 'pinned'];

export function Profiles() {
  const profiles = useLoad(() => api('/profiles'), []);
  const list = profiles.data ?? [];
  return html`<${Page} title="Profiles" actions=${html`<${Link} class="button" href="/dashboard/profiles/new">New profile</${Link}>`}>
    <${ErrorNote} error=${profiles.error} />
    ${profiles.loading && !profiles.data ? html`<${Loading} />` : null}
    ${profiles.data && !list.length ? html`<p class="muted">No profiles yet.</p>` : null}
    ${list.length
      ? html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">Name</th><th scope="col">Runtime</th><th scope="col">Model</th><th scope="col">Tools</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>${list.map(
            (p) => html`<tr data-profile=${p.name}>
              <td><${Link} href=${`/dashboard/profiles/${encodeURIComponent(p.name)}`}>${p.name}</${Link}></td>
              <td>${p.runtime}</td><td><code>${p.model ?? 'default'}</code></td><td>${(p.tools ?? []).join(', ') || 'default'}</td>
              <td><${Link} href=${`/dashboard/playground?profile=${encodeURIComponent(p.name)}`}>Run</${Link}></td></tr>`,
          )}</tbody></table></div>`
      : null}
  </${Page}>`;
}

function others(profile) {
  const rest = {};
  for (const [k, v] of Object.entries(profile ?? {})) if (!FORM_FIELDS.includes(k) && !READ_ONLY.includes(k)) rest[k] = v;
  return Object.keys(rest).length ? JSON.stringify(rest, null, 2) : '';
}

export function ProfileEdit({ name }) {
  const creating = name === undefined;
  const loaded = useLoad(() => (creating ? Promise.resolve({ runtime: 'general' }) : api(`/profiles/${encodeURIComponent(name)}`)), [name]);
  const runs = useLoad(() => (creating ? Promise.resolve([]) : api(`/profiles/${encodeURIComponent(name)}/runs?limit=20`)), [name]);
  const action = useAction();
  const remove = () => action.run(async () => {
    if (!confirm(`Delete profile ${name}? Runs already made keep their history.`)) return;
    await api(`/profiles/${encodeURIComponent(name)}`, { method: 'DELETE' });
    navigate('/dashboard/profiles');
  });
  const pin = () => action.run(async () => {
    await api(`/profiles/${encodeURIComponent(name)}/pin`, { method: loaded.data?.pinned ? 'DELETE' : 'POST' });
    loaded.reload();
  });
  return html`<${Page} title=${creating ? 'New profile' : `Profile ${name}`}
      actions=${creating ? null : html`<${Link} class="button" href=${`/dashboard/playground?profile=${encodeURIComponent(name)}`}>Run in playground</${Link}>
        ${loaded.data ? html`<button type="button" class="secondary" onClick=${pin} disabled=${action.busy}>${loaded.data.pinned ? 'Unpin' : 'Pin'}</button>` : null}
        <button type="button" class="danger" onClick=${remove} disabled=${action.busy}>Delete</button>`}>
    <${ErrorNote} error=${loaded.error ?? action.error} />
    ${loaded.data ? html`<${ProfileForm} key=${name ?? 'new'} profile=${loaded.data} creating=${creating} />` : loaded.loading ? html`<${Loading} />` : null}
    ${creating ? null : html`<${Usage} name=${name} /><${History} name=${name} /><h2>Recent runs</h2>${runs.data ? html`<${RunTable} runs=${runs.data} />` : null}`}
  </${Page}>`;
}

function ProfileForm({ profile, creating }) {
  // controlled fields: a re-render (a refusal shown, "Saved.") never puts back what the user had changed
  const [fields, setFields] = useState(() => ({
    name: '',
    runtime: profile.runtime ?? 'general',
    model: profile.model ?? '',
    systemPrompt: profile.systemPrompt ?? '',
    tools: (profile.tools ?? []).join(', '),
    other: others(profile),
  }));
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const bind = (key) => ({ name: key, value: fields[key], onInput: (e) => (setFields((f) => ({ ...f, [key]: e.currentTarget.value })), setSaved(false)) });
  const submit = (e) => {
    e.preventDefault();
    const text = (k) => String(fields[k] ?? '').trim();
    action.run(async () => {
      let rest = {};
      if (text('other')) {
        try {
          rest = JSON.parse(text('other'));
        } catch (err) {
          throw new Error(`Other settings: not JSON (${err.message})`);
        }
      }
      const body = { ...rest, name: creating ? text('name') : profile.name, runtime: text('runtime') };
      if (text('model')) body.model = text('model');
      if (text('systemPrompt')) body.systemPrompt = fields.systemPrompt;
      if (text('tools')) body.tools = text('tools').split(',').map((t) => t.trim()).filter(Boolean);
      const out = creating
        ? await api('/profiles', { method: 'POST', body })
        : await api(`/profiles/${encodeURIComponent(profile.name)}`, { method: 'PUT', body });
      setSaved(true);
      if (creating) navigate(`/dashboard/profiles/${encodeURIComponent(out.name ?? body.name)}`);
    });
  };
  return html`<form class="stack" onSubmit=${submit}>
    ${creating
      ? html`<div class="field"><label for="p-name">Name</label><input id="p-name" ...${bind('name')} required autocomplete="off" aria-describedby="p-name-help" />
          <small id="p-name-help" class="muted">Letters, digits, dot, underscore or hyphen.</small></div>`
      : null}
    <div class="field"><label for="p-runtime">Runtime</label>
      <select id="p-runtime" ...${bind('runtime')} onChange=${bind('runtime').onInput}>${RUNTIMES.map((r) => html`<option value=${r}>${r}</option>`)}</select></div>
    <div class="field"><label for="p-model">Model</label><input id="p-model" ...${bind('model')} autocomplete="off" aria-describedby="p-model-help" />
      <small id="p-model-help" class="muted">general: <code>provider:model</code> (e.g. <code>openai:gpt-4o</code>, <code>demo:echo</code>); runtime_a/b: a bare model id.</small></div>
    <div class="field"><label for="p-system">System prompt</label><textarea id="p-system" ...${bind('systemPrompt')} rows="4"></textarea></div>
    <div class="field"><label for="p-tools">Tools</label><input id="p-tools" ...${bind('tools')} autocomplete="off" aria-describedby="p-tools-help" />
      <small id="p-tools-help" class="muted">Comma-separated (fs_read, fs_write, run_command, …); empty for the runtime's default.</small></div>
    <div class="field"><label for="p-other">Other settings (JSON)</label><textarea id="p-other" ...${bind('other')} rows="5" class="mono" placeholder='{"skills": [], "mcpServers": [], "network": "disabled"}'></textarea></div>
    <div class="row"><button type="submit" disabled=${action.busy}>${creating ? 'Create profile' : 'Save'}</button>
      ${saved && !creating ? html`<span class="ok" role="status">Saved.</span>` : null}</div>
    <${ErrorNote} error=${action.error} />
  </form>`;
}

const WINDOWS = [['24h', 'last 24 hours'], ['7d', 'last 7 days'], ['30d', 'last 30 days'], ['all', 'all time']];

/** The profile's usage (GET /api/profiles/{name}/usage): runs, failures, tokens and cost in a window, by model. */
function Usage({ name }) {
  const [window, setWindow] = useState('30d');
  const usage = useLoad(() => api(`/profiles/${encodeURIComponent(name)}/usage?window=${window}`), [name, window]);
  const u = usage.data;
  return html`<section aria-labelledby="usage-h"><h2 id="usage-h">Usage</h2>
    <label class="inline">Window <select value=${window} onChange=${(e) => setWindow(e.currentTarget.value)}>${WINDOWS.map(([v, l]) => html`<option value=${v}>${l}</option>`)}</select></label>
    <${ErrorNote} error=${usage.error} />
    ${u
      ? html`<div class="cards" data-testid="usage">
          <div class="card"><h3>Runs</h3><p class="big">${fmtNumber(u.runs)}</p><p class="muted">${fmtNumber(u.failedRuns)} failed</p></div>
          <div class="card"><h3>Tokens</h3><p class="big">${fmtNumber(u.tokens.total)}</p><p class="muted">${fmtNumber(u.tokens.input)} in · ${fmtNumber(u.tokens.output)} out</p></div>
          <div class="card"><h3>Cost</h3><p class="big">${fmtUsd(u.costUsd)}</p></div>
        </div>
        ${u.byModel.length
          ? html`<div class="table-wrap"><table><caption class="sr-only">Usage by model</caption>
              <thead><tr><th scope="col">Model</th><th scope="col">Runs</th><th scope="col">Failed</th><th scope="col">Tokens</th><th scope="col">Cost</th></tr></thead>
              <tbody>${u.byModel.map((m) => html`<tr><td><code>${m.model ?? 'default'}</code></td><td>${fmtNumber(m.runs)}</td><td>${fmtNumber(m.failedRuns)}</td><td>${fmtNumber(m.tokens.total)}</td>
                <td>${m.priced ? fmtUsd(m.costMicroUsd / 1e6) : html`<span class="muted">no price known</span>`}</td></tr>`)}</tbody></table></div>`
          : null}`
      : null}
  </section>`;
}

/** The profile's versions (GET /api/profiles/{name}/history), newest first, each with what it changed. */
function History({ name }) {
  const history = useLoad(() => api(`/profiles/${encodeURIComponent(name)}/history?limit=50`), [name]);
  const items = history.data ?? [];
  return html`<section aria-labelledby="history-h"><h2 id="history-h">History</h2>
    <${ErrorNote} error=${history.error} />
    ${history.data && !items.length ? html`<p class="muted">No versions recorded yet.</p>` : null}
    ${items.length
      ? html`<ol class="history">${items.map(
          (v) => html`<li data-version=${v.version}><strong>v${v.version}</strong> <span class="muted">${fmtDate(v.changedAt)}${v.changedBy ? ` by ${v.changedBy}` : ''}</span>
            <ul>${Object.entries(v.changes).map(([field, c]) => html`<li><code>${field}</code>: <span class="from">${short(c.from)}</span> → <span class="to">${short(c.to)}</span></li>`)}</ul></li>`,
        )}</ol>`
      : null}
  </section>`;
}

const short = (v) => {
  const text = v === null || v === undefined ? '—' : json(v);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
};
