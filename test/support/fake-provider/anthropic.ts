import type { SseOut } from './sse.ts';
import { drip } from './sse.ts';
import type { ReplyContext } from './chat.ts';
import { chunkReply, FAKE_REASONING, FAKE_USAGE, type Plan } from './script.ts';

/**
 * Anthropic Messages wire (RUNTIMES.md §2 "Minimal Anthropic SSE"): message_start (with usage) → ping →
 * content_block_start/delta/stop (text or tool_use) → message_delta (stop_reason, output_tokens) → message_stop.
 */
const startUsage = {
  input_tokens: FAKE_USAGE.input,
  cache_creation_input_tokens: FAKE_USAGE.cacheWrite,
  cache_read_input_tokens: FAKE_USAGE.cached,
  output_tokens: 1,
};

export async function streamAnthropic(out: SseOut, plan: Exclude<Plan, { kind: 'fail' }>, ctx: ReplyContext): Promise<void> {
  const send = (type: string, fields: Record<string, unknown>) => out.send(type, { type, ...fields });
  const message = { id: `msg_${ctx.id}`, type: 'message', role: 'assistant', model: ctx.model, content: [], stop_reason: null, stop_sequence: null, usage: startUsage };
  send('message_start', { message });
  send('ping', {});
  let stopReason = 'end_turn';
  let outputTokens = 1;
  // extended thinking (asked for with `thinking`): one thinking block per summary part, each signed, before the answer
  let index = 0;
  if (ctx.reasoning) {
    for (const text of FAKE_REASONING) {
      send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const thinking of chunkReply(text)) send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } });
      send('content_block_delta', { index, delta: { type: 'signature_delta', signature: `sig_${ctx.id}_${index}` } });
      send('content_block_stop', { index: index++ });
    }
  }
  if (plan.kind === 'tool') {
    send('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_${ctx.id}`, name: plan.name, input: {} } });
    send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: plan.args } });
    stopReason = 'tool_use';
  } else {
    send('content_block_start', { index, content_block: { type: 'text', text: '' } });
    const emit = (text: string) => send('content_block_delta', { index, delta: { type: 'text_delta', text } });
    if (plan.kind === 'hang') {
      emit(plan.first);
      return out.waitClosed();
    }
    if (!(await drip(out, plan.deltas, plan.intervalMs, emit))) return;
    outputTokens = plan.deltas.length;
  }
  send('content_block_stop', { index });
  send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } });
  send('message_stop', {});
  out.end();
}

export function jsonAnthropic(plan: Extract<Plan, { kind: 'text' | 'tool' }>, ctx: ReplyContext): unknown {
  const content =
    plan.kind === 'tool'
      ? [{ type: 'tool_use', id: `toolu_${ctx.id}`, name: plan.name, input: JSON.parse(plan.args) }]
      : [{ type: 'text', text: plan.deltas.join('') }];
  return {
    id: `msg_${ctx.id}`,
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: plan.kind === 'tool' ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { ...startUsage, output_tokens: plan.kind === 'tool' ? 1 : plan.deltas.length },
  };
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

export function anthropicError(status: number): unknown {
  return { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message: `fake provider failure (HTTP ${status})` } };
}
