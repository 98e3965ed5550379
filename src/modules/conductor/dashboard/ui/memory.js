// Memory stores: the list, and one store's entries (per end user for a per_user store), search, an entry's editor and
// its history with restore, and the store's recent changes.
import { api, ErrorNote, fmtDate, fmtNumber, html, Link, Loading, Page, useAction, useLoad, useState } from './lib.js';

const enc = encodeURIComponent;
const entryPath = (store, path) => `/memory-stores/${enc(store)}/entries/${path.replace(/^\/+/, '').split('/').map(enc).join('/')}`;
const withUser = (path, user) => (user ? `${path}${path.includes('?') ? '&' : '?'}userId=${enc(user)}` : path);

export function MemoryStores() {
  const list = useLoad(() => api('/memory-stores'), []);
  const action = useAction();
  const create = (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    action.run(async () => {
      await api('/memory-stores', { method: 'POST', body: { name: f.get('name'), description: f.get('description'), scope: f.get('perUser') ? 'per_user' : 'shared' } });
      form.reset();
      list.reload();
    });
  };
  const rows = list.data ?? [];
  return html`<${Page} title="Memory">
    <p class="muted">What agents remember across sessions. A profile mounts a store (<code>memoryStores</code>); its agent reads and writes it as files under <code>/memories/&lt;store&gt;/</code>.</p>
    <${ErrorNote} error=${list.error} />
    ${list.loading && !list.data ? html`<${Loading} />` : null}
    ${list.data && !rows.length ? html`<p class="muted">No memory stores yet.</p>` : null}
    ${rows.length
      ? html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">Store</th><th scope="col">Scope</th><th scope="col">Entries</th><th scope="col">Bytes</th><th scope="col">Description</th></tr></thead>
          <tbody>${rows.map(
            (s) => html`<tr><td><${Link} href=${`/dashboard/memory/${enc(s.name)}`}>${s.name}</${Link}></td><td>${s.scope === 'per_user' ? 'per user' : 'shared'}</td>
              <td>${fmtNumber(s.usage.entries)}</td><td>${fmtNumber(s.usage.bytes)}</td><td>${s.description}</td></tr>`,
          )}</tbody></table></div>`
      : null}
    <h2>New store</h2>
    <form class="stack" onSubmit=${create}>
      <div class="grid2">
        <div class="field"><label for="m-name">Name</label><input id="m-name" name="name" required autocomplete="off" /></div>
        <div class="field"><label for="m-description">Description (the agent reads it)</label><input id="m-description" name="description" autocomplete="off" /></div>
      </div>
      <div class="row"><input type="checkbox" id="m-per-user" name="perUser" /><label for="m-per-user">One memory per end user</label></div>
      <div class="row"><button type="submit" disabled=${action.busy}>Create store</button></div>
      <${ErrorNote} error=${action.error} />
    </form>
  </${Page}>`;
}

export function MemoryStore({ name }) {
  const store = useLoad(() => api(`/memory-stores/${enc(name)}`), [name]);
  const perUser = store.data?.scope === 'per_user';
  const users = useLoad(() => (perUser ? api(`/memory-stores/${enc(name)}/users?limit=200`) : Promise.resolve([])), [name, perUser]);
  const [user, setUser] = useState('');
  const s = store.data;
  return html`<${Page} title=${`Memory store ${name}`}>
    <${ErrorNote} error=${store.error} />
    ${s
      ? html`<dl class="facts"><dt>Scope</dt><dd>${perUser ? 'one memory per end user' : 'shared'}</dd><dt>Description</dt><dd>${s.description || '—'}</dd>
          <dt>Limits</dt><dd>${fmtNumber(s.limits.maxEntries)} entries, ${fmtNumber(s.limits.maxEntryBytes)} bytes each, ${fmtNumber(s.limits.maxTotalBytes)} bytes in all${perUser ? ' (per end user)' : ''}</dd>
          <dt>Holds</dt><dd>${fmtNumber(s.usage.entries)} entries, ${fmtNumber(s.usage.bytes)} bytes</dd></dl>`
      : store.loading ? html`<${Loading} />` : null}
    ${perUser
      ? html`<div class="field"><label for="m-user">End user</label>
          <input id="m-user" list="m-users" value=${user} onChange=${(e) => setUser(e.currentTarget.value.trim())} autocomplete="off" placeholder="an end-user id" />
          <datalist id="m-users">${(users.data ?? []).map((u) => html`<option value=${u.userId}>${u.entries} entries</option>`)}</datalist></div>`
      : null}
    ${s && (!perUser || user) ? html`<${Partition} key=${user} name=${name} user=${perUser ? user : undefined} onChange=${store.reload} />` : null}
    ${perUser && !user ? html`<p class="muted">Choose an end user to see their memory.</p>` : null}
  </${Page}>`;
}

function Partition({ name, user, onChange }) {
  const entries = useLoad(() => api(withUser(`/memory-stores/${enc(name)}/entries?limit=1000`, user)), [name, user]);
  const changes = useLoad(() => api(withUser(`/memory-stores/${enc(name)}/versions?limit=20`, user)), [name, user]);
  const [open, setOpen] = useState(undefined);
  const [query, setQuery] = useState('');
  const hits = useLoad(() => (query ? api(withUser(`/memory-stores/${enc(name)}/search?q=${enc(query)}`, user)) : Promise.resolve(undefined)), [name, user, query]);
  const action = useAction();
  const reload = () => {
    entries.reload();
    changes.reload();
    onChange();
  };
  const add = (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    action.run(async () => {
      const path = String(f.get('path'));
      await api(entryPath(name, path), { method: 'PUT', body: { content: f.get('content'), expectedVersion: 0, ...(user ? { userId: user } : {}) } });
      form.reset();
      reload();
      setOpen(path.startsWith('/') ? path : `/${path}`);
    });
  };
  return html`
    <h2>Entries</h2>
    <${ErrorNote} error=${entries.error} />
    ${entries.data && !entries.data.length ? html`<p class="muted">Nothing remembered yet.</p>` : null}
    ${entries.data?.length
      ? html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">Path</th><th scope="col">Bytes</th><th scope="col">Version</th><th scope="col">Updated</th></tr></thead>
          <tbody>${entries.data.map(
            (e) => html`<tr><td><button type="button" class="link" onClick=${() => setOpen(e.path)}>${e.path}</button></td><td>${fmtNumber(e.bytes)}</td><td>${e.version}</td><td>${fmtDate(e.updatedAt)}</td></tr>`,
          )}</tbody></table></div>`
      : null}
    ${open ? html`<${EntryEditor} key=${open} name=${name} user=${user} path=${open} onChange=${reload} onClose=${() => setOpen(undefined)} />` : null}
    <h2>Search</h2>
    <form class="row" onSubmit=${(e) => { e.preventDefault(); setQuery(new FormData(e.currentTarget).get('q').trim()); }}>
      <label for="m-q" class="sr-only">Search words</label><input id="m-q" name="q" placeholder="words, &quot;a phrase&quot;, -not" autocomplete="off" />
      <button type="submit">Search</button>
    </form>
    <${ErrorNote} error=${hits.error} />
    ${hits.data ? (hits.data.length
      ? html`<ul class="hits">${hits.data.map((h) => html`<li><button type="button" class="link" onClick=${() => setOpen(h.path)}>${h.path}</button> <span class="muted">${h.snippet}</span></li>`)}</ul>`
      : html`<p class="muted">No entry matches.</p>`) : null}
    <h2>New entry</h2>
    <form class="stack" onSubmit=${add}>
      <div class="field"><label for="m-path">Path</label><input id="m-path" name="path" required placeholder="/customers/acme.md" autocomplete="off" /></div>
      <div class="field"><label for="m-content">Content</label><textarea id="m-content" name="content" rows="4"></textarea></div>
      <div class="row"><button type="submit" disabled=${action.busy}>Add entry</button></div>
      <${ErrorNote} error=${action.error} />
    </form>
    <h2>Recent changes</h2>
    ${changes.data ? html`<${Versions} versions=${changes.data} />` : null}`;
}

function EntryEditor({ name, user, path, onChange, onClose }) {
  const entry = useLoad(() => api(withUser(entryPath(name, path), user)), [name, user, path]);
  const history = useLoad(() => api(withUser(`/memory-stores/${enc(name)}/versions?path=${enc(path)}`, user)), [name, user, path]);
  const [text, setText] = useState(undefined);
  const action = useAction();
  const done = () => {
    setText(undefined);
    entry.reload();
    history.reload();
    onChange();
  };
  const body = (extra) => ({ ...extra, ...(user ? { userId: user } : {}) });
  const save = (e) => {
    e.preventDefault();
    // based on the version shown: a change made meanwhile elsewhere is refused (409), not overwritten
    action.run(async () => {
      await api(entryPath(name, path), { method: 'PUT', body: body({ content: text ?? entry.data.content, expectedVersion: entry.data.version }) });
      done();
    });
  };
  const remove = () => action.run(async () => {
    await api(withUser(`${entryPath(name, path)}?expectedVersion=${entry.data.version}`, user), { method: 'DELETE' });
    onChange();
    onClose();
  });
  const restore = (id) => action.run(async () => {
    await api(`/memory-stores/${enc(name)}/versions/${enc(id)}/restore`, { method: 'POST', body: body({}) });
    done();
  });
  return html`<section class="card" aria-label=${`Entry ${path}`}>
    <h3>${path}</h3>
    <${ErrorNote} error=${entry.error ?? action.error} />
    ${entry.data
      ? html`<form class="stack" onSubmit=${save}>
          <div class="field"><label for="m-edit">Content (version ${entry.data.version})</label>
          <textarea id="m-edit" rows="8" value=${text ?? entry.data.content} onInput=${(e) => setText(e.currentTarget.value)}></textarea></div>
          <div class="row"><button type="submit" disabled=${action.busy}>Save entry</button>
            <button type="button" class="secondary" onClick=${remove} disabled=${action.busy}>Delete entry</button>
            <button type="button" class="secondary" onClick=${onClose}>Close</button></div></form>`
      : null}
    <h3>History</h3>
    ${history.data ? html`<${Versions} versions=${history.data} onRestore=${restore} busy=${action.busy} />` : null}
  </section>`;
}

function Versions({ versions, onRestore, busy }) {
  if (!versions.length) return html`<p class="muted">No changes yet.</p>`;
  return html`<div class="table-wrap"><table>
    <thead><tr><th scope="col">When</th><th scope="col">Path</th><th scope="col">Version</th><th scope="col">Change</th><th scope="col">By</th>${onRestore ? html`<th scope="col"><span class="sr-only">Restore</span></th>` : null}</tr></thead>
    <tbody>${versions.map(
      (v, i) => html`<tr><td>${fmtDate(v.createdAt)}</td><td>${v.path}</td><td>${v.version}</td><td>${v.operation}</td><td><code>${v.actor}</code></td>
        ${onRestore ? html`<td>${i > 0 && v.operation !== 'deleted' ? html`<button type="button" class="secondary" disabled=${busy} onClick=${() => onRestore(v.id)} aria-label=${`Restore version ${v.version}`}>Restore</button>` : null}</td>` : null}</tr>`,
    )}</tbody></table></div>`;
}
