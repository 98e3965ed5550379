import { doc } from '../../../shared/route-doc.ts';
import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import type { RunEvent, Usage } from '../../../contracts/run-event.ts';
import { readJson } from '../../../shared/http.ts';
import { sseResponse, type SseFrame } from '../../../shared/sse.ts';
import { CLIENT_ID_PATTERN } from '../../../shared/ids.ts';
import type { AgentKeyDeps } from './agent-keys.service.ts';
import { admit } from './gateway.auth.ts';
import type { FeatureDeps } from '../feature.ts';
import { chatPage, privateAgentPage } from './chat-page.ts';
import { addUsage, cancelTurn, endUserOf, NO_USAGE, findAgent, readConversation, startTurn, waitingAnswer, waitingMessage, type ChatTurn, type GatewayDeps } from './gateway.service.ts';
import { grantCors, preflight } from './cors.ts';
import { ChatReply, ChatWaiting, ConversationView } from './publishing.schema.ts';

/**
 * The chat gateway, mounted at the root by the conductor: `POST /chat/{slug}` with `{message, conversationId?}`.
 * JSON answers `{conversationId, reply, usage}` once the run ends, or 504 `{error, conversationId, runId}` (run
 * cancelled) after the agent's `syncMaxDurationSeconds`, or 202 `{status: "waiting", …, conversationUrl}` at once when the
 * run waits for the owner's approval (the run goes on; its reply lands in the conversation). With `Accept: text/event-stream` or `"stream": true` it
 * streams SSE: `conversation`, `delta` (text), `tool_call`/`tool_result` only when the agent exposes tool events,
 * `waiting`/`resumed` while a call waits for the owner's approval (`approvals: "owner"`), then exactly one `done` or
 * `error`. `GET /chat/{slug}/conversations/{id}` answers the messages so far. Only an agent key of the agent opens it (`Authorization: Bearer pk_…`).
 */
const ChatBody = v.object({
  message: v.pipe(v.string(), v.minLength(1, 'message: must not be empty'), v.maxLength(100_000)),
  conversationId: v.optional(v.pipe(v.string(), v.regex(CLIENT_ID_PATTERN, 'conversationId: an id from an earlier reply'))),
  stream: v.optional(v.boolean()),
  /** With an agent key: the end user the turn is for (per_user memory); verified end users and anonymous callers ignore it. */
  user: v.optional(v.pipe(v.string(), v.minLength(1, 'user: a non-empty string'), v.maxLength(256, 'user: at most 256 characters'))),
});

const wantsStream = (c: Context, body: { stream?: boolean }) => body.stream === true || (c.req.header('accept') ?? '').includes('text/event-stream');

export function gatewayRoutes(deps: GatewayDeps & AgentKeyDeps & { authenticate: FeatureDeps['authenticate'] }): Hono {
  return new Hono()
    // the chat page, for public agents only (the others need a credential a page could not keep secret)
    .get('/chat/:slug', doc({ summary: 'Open a published agent\'s chat page', description: 'A web page to chat with a public agent; for a private or org agent, a page saying how to reach it. No credential needed.', responds: 'text/html' }), async (c) => {
      const agent = await findAgent(deps, c.req.param('slug'));
      if (agent.visibility !== 'public') return privateAgentPage(c, agent.slug, agent.visibility);
      return chatPage(c, agent.slug, agent.profile_name);
    })
    .get('/chat/:slug/conversations/:conversationId', doc({ summary: 'Read a conversation', description: 'The messages so far of a conversation with the agent, for the caller that holds it (the same agent key, end user or session).', response: ConversationView, errors: [401, 403, 429] }), async (c) => {
      const agent = await findAgent(deps, c.req.param('slug'));
      grantCors(c, agent, deps.chatPublicUrl);
      const caller = await admit(deps, c, agent);
      return c.json(await readConversation(deps, caller, agent, c.req.param('conversationId')));
    })
    .options('/chat/:slug/conversations/:conversationId', async (c) => preflight(c, await findAgent(deps, c.req.param('slug')), deps.chatPublicUrl))
    .options('/chat/:slug', async (c) => preflight(c, await findAgent(deps, c.req.param('slug')), deps.chatPublicUrl))
    .post('/chat/:slug', doc({ summary: 'Chat with a published agent', description: 'Sends `message` (continuing `conversationId` when given) and answers the reply once the run ends. With `"stream": true` or `Accept: text/event-stream` it streams instead: `conversation`, `delta`s, then exactly one `done` or `error`. A private or org agent needs one of its agent keys (`Authorization: Bearer pk_…`); 504 when no reply comes within the agent\'s `syncMaxDurationSeconds` (the run is cancelled). When the run waits for the agent owner\'s approval of a tool call (`approvals: "owner"`), the non-streamed form answers 202 at once: the run goes on, and its reply shows at `conversationUrl` (`GET /chat/{slug}/conversations/{conversationId}`, whose `pending` is gone once the run has ended).', body: ChatBody, response: ChatReply, alsoAnswers: { 202: { description: 'The run waits for the agent owner\'s approval of a tool call; read the reply later in the conversation', response: ChatWaiting } }, errors: [401, 402, 403, 429, 502, 504] }), async (c) => {
      const slug = c.req.param('slug');
      const agent = await findAgent(deps, slug);
      grantCors(c, agent, deps.chatPublicUrl);
      const caller = await admit(deps, c, agent);
      const body = await readJson(c, ChatBody);
      const input = { message: body.message, conversationId: body.conversationId, userId: endUserOf(caller, body.user) };
      const abort = new AbortController();
      if (wantsStream(c, body)) {
        const turn = await startTurn(deps, caller, agent, input, abort.signal);
        return sseResponse(c, chatFrames(turn, agent.expose_tool_events, abort.signal), (f) => f, abort);
      }
      const timer = setTimeout(() => abort.abort(), agent.sync_max_duration_seconds * 1000);
      try {
        const turn = await startTurn(deps, caller, agent, input, abort.signal);
        let usage: Usage = NO_USAGE;
        for await (const item of turn.events) {
          if (item === null) continue;
          const e = item.event;
          usage = addUsage(usage, e);
          if (e.type === 'result') return c.json({ conversationId: turn.conversationId, reply: e.message ?? '', usage });
          if (e.type === 'error') return c.json({ error: e.message ?? 'run failed', conversationId: turn.conversationId, runId: turn.runId }, 502);
          // the owner may decide in a minute or a day: say so now rather than hold the caller to the deadline
          if (e.type === 'approval_required') return c.json(waitingAnswer(turn, e), 202);
        }
        await cancelTurn(deps, caller.tenantId, turn.runId);
        return c.json({ error: `no reply within ${agent.sync_max_duration_seconds}s; the run was cancelled (stream the reply for longer runs)`, conversationId: turn.conversationId, runId: turn.runId }, 504);
      } finally {
        clearTimeout(timer);
      }
    });
}

/**
 * The SSE frames of a streamed chat turn: `conversation`, `delta`s (tool events when exposed), then one `done` or
 * `error`; `null` is a keep-alive tick.
 */
async function* chatFrames(turn: ChatTurn, exposeToolEvents: boolean, signal: AbortSignal): AsyncGenerator<SseFrame | null> {
  const frame = (event: string, data: unknown): SseFrame => ({ event, data: JSON.stringify(data) });
  yield frame('conversation', { conversationId: turn.conversationId, runId: turn.runId });
  let usage: Usage = NO_USAGE;
  for await (const item of turn.events) {
    if (item === null) {
      yield null;
      continue;
    }
    const e = item.event;
    usage = addUsage(usage, e);
    if (e.type === 'assistant' && e.delta && e.message) yield frame('delta', { text: e.message });
    else if ((e.type === 'tool_call' || e.type === 'tool_result') && exposeToolEvents) yield frame(e.type, toolEvent(e));
    // `approvals: "owner"`: the run waits for the agent's owner; the end user is told, and told when it goes on
    else if (e.type === 'approval_required') {
      yield frame('waiting', { message: waitingMessage(e.toolName), toolName: e.toolName, approvalId: e.approvalId, expiresAt: e.expiresAt });
    } else if (e.type === 'approval_decided') {
      yield frame('resumed', { toolName: e.toolName, approvalId: e.approvalId, decision: e.decision, ...(e.reason ? { reason: e.reason } : {}) });
    }
    else if (e.type === 'result' || e.type === 'error') {
      yield e.type === 'result'
        ? frame('done', { conversationId: turn.conversationId, runId: turn.runId, reply: e.message ?? '', usage })
        : frame('error', { error: e.message ?? 'run failed', conversationId: turn.conversationId, runId: turn.runId });
      return;
    }
  }
  // the client left (or the stream ended without a terminal event): say so if anyone still listens
  if (!signal.aborted) yield frame('error', { error: 'stream ended without a result', conversationId: turn.conversationId, runId: turn.runId });
}

function toolEvent(e: RunEvent) {
  return { toolCallId: e.toolCallId, toolName: e.toolName, ...(e.type === 'tool_call' ? { input: e.input } : { output: e.output, isError: e.isError ?? false }) };
}
