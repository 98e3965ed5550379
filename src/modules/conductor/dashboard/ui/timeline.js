// A run's event timeline, streamed live over SSE from /api/runs/{id}/stream: assistant text grows as its deltas
// arrive, tool calls show their input and then their output, usage and the one terminal event close it.
import { fmtNumber, fmtTime, html, json, useEffect, useState } from './lib.js';

/** Folds RunEvents into what the timeline shows. */
export function fold(items, event) {
  const last = items[items.length - 1];
  switch (event.type) {
    case 'assistant':
      if (last?.kind === 'text' && last.streaming) {
        const text = event.delta ? last.text + (event.message ?? '') : (event.message ?? last.text);
        return [...items.slice(0, -1), { ...last, text, streaming: Boolean(event.delta) }];
      }
      return [...items, { kind: 'text', text: event.message ?? '', streaming: Boolean(event.delta), ts: event.ts }];
    case 'tool_call':
      return [...items, { kind: 'tool', id: event.toolCallId, name: event.toolName, input: event.input, ts: event.ts }];
    case 'tool_result': {
      const i = items.findLastIndex((it) => it.kind === 'tool' && it.id === event.toolCallId && !('output' in it));
      if (i < 0) return [...items, { kind: 'tool', id: event.toolCallId, name: event.toolName, output: event.output, isError: event.isError, ts: event.ts }];
      return items.map((it, j) => (j === i ? { ...it, output: event.output, isError: Boolean(event.isError) } : it));
    }
    case 'approval_required':
      return [...items, { kind: 'approval', id: event.approvalId, name: event.toolName, ts: event.ts }];
    case 'approval_decided': {
      const decided = { decision: event.decision, reason: event.reason, message: event.message };
      const i = items.findLastIndex((it) => it.kind === 'approval' && it.id === event.approvalId);
      if (i < 0) return [...items, { kind: 'approval', id: event.approvalId, name: event.toolName, ts: event.ts, ...decided }];
      return items.map((it, j) => (j === i ? { ...it, ...decided } : it));
    }
    case 'usage':
      return [...items, { kind: 'usage', usage: event.usage, ts: event.ts }];
    case 'result':
      return [...items, { kind: 'result', text: event.message ?? '', ts: event.ts }];
    case 'error':
      return [...items, { kind: 'error', text: event.message ?? 'error', ts: event.ts }];
    default:
      return [...items, { kind: 'note', type: event.type, text: event.message ?? '', ts: event.ts }];
  }
}

/** Follows a run's stream until its terminal event; `onEnd(event)` is told once. */
export function useRunStream(runId, onEnd) {
  const [state, setState] = useState({ items: [], ended: false, error: undefined });
  useEffect(() => {
    if (!runId) return undefined;
    setState({ items: [], ended: false, error: undefined });
    const source = new EventSource(`/api/runs/${encodeURIComponent(runId)}/stream`);
    let ended = false;
    source.onmessage = (message) => {
      const event = JSON.parse(message.data);
      const terminal = event.type === 'result' || event.type === 'error';
      if (terminal) {
        ended = true;
        source.close();
      }
      setState((s) => ({ ...s, items: fold(s.items, event), ended: s.ended || terminal }));
      if (terminal) onEnd?.(event);
    };
    source.onerror = () => {
      // The server ends the stream after the terminal event; anything else is a lost connection EventSource retries.
      if (ended) source.close();
      else if (source.readyState === EventSource.CLOSED) setState((s) => ({ ...s, error: 'the server refused or closed it' }));
    };
    return () => source.close();
  }, [runId]);
  return state;
}

function Usage({ usage }) {
  if (!usage) return null;
  return html`<span>${fmtNumber(usage.inputTokens)} in · ${fmtNumber(usage.outputTokens)} out${usage.cacheReadTokens ? ` · ${fmtNumber(usage.cacheReadTokens)} cached` : ''}</span>`;
}

export function Timeline({ items, ended }) {
  return html`<ol class="timeline" aria-live="polite" aria-busy=${ended ? 'false' : 'true'} data-ended=${ended ? 'true' : 'false'}>
    ${items.map(
      (it) => html`<li class=${`ev ev-${it.kind}`} data-kind=${it.kind}>
        <span class="ev-time">${fmtTime(it.ts)}</span>
        ${it.kind === 'text'
          ? html`<div class="ev-body"><span class="ev-label">assistant</span><p class="assistant-text" data-streaming=${it.streaming ? 'true' : 'false'}>${it.text}</p></div>`
          : it.kind === 'tool'
            ? html`<div class="ev-body"><span class="ev-label">tool call <code class="tool-name">${it.name}</code></span>
                <details open><summary>input</summary><pre class="tool-input">${json(it.input)}</pre></details>
                ${'output' in it
                  ? html`<details open><summary>${it.isError ? 'error' : 'output'}</summary><pre class=${`tool-output${it.isError ? ' error' : ''}`}>${json(it.output)}</pre></details>`
                  : html`<p class="muted">running…</p>`}</div>`
            : it.kind === 'approval'
              ? html`<div class="ev-body"><span class="ev-label">approval <code class="tool-name">${it.name}</code></span>
                  <span class="approval-state">${!it.decision ? 'waits for a decision' : it.decision === 'approve' ? 'approved' : it.reason === 'expired' ? 'expired' : 'denied'}${it.message ? `: ${it.message}` : ''}</span></div>`
            : it.kind === 'usage'
              ? html`<div class="ev-body"><span class="ev-label">usage</span> <${Usage} usage=${it.usage} /></div>`
              : it.kind === 'result'
                ? html`<div class="ev-body"><span class="ev-label">result</span><p class="result-text">${it.text}</p></div>`
                : it.kind === 'error'
                  ? html`<div class="ev-body"><span class="ev-label">error</span><p class="error">${it.text}</p></div>`
                  : html`<div class="ev-body"><span class="ev-label">${it.type}</span> <span class="muted">${it.text}</span></div>`}
      </li>`,
    )}
    ${ended ? null : html`<li class="ev ev-waiting muted">streaming…</li>`}
  </ol>`;
}
