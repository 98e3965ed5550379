import type { SseOut } from './sse.ts';
import { drip } from './sse.ts';
import type { ReplyContext } from './chat.ts';
import { chunkReply, FAKE_REASONING, FAKE_USAGE, type Plan } from './script.ts';

/**
 * OpenAI Responses wire (RUNTIMES.md §3): response.created → in_progress → output item (text parts or function call
 * arguments) → output_item.done → response.completed with usage. `ns/name` tool calls carry `namespace` (Codex);
 * `CALL_CUSTOM` answers a freeform `custom_tool_call` (Codex's apply_patch).
 */
const usage = (outputTokens: number) => ({
  input_tokens: FAKE_USAGE.input,
  input_tokens_details: { cached_tokens: FAKE_USAGE.cached },
  output_tokens: outputTokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: FAKE_USAGE.input + outputTokens,
});

function toolItem(plan: Extract<Plan, { kind: 'tool' }>, ctx: ReplyContext, status: string, args: string) {
  if (plan.custom) return { type: 'custom_tool_call', id: `ctc_${ctx.id}`, call_id: `call_${ctx.id}`, name: plan.name, input: args, status };
  return {
    type: 'function_call',
    id: `fc_${ctx.id}`,
    call_id: `call_${ctx.id}`,
    name: plan.name,
    ...(plan.namespace ? { namespace: plan.namespace } : {}),
    arguments: args,
    status,
  };
}

function messageItem(ctx: ReplyContext, status: string, text: string | undefined) {
  const content = text === undefined ? [] : [{ type: 'output_text', text, annotations: [] }];
  return { type: 'message', id: `msg_${ctx.id}`, status, role: 'assistant', content };
}

function responseObject(ctx: ReplyContext, created: number, status: string, output: unknown[], outputTokens?: number) {
  return { id: `resp_${ctx.id}`, object: 'response', created_at: created, model: ctx.model, status, output, ...(outputTokens === undefined ? {} : { usage: usage(outputTokens) }) };
}

/** A reasoning item with its summary parts (asked for with `reasoning.summary`), at output index 0. */
function sendReasoning(send: (type: string, fields: Record<string, unknown>) => void, ctx: ReplyContext): unknown {
  const id = `rs_${ctx.id}`;
  const item = (summary: unknown[]) => ({ type: 'reasoning', id, summary, encrypted_content: `enc_${ctx.id}` });
  send('response.output_item.added', { output_index: 0, item: item([]) });
  FAKE_REASONING.forEach((text, summary_index) => {
    const at = { item_id: id, output_index: 0, summary_index };
    send('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
    for (const delta of chunkReply(text)) send('response.reasoning_summary_text.delta', { ...at, delta });
    send('response.reasoning_summary_text.done', { ...at, text });
    send('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
  });
  const done = item(FAKE_REASONING.map((text) => ({ type: 'summary_text', text })));
  send('response.output_item.done', { output_index: 0, item: done });
  return done;
}

export async function streamResponses(out: SseOut, plan: Exclude<Plan, { kind: 'fail' }>, ctx: ReplyContext): Promise<void> {
  let seq = 0;
  const send = (type: string, fields: Record<string, unknown>) => out.send(type, { type, sequence_number: seq++, ...fields });
  const created = Math.floor(Date.now() / 1000);
  send('response.created', { response: responseObject(ctx, created, 'in_progress', []) });
  send('response.in_progress', { response: responseObject(ctx, created, 'in_progress', []) });
  const before = ctx.reasoning ? [sendReasoning(send, ctx)] : [];
  const at = before.length;

  if (plan.kind === 'tool') {
    const item = toolItem(plan, ctx, 'completed', plan.args);
    send('response.output_item.added', { output_index: at, item: toolItem(plan, ctx, 'in_progress', '') });
    if (plan.custom) {
      send('response.custom_tool_call_input.delta', { item_id: item.id, output_index: at, delta: plan.args });
      send('response.custom_tool_call_input.done', { item_id: item.id, output_index: at, input: plan.args });
    } else {
      send('response.function_call_arguments.delta', { item_id: item.id, output_index: at, delta: plan.args });
      send('response.function_call_arguments.done', { item_id: item.id, output_index: at, arguments: plan.args });
    }
    send('response.output_item.done', { output_index: at, item });
    send('response.completed', { response: responseObject(ctx, created, 'completed', [...before, item], 1) });
    return out.end();
  }
  const itemId = `msg_${ctx.id}`;
  const part = { item_id: itemId, output_index: at, content_index: 0 };
  send('response.output_item.added', { output_index: at, item: messageItem(ctx, 'in_progress', undefined) });
  send('response.content_part.added', { ...part, part: { type: 'output_text', text: '', annotations: [] } });
  if (plan.kind === 'hang') {
    send('response.output_text.delta', { ...part, delta: plan.first, logprobs: [] });
    return out.waitClosed();
  }
  if (!(await drip(out, plan.deltas, plan.intervalMs, (delta) => send('response.output_text.delta', { ...part, delta, logprobs: [] })))) return;
  const text = plan.deltas.join('');
  send('response.output_text.done', { ...part, text, logprobs: [] });
  send('response.content_part.done', { ...part, part: { type: 'output_text', text, annotations: [] } });
  const item = messageItem(ctx, 'completed', text);
  send('response.output_item.done', { output_index: at, item });
  send('response.completed', { response: responseObject(ctx, created, 'completed', [...before, item], plan.deltas.length) });
  out.end();
}

export function jsonResponses(plan: Extract<Plan, { kind: 'text' | 'tool' }>, ctx: ReplyContext): unknown {
  const created = Math.floor(Date.now() / 1000);
  return plan.kind === 'tool'
    ? responseObject(ctx, created, 'completed', [toolItem(plan, ctx, 'completed', plan.args)], 1)
    : responseObject(ctx, created, 'completed', [messageItem(ctx, 'completed', plan.deltas.join(''))], plan.deltas.length);
}

export function responsesError(status: number): unknown {
  return { error: { message: `fake provider failure (HTTP ${status})`, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: `http_${status}` } };
}
