// Workflows: the runs, starting one (nodes as JSON, or a saved definition), and a run's DAG drawn as a graph whose node
// colours follow the live plan stream (/api/workflows/runs/{id}/stream: a snapshot, then plan_status events).
import { api, apiPage, ErrorNote, fmtDate, html, Link, Loading, navigate, Page, Status, useAction, useEffect, useLoad, useState } from './lib.js';

const EXAMPLE = JSON.stringify(
  [
    { id: 'research', profile: 'helper', prompt: 'Collect the facts' },
    { id: 'write', profile: 'helper', prompt: 'Write it up', dependsOn: ['research'] },
  ],
  null,
  2,
);

export function Workflows() {
  const runs = useLoad(() => apiPage('/workflows/runs?limit=50'), []);
  const defs = useLoad(() => apiPage('/workflows/definitions?limit=200'), []);
  const [nodes, setNodes] = useState(EXAMPLE);
  const [name, setName] = useState('');
  const [definitionId, setDefinitionId] = useState('');
  const action = useAction();
  const start = (e) => {
    e.preventDefault();
    action.run(async () => {
      const body = { ...(name.trim() ? { name: name.trim() } : {}) };
      if (definitionId) body.definitionId = definitionId;
      else {
        try {
          body.nodes = JSON.parse(nodes);
        } catch (err) {
          throw new Error(`Nodes: not JSON (${err.message})`);
        }
      }
      const out = await api('/workflows/runs', { method: 'POST', body });
      navigate(`/dashboard/workflows/${encodeURIComponent(out.workflowRun.id)}`);
    });
  };
  const items = runs.data?.items ?? [];
  return html`<${Page} title="Workflows">
    <${ErrorNote} error=${runs.error} />
    ${runs.loading && !runs.data ? html`<${Loading} />` : null}
    ${runs.data && !items.length ? html`<p class="muted">No workflow runs yet.</p>` : null}
    ${items.length
      ? html`<div class="table-wrap"><table>
          <thead><tr><th scope="col">Workflow run</th><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Finished</th></tr></thead>
          <tbody>${items.map(
            (w) => html`<tr data-workflow=${w.id}><td><${Link} href=${`/dashboard/workflows/${encodeURIComponent(w.id)}`}><code>${w.id}</code></${Link}></td>
              <td>${w.name}</td><td><${Status} status=${w.statusLabel} /></td><td>${fmtDate(w.createdAt)}</td><td>${fmtDate(w.finishedAt)}</td></tr>`,
          )}</tbody></table></div>`
      : null}
    <h2>Start a workflow</h2>
    <form class="stack" onSubmit=${start}>
      <div class="field"><label for="wf-name">Name</label><input id="wf-name" value=${name} onInput=${(e) => setName(e.currentTarget.value)} autocomplete="off" placeholder="optional" /></div>
      ${defs.data?.items?.length
        ? html`<div class="field"><label for="wf-def">Saved definition</label>
            <select id="wf-def" value=${definitionId} onChange=${(e) => setDefinitionId(e.currentTarget.value)}>
              <option value="">none: the nodes below</option>${defs.data.items.map((d) => html`<option value=${d.id}>${d.name}</option>`)}
            </select></div>`
        : null}
      ${definitionId
        ? null
        : html`<div class="field"><label for="wf-nodes">Nodes (JSON: id, profile, prompt, dependsOn, onError)</label>
            <textarea id="wf-nodes" class="mono" rows="10" value=${nodes} onInput=${(e) => setNodes(e.currentTarget.value)}></textarea></div>`}
      <div class="row"><button type="submit" disabled=${action.busy}>Start workflow</button></div>
      <${ErrorNote} error=${action.error} />
    </form>
  </${Page}>`;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** Follows the plan stream: the latest snapshot of the workflow run. */
function usePlan(id) {
  const [state, setState] = useState({ run: undefined, ended: false, error: undefined });
  useEffect(() => {
    setState({ run: undefined, ended: false, error: undefined });
    const source = new EventSource(`/api/workflows/runs/${encodeURIComponent(id)}/stream`);
    let ended = false;
    const onFrame = (message) => {
      const { workflowRun } = JSON.parse(message.data);
      ended = TERMINAL.has(workflowRun.statusLabel);
      if (ended) source.close();
      setState({ run: workflowRun, ended, error: undefined });
    };
    source.addEventListener('snapshot', onFrame);
    source.addEventListener('plan_status', onFrame);
    source.onerror = () => {
      if (ended) source.close();
      else if (source.readyState === EventSource.CLOSED) setState((s) => ({ ...s, error: 'the plan stream was refused or closed' }));
    };
    return () => source.close();
  }, [id]);
  return state;
}

/** Layers by longest path from the roots; positions within a layer in the order given. */
function layout(nodes) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depth = new Map();
  const depthOf = (n, seen = new Set()) => {
    if (depth.has(n.id)) return depth.get(n.id);
    if (seen.has(n.id)) return 0;
    seen.add(n.id);
    const d = Math.max(-1, ...n.dependsOn.map((p) => (byId.has(p) ? depthOf(byId.get(p), seen) : -1))) + 1;
    depth.set(n.id, d);
    return d;
  };
  const layers = [];
  for (const n of nodes) (layers[depthOf(n)] ??= []).push(n);
  const W = 170, H = 56, GX = 60, GY = 28;
  const pos = new Map();
  layers.forEach((layer, x) => layer.forEach((n, y) => pos.set(n.id, { x: 16 + x * (W + GX), y: 16 + y * (H + GY) })));
  const width = 32 + layers.length * (W + GX) - GX;
  const height = 32 + Math.max(...layers.map((l) => l.length)) * (H + GY) - GY;
  return { pos, W, H, width, height };
}

function Graph({ run }) {
  const { pos, W, H, width, height } = layout(run.nodes);
  const label = `Workflow graph: ${run.nodes.map((n) => `${n.id} ${n.statusLabel}`).join(', ')}`;
  return html`<div class="graph-wrap"><svg class="dag" role="img" aria-label=${label} viewBox=${`0 0 ${width} ${height}`} width=${width} height=${height}>
    <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#8792a2" /></marker></defs>
    ${run.nodes.flatMap((n) =>
      n.dependsOn.filter((p) => pos.has(p)).map((p) => {
        const a = pos.get(p), b = pos.get(n.id);
        const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
        return html`<path class="edge" d=${`M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2} ${y2}`} marker-end="url(#arrow)" />`;
      }),
    )}
    ${run.nodes.map((n) => {
      const p = pos.get(n.id);
      return html`<g class=${`node node-${n.statusLabel}`} data-node=${n.id} data-status=${n.statusLabel} transform=${`translate(${p.x} ${p.y})`}>
        <rect width=${W} height=${H} rx="8" />
        <text x="12" y="22" class="node-id">${n.id}</text>
        <text x="12" y="42" class="node-status">${n.statusLabel} · ${n.profile}</text>
      </g>`;
    })}
  </svg></div>`;
}

export function WorkflowDetail({ id }) {
  const plan = usePlan(id);
  const action = useAction();
  const run = plan.run;
  const cancel = () => action.run(async () => {
    if (!confirm('Cancel this workflow run and the runs of its nodes?')) return;
    await api(`/workflows/runs/${encodeURIComponent(id)}/cancel`, { method: 'POST' });
  });
  return html`<${Page} title=${run?.name ? `Workflow ${run.name}` : `Workflow ${id}`}
      actions=${html`<button type="button" class="danger" onClick=${cancel} disabled=${action.busy || !run || plan.ended}>Cancel workflow</button>`}>
    <${ErrorNote} error=${action.error} />
    ${plan.error ? html`<p class="error" role="alert">${plan.error}</p>` : null}
    ${run
      ? html`<dl class="facts"><dt>Status</dt><dd><${Status} status=${run.statusLabel} /></dd><dt>Started</dt><dd>${fmtDate(run.startedAt)}</dd><dt>Finished</dt><dd>${fmtDate(run.finishedAt)}</dd></dl>
        <${Graph} run=${run} />
        <p class="legend muted">${['pending', 'ready', 'running', 'ok', 'error', 'skipped', 'cancelled'].map((s) => html`<span class=${`swatch node-${s}`}>${s}</span> `)}</p>
        <div class="table-wrap"><table>
          <thead><tr><th scope="col">Node</th><th scope="col">Status</th><th scope="col">Depends on</th><th scope="col">Run</th><th scope="col">Output or error</th></tr></thead>
          <tbody>${run.nodes.map(
            (n) => html`<tr data-node=${n.id}><td><code>${n.id}</code></td><td><${Status} status=${n.statusLabel} /></td><td>${n.dependsOn.join(', ') || '—'}</td>
              <td>${n.runId ? html`<${Link} href=${`/dashboard/runs/${encodeURIComponent(n.runId)}`}><code>${n.runId}</code></${Link}>` : '—'}</td>
              <td class="prompt">${n.error ?? n.output ?? ''}</td></tr>`,
          )}</tbody></table></div>`
      : html`<${Loading} />`}
  </${Page}>`;
}
