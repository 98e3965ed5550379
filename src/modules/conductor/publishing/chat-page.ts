import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';

/**
 * `GET /chat/{slug}` of a public agent: one self-contained page (no CDN, no external asset: it works offline) that
 * posts to `/chat/{slug}` with `"stream": true` and writes the `delta` frames into the reply as they arrive, keeping
 * the conversation id for the next turn. Scripts run only by nonce; the page talks only to its own origin.
 */
const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

const STYLE = `
  body { font: 15px/1.5 system-ui, sans-serif; background: #f6f7f9; color: #1d2330; margin: 0; }
  main { max-width: 680px; margin: 4vh auto; box-sizing: border-box; background: #fff; border: 1px solid #dde1e7; border-radius: 10px; padding: 20px 24px; }
  h1 { font-size: 18px; margin: 0 0 12px; }
  #log { min-height: 200px; max-height: 60vh; overflow-y: auto; }
  .msg { white-space: pre-wrap; padding: 8px 12px; border-radius: 8px; margin: 8px 0; }
  .user { background: #e8eefc; margin-left: 15%; } .assistant { background: #f1f3f5; margin-right: 15%; } .error { color: #b3261e; }
  .note { color: #5b6472; font-style: italic; margin-right: 15%; }
  form { display: flex; gap: 8px; margin-top: 12px; }
  textarea { flex: 1; font: inherit; padding: 8px 10px; border: 1px solid #c4cad3; border-radius: 6px; resize: vertical; }
  button { font: inherit; padding: 8px 16px; border-radius: 6px; border: 1px solid #2456d6; background: #2456d6; color: #fff; cursor: pointer; }
`;

const SCRIPT = `
const slug = document.body.dataset.slug;
const log = document.getElementById('log');
const form = document.getElementById('chat');
const input = document.getElementById('message');
let conversationId;
function bubble(role, text) {
  const div = document.createElement('div');
  div.className = 'msg ' + role;
  div.textContent = text;
  log.appendChild(div);
  log.scrollTop = log.scrollHeight;
  return div;
}
// Enter sends, Shift+Enter starts a new line (a composing input method keeps its Enter)
input.addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    form.requestSubmit();
  }
});
form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const message = input.value.trim();
  if (!message) return;
  input.value = '';
  bubble('user', message);
  const reply = bubble('assistant', '');
  let note;
  reply.setAttribute('aria-busy', 'true');
  try {
    const res = await fetch('/chat/' + encodeURIComponent(slug), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(conversationId ? { message, conversationId, stream: true } : { message, stream: true }),
    });
    if (!res.ok) throw new Error((await res.json().catch(() => ({}))).error || 'HTTP ' + res.status);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let i;
      while ((i = buf.indexOf('\\n\\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const event = (/^event: (.*)$/m.exec(block) || [])[1];
        const data = block.split('\\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\\n');
        if (!event || !data) continue;
        const d = JSON.parse(data);
        if (event === 'conversation') conversationId = d.conversationId;
        else if (event === 'delta') reply.textContent += d.text;
        else if (event === 'waiting') { reply.dataset.waiting = 'true'; note = bubble('note', d.message + '…'); reply.before(note); }
        else if (event === 'resumed') { delete reply.dataset.waiting; if (note) note.textContent = d.decision === 'approve' ? 'Approved: the agent goes on.' : 'Not approved: the agent goes on without it.'; }
        else if (event === 'done') { if (!reply.textContent) reply.textContent = d.reply; reply.dataset.done = 'true'; }
        else if (event === 'error') { reply.classList.add('error'); reply.textContent += (reply.textContent ? '\\n' : '') + d.error; reply.dataset.done = 'true'; }
      }
    }
  } catch (err) {
    reply.classList.add('error');
    reply.textContent = String(err.message || err);
    reply.dataset.done = 'true';
  } finally {
    reply.removeAttribute('aria-busy');
  }
});
`;

function headers(c: Context, nonce: string): void {
  c.header(
    'Content-Security-Policy',
    ["default-src 'none'", "style-src 'unsafe-inline'", `script-src 'nonce-${nonce}'`, "connect-src 'self'", "form-action 'none'", "base-uri 'none'"].join('; '),
  );
  c.header('Referrer-Policy', 'same-origin');
  c.header('Cache-Control', 'no-store');
  c.header('X-Content-Type-Options', 'nosniff');
}

export function chatPage(c: Context, slug: string, title: string): Response {
  const nonce = randomBytes(16).toString('base64');
  headers(c, nonce);
  return c.html(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>${STYLE}</style></head><body data-slug="${esc(slug)}"><main><h1>${esc(title)}</h1>
<div id="log" role="log" aria-live="polite"></div>
<form id="chat"><textarea id="message" rows="2" placeholder="Message (Enter sends, Shift+Enter for a new line)" aria-label="Message"></textarea><button type="submit">Send</button></form>
</main><script nonce="${nonce}">${SCRIPT}</script></body></html>`);
}

/**
 * The page at a published agent that is not public: it exists, but a page cannot keep the agent key it needs, so the
 * page says that (403) and how to reach the agent instead of claiming no agent is there.
 */
export function privateAgentPage(c: Context, slug: string, visibility: string): Response {
  headers(c, randomBytes(16).toString('base64'));
  const endpoint = `/chat/${slug}`;
  return c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(slug)}: not public</title><style>${STYLE}</style></head><body><main><h1>${esc(slug)} is not public</h1>
<p>This agent is published with visibility <strong>${esc(visibility)}</strong>: it answers callers with an agent key, and only public agents have a chat page.</p>
<p>Call it with a key: <code>POST ${esc(endpoint)}</code> with <code>Authorization: Bearer pk_…</code> (its owner makes one with <code>svc agent-keys create</code>), or ask its owner to make it public.</p>
</main></body></html>`,
    403,
  );
}
