// The playground: pick a profile, send a prompt, watch the run stream; the next prompt continues the same session.
import { api, ErrorNote, html, Link, Loading, Page, useAction, useLoad, useState } from './lib.js';
import { Timeline, useRunStream } from './timeline.js';

/** A prompt box that starts a run (in `sessionId` when given) and streams it below. */
export function Conversation({ profile, sessionId: initialSession, onSession }) {
  const [prompt, setPrompt] = useState('');
  const [turns, setTurns] = useState([]);
  const [sessionId, setSessionId] = useState(initialSession);
  const [running, setRunning] = useState(false);
  const action = useAction();
  const send = (e) => {
    e.preventDefault();
    if (!prompt.trim() || !profile) return;
    action.run(async () => {
      const started = await api('/runs', { method: 'POST', body: { profile, prompt, ...(sessionId ? { sessionId } : {}) } });
      setTurns((t) => [...t, { prompt, runId: started.runId }]);
      setSessionId(started.sessionId);
      onSession?.(started.sessionId);
      setPrompt('');
      setRunning(true);
    });
  };
  const onKey = (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send(e);
  };
  return html`<div class="conversation">
    ${turns.map((t, i) => html`<${Turn} key=${t.runId} turn=${t} onEnd=${i === turns.length - 1 ? () => setRunning(false) : undefined} />`)}
    <form class="prompt-form" onSubmit=${send}>
      <label for="prompt">Prompt</label>
      <textarea id="prompt" name="prompt" rows="4" value=${prompt} onInput=${(e) => setPrompt(e.currentTarget.value)} onKeyDown=${onKey}
        placeholder="Ask the agent something (Ctrl+Enter sends)" required></textarea>
      <div class="row">
        <button type="submit" disabled=${action.busy || running || !profile}>${turns.length ? 'Send' : 'Run'}</button>
        ${sessionId ? html`<span class="muted">Session <${Link} href=${`/dashboard/sessions/${encodeURIComponent(sessionId)}`}><code>${sessionId}</code></${Link}></span>` : null}
        ${sessionId && !initialSession ? html`<button type="button" class="secondary" onClick=${() => { setSessionId(undefined); setTurns([]); }}>New session</button>` : null}
      </div>
      <${ErrorNote} error=${action.error} />
    </form>
  </div>`;
}

function Turn({ turn, onEnd }) {
  const stream = useRunStream(turn.runId, onEnd);
  return html`<article class="turn" data-run=${turn.runId}>
    <p class="user-prompt"><span class="ev-label">you</span> ${turn.prompt}</p>
    <${Timeline} items=${stream.items} ended=${stream.ended} />
    <p class="muted"><${Link} href=${`/dashboard/runs/${encodeURIComponent(turn.runId)}`}>Open run ${turn.runId}</${Link}></p>
  </article>`;
}

export function Playground() {
  const profiles = useLoad(() => api('/profiles'), []);
  const [profile, setProfile] = useState(() => new URLSearchParams(location.search).get('profile') ?? '');
  const list = profiles.data ?? [];
  const chosen = profile || list[0]?.name || '';
  return html`<${Page} title="Playground">
    <${ErrorNote} error=${profiles.error} />
    ${profiles.loading && !profiles.data ? html`<${Loading} />` : null}
    ${profiles.data && !list.length ? html`<p>No profiles yet. <${Link} href="/dashboard/profiles/new">Create one</${Link}> to run it here.</p>` : null}
    ${list.length
      ? html`<div class="field"><label for="profile">Profile</label>
          <select id="profile" name="profile" value=${chosen} onChange=${(e) => setProfile(e.currentTarget.value)}>
            ${list.map((p) => html`<option value=${p.name}>${p.name} (${p.runtime}${p.model ? ` · ${p.model}` : ''})</option>`)}
          </select></div>
          <${Conversation} key=${chosen} profile=${chosen} />`
      : null}
  </${Page}>`;
}
