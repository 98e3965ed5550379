import type { SseOut } from './sse.ts';
import { drip } from './sse.ts';
import { FAKE_USAGE, type Plan } from './script.ts';

/**
 * OpenAI Chat Completions wire (RUNTIMES.md §6): role chunk → content or tool_calls deltas → finish → usage → [DONE].
 * Servers that speak it report streamed usage in their own place: OpenAI in a trailing `choices: []` chunk when asked
 * (`stream_options.include_usage`), Mistral as `usage` on the finishing chunk, Groq as `x_groq.usage` there.
 */
export type ChatDialect = 'openai' | 'mistral' | 'groq';

export interface ReplyContext {
  model: string;
  id: string;
  /** Chat only: whether the client asked for the trailing usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Chat only: whose usage placement to follow (told apart by the client's user agent; default openai). */
  dialect?: ChatDialect;
}

const usage = (outputTokens: number) => ({
  prompt_tokens: FAKE_USAGE.input,
  completion_tokens: outputTokens,
  total_tokens: FAKE_USAGE.input + outputTokens,
  prompt_tokens_details: { cached_tokens: FAKE_USAGE.cached },
});

export async function streamChat(out: SseOut, plan: Exclude<Plan, { kind: 'fail' }>, ctx: ReplyContext): Promise<void> {
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    out.send(undefined, { id: ctx.id, object: 'chat.completion.chunk', created, model: ctx.model, choices, ...extra });
  const delta = (d: Record<string, unknown>, finish: string | null = null) => chunk([{ index: 0, delta: d, finish_reason: finish }]);

  delta({ role: 'assistant', content: '' });
  let outputTokens = 1;
  if (plan.kind === 'hang') {
    delta({ content: plan.first });
    return out.waitClosed();
  }
  if (plan.kind === 'tool') {
    delta({ tool_calls: [{ index: 0, id: `call_${ctx.id}`, type: 'function', function: { name: plan.name, arguments: '' } }] });
    delta({ tool_calls: [{ index: 0, function: { arguments: plan.args } }] });
    (plan.also ?? []).forEach((c, i) => {
      delta({ tool_calls: [{ index: i + 1, id: `call_${ctx.id}_${i + 1}`, type: 'function', function: { name: c.name, arguments: '' } }] });
      delta({ tool_calls: [{ index: i + 1, function: { arguments: c.args } }] });
    });
  }
  const finish = (reason: string) => {
    const extra = ctx.dialect === 'mistral' ? { usage: usage(outputTokens) } : ctx.dialect === 'groq' ? { x_groq: { id: `req_${ctx.id}`, usage: usage(outputTokens) } } : {};
    chunk([{ index: 0, delta: {}, finish_reason: reason }], extra);
  };
  if (plan.kind === 'tool') {
    finish('tool_calls');
  } else {
    if (!(await drip(out, plan.deltas, plan.intervalMs, (d) => delta({ content: d })))) return;
    outputTokens = plan.deltas.length;
    finish('stop');
  }
  if (ctx.includeUsage) chunk([], { usage: usage(outputTokens) });
  out.raw('data: [DONE]');
  out.end();
}

export function jsonChat(plan: Extract<Plan, { kind: 'text' | 'tool' }>, ctx: ReplyContext): unknown {
  const message =
    plan.kind === 'tool'
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [{ name: plan.name, args: plan.args }, ...(plan.also ?? [])].map((c, i) => ({ id: i ? `call_${ctx.id}_${i}` : `call_${ctx.id}`, type: 'function', function: { name: c.name, arguments: c.args } })),
        }
      : { role: 'assistant', content: plan.deltas.join('') };
  return {
    id: ctx.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices: [{ index: 0, message, finish_reason: plan.kind === 'tool' ? 'tool_calls' : 'stop' }],
    usage: usage(plan.kind === 'tool' ? 1 : plan.deltas.length),
  };
}

export function chatError(status: number): unknown {
  return { error: { message: `fake provider failure (HTTP ${status})`, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: `http_${status}` } };
}
