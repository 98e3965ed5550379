import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import type { Usage } from '../../../contracts/run-event.ts';
import { AppError, badRequest } from '../../../shared/errors.ts';
import { readJson, toHttpError } from '../../../shared/http.ts';
import { sseResponse, type SseFrame } from '../../../shared/sse.ts';
import { CLIENT_ID_PATTERN } from '../../../shared/ids.ts';
import type { AgentKeyDeps } from './agent-keys.service.ts';
import { admit } from './gateway.auth.ts';
import type { FeatureDeps } from '../feature.ts';
import { addUsage, cancelTurn, endUserOf, NO_USAGE, findAgent, startTurn, waitingAnswer, type ChatTurn, type GatewayDeps } from './gateway.service.ts';
import { grantCors, preflight } from './cors.ts';
import { ChatCompletion } from './publishing.schema.ts';

/**
 * `POST /chat/{slug}/v1/chat/completions`: the published agent behind the OpenAI Chat Completions wire (stream and
 * not), so an existing chat front end works by base URL `<gateway>/chat/{slug}/v1` with an agent key as its API key.
 *
 * Conversations: the header `X-Conversation-Id` (or else the `user` field) names a conversation from an earlier
 * answer, which every answer carries in its `X-Conversation-Id` header; the turn then sends only the last user
 * message (the agent keeps the history). Without one a new conversation starts, seeded with the whole `messages`
 * transcript the client sent. `model` is ignored: the published profile decides.
 */
const Part = v.looseObject({ type: v.string(), text: v.optional(v.string()) });
const Message = v.looseObject({ role: v.picklist(['system', 'developer', 'user', 'assistant', 'tool']), content: v.optional(v.nullable(v.union([v.string(), v.array(Part)]))) });
const CompletionBody = v.looseObject({
  model: v.optional(v.string()),
  messages: v.pipe(v.array(Message), v.minLength(1, 'messages: at least one message')),
  stream: v.optional(v.nullable(v.boolean())),
  user: v.optional(v.string()),
});
type Msg = v.InferOutput<typeof Message>;

const textOf = (m: Msg) => (typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text ?? '').join(''));

function promptOf(messages: Msg[], continuing: boolean): string {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  if (!lastUser || !textOf(lastUser)) throw badRequest('messages: the last user message has no text');
  if (continuing || messages.length === 1) return textOf(lastUser);
  return messages.map((m) => `${m.role}: ${textOf(m)}`).join('\n\n');
}

function openAiErrors(app: Hono): Hono {
  app.onError((err, c) => {
    const { status, message, error } = toHttpError(err);
    if (error?.headers) for (const [k, val] of Object.entries(error.headers)) c.header(k, val);
    // 402 (the credit gate, the agent's cost cap) as /v1 answers it
    const type = status === 401 ? 'authentication_error' : status === 402 ? 'insufficient_quota' : status === 404 ? 'not_found_error' : status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
    return c.json({ error: { message: status === 404 && message === 'not_published' ? 'not_published: no published agent here' : message, type, param: null, code: error?.code ?? null } }, status as 400);
  });
  return app;
}

const usageOf = (u: Usage) => ({ prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens });

/** The SSE frames of a streamed completion: the role chunk, content chunks, the stop chunk with usage (or an error), `[DONE]`. */
async function* completionChunks(turn: ChatTurn, model: string, created: number): AsyncGenerator<SseFrame> {
  const id = `chatcmpl-${turn.runId}`;
  const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}): SseFrame => ({
    data: JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra }),
  });
  yield chunk({ role: 'assistant', content: '' }, null);
  let usage = NO_USAGE;
  for await (const item of turn.events) {
    if (item === null) continue;
    const e = item.event;
    usage = addUsage(usage, e);
    if (e.type === 'assistant' && e.delta && e.message) yield chunk({ content: e.message }, null);
    else if (e.type === 'result' || e.type === 'error') {
      yield e.type === 'error' ? { data: JSON.stringify({ error: { message: e.message ?? 'run failed', type: 'server_error', param: null, code: null } }) } : chunk({}, 'stop', { usage: usageOf(usage) });
      break;
    }
  }
  yield { data: '[DONE]' };
}

export function completionsRoutes(deps: GatewayDeps & AgentKeyDeps & { authenticate: FeatureDeps['authenticate'] }): Hono {
  return openAiErrors(new Hono())
    .options('/chat/:slug/v1/chat/completions', async (c) => preflight(c, await findAgent(deps, c.req.param('slug')), deps.chatPublicUrl))
    .post('/chat/:slug/v1/chat/completions', doc({ summary: 'Chat with a published agent (OpenAI Chat Completions)', description: 'The agent behind the OpenAI Chat Completions wire, so an OpenAI client works with base URL `/chat/{slug}/v1` and an agent key as its API key. `model` is ignored (the published profile decides); `stream: true` streams chunks ending in `[DONE]`. The `X-Conversation-Id` answer header names the conversation; send it back to continue it. Errors are in the OpenAI shape (`{error: {message, type, code}}`). When the run waits for the agent owner\'s approval of a tool call (`approvals: "owner"`), the non-streamed form answers 409 `approval_pending` at once (with `x-should-retry: false`): the run goes on, and its reply shows in the conversation (`GET /chat/{slug}/conversations/{id}`, the id in `X-Conversation-Id`).', body: CompletionBody, response: ChatCompletion, errors: [401, 402, 403, 409, 429, 502, 504] }), async (c) => {
      const slug = c.req.param('slug');
      const agent = await findAgent(deps, slug);
      grantCors(c, agent, deps.chatPublicUrl);
      const caller = await admit(deps, c, agent);
      const body = await readJson(c, CompletionBody);
      const named = c.req.header('x-conversation-id') ?? body.user;
      const conversationId = named !== undefined && CLIENT_ID_PATTERN.test(named) && named.startsWith('conv_') ? named : undefined;
      // `user` names a conversation when it is one (conv_…), else the end user (with an agent key: per_user memory)
      const userId = endUserOf(caller, body.user !== undefined && !body.user.startsWith('conv_') ? body.user : undefined);
      const message = promptOf(body.messages, conversationId !== undefined);
      const abort = new AbortController();
      const created = Math.floor(Date.now() / 1000);
      if (body.stream) {
        const turn = await startTurn(deps, caller, agent, { message, conversationId, userId }, abort.signal);
        c.header('X-Conversation-Id', turn.conversationId);
        return sseResponse(c, completionChunks(turn, slug, created), (f) => f, abort);
      }
      const timer = setTimeout(() => abort.abort(), agent.sync_max_duration_seconds * 1000);
      try {
        const turn = await startTurn(deps, caller, agent, { message, conversationId, userId }, abort.signal);
        c.header('X-Conversation-Id', turn.conversationId);
        let usage = NO_USAGE;
        for await (const item of turn.events) {
          if (item === null) continue;
          const e = item.event;
          usage = addUsage(usage, e);
          if (e.type === 'error') throw new AppError(502, e.message ?? 'run failed');
          if (e.type === 'approval_required') {
            // the owner may decide in a minute or a day, and this wire has no "later" answer: say so now (no retry: the
            // run goes on, and a retry would send the message again), with where the reply will be
            const waiting = waitingAnswer(turn, e);
            throw new AppError(409, waiting.message, { code: 'approval_pending', headers: { 'x-should-retry': 'false' } });
          }
          if (e.type === 'result') {
            return c.json({
              id: `chatcmpl-${turn.runId}`,
              object: 'chat.completion',
              created,
              model: slug,
              choices: [{ index: 0, message: { role: 'assistant', content: e.message ?? '' }, finish_reason: 'stop', logprobs: null }],
              usage: usageOf(usage),
            });
          }
        }
        await cancelTurn(deps, caller.tenantId, turn.runId);
        throw new AppError(504, `no reply within ${agent.sync_max_duration_seconds}s; the run was cancelled (stream for longer runs)`);
      } finally {
        clearTimeout(timer);
      }
    });
}
