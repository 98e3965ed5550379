import type { ServerResponse } from 'node:http';
import { crc32 } from 'node:zlib';
import { setTimeout as delay } from 'node:timers/promises';
import type { SseOut } from './sse.ts';
import { drip } from './sse.ts';
import type { ReplyContext } from './chat.ts';
import { FAKE_USAGE, type Plan } from './script.ts';

/**
 * Amazon Bedrock Converse wire (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html):
 * `POST /model/{modelId}/converse-stream` answers `application/vnd.amazon.eventstream`, binary frames of the AWS
 * event-stream encoding (prelude: total length, headers length, CRC32; headers `:event-type`, `:content-type`,
 * `:message-type`; JSON payload; message CRC32). Events: messageStart → contentBlockStart (tool use only) →
 * contentBlockDelta (`text` or `toolUse.input`) → contentBlockStop → messageStop (stopReason) → metadata (usage:
 * inputTokens without cache, cacheReadInputTokens, cacheWriteInputTokens, outputTokens, totalTokens).
 * `POST /model/{modelId}/converse` answers one JSON ConverseResponse. Errors: status, `x-amzn-ErrorType`, `{message}`.
 */
function header(name: string, value: string): Buffer {
  const n = Buffer.from(name, 'utf8');
  const v = Buffer.from(value, 'utf8');
  const out = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
  out.writeUInt8(n.length, 0);
  n.copy(out, 1);
  out.writeUInt8(7, 1 + n.length); // 7: string
  out.writeUInt16BE(v.length, 2 + n.length);
  v.copy(out, 4 + n.length);
  return out;
}

/** One event-stream frame. */
export function eventFrame(eventType: string, payload: unknown): Buffer {
  const headers = Buffer.concat([header(':event-type', eventType), header(':content-type', 'application/json'), header(':message-type', 'event')]);
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const total = 12 + headers.length + body.length + 4;
  const frame = Buffer.alloc(total);
  frame.writeUInt32BE(total, 0);
  frame.writeUInt32BE(headers.length, 4);
  frame.writeUInt32BE(crc32(frame.subarray(0, 8)), 8);
  headers.copy(frame, 12);
  body.copy(frame, 12 + headers.length);
  frame.writeUInt32BE(crc32(frame.subarray(0, total - 4)), total - 4);
  return frame;
}

/** An event-stream writer with the SSE writer's interface: `send(event, data)` writes one frame. */
export function openEventStream(res: ServerResponse, headers: Record<string, string> = {}): SseOut {
  let closed = false;
  const gone = new Promise<void>((resolve) =>
    res.on('close', () => {
      closed = true;
      resolve();
    }),
  );
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': headers['request-id'] ?? 'fake', ...headers });
  res.flushHeaders();
  return {
    send(event, data) {
      if (!closed) res.write(eventFrame(event ?? 'unknown', data));
    },
    raw() {
      throw new Error('the Bedrock event stream has no raw lines');
    },
    async pause(ms) {
      if (ms > 0 && !closed) await delay(ms);
      return !closed;
    },
    get closed() {
      return closed;
    },
    waitClosed: () => gone,
    end() {
      if (!closed) res.end();
    },
  };
}

const usage = (outputTokens: number) => ({
  inputTokens: FAKE_USAGE.input,
  cacheReadInputTokens: FAKE_USAGE.cached,
  cacheWriteInputTokens: FAKE_USAGE.cacheWrite,
  outputTokens,
  totalTokens: FAKE_USAGE.input + FAKE_USAGE.cached + FAKE_USAGE.cacheWrite + outputTokens,
});

export async function streamBedrock(out: SseOut, plan: Exclude<Plan, { kind: 'fail' }>, ctx: ReplyContext): Promise<void> {
  out.send('messageStart', { role: 'assistant' });
  let outputTokens = 1;
  let stopReason = 'end_turn';
  if (plan.kind === 'tool') {
    out.send('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: `tooluse_${ctx.id}`, name: plan.name } } });
    out.send('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: plan.args } } });
    stopReason = 'tool_use';
  } else {
    const emit = (text: string) => out.send('contentBlockDelta', { contentBlockIndex: 0, delta: { text } });
    if (plan.kind === 'hang') {
      emit(plan.first);
      return out.waitClosed();
    }
    if (!(await drip(out, plan.deltas, plan.intervalMs, emit))) return;
    outputTokens = plan.deltas.length;
  }
  out.send('contentBlockStop', { contentBlockIndex: 0 });
  out.send('messageStop', { stopReason });
  out.send('metadata', { usage: usage(outputTokens), metrics: { latencyMs: 1 } });
  out.end();
}

export function jsonBedrock(plan: Extract<Plan, { kind: 'text' | 'tool' }>, ctx: ReplyContext): unknown {
  const content = plan.kind === 'tool' ? [{ toolUse: { toolUseId: `tooluse_${ctx.id}`, name: plan.name, input: JSON.parse(plan.args) } }] : [{ text: plan.deltas.join('') }];
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: plan.kind === 'tool' ? 'tool_use' : 'end_turn',
    usage: usage(plan.kind === 'tool' ? 1 : plan.deltas.length),
    metrics: { latencyMs: 1 },
  };
}

const ERROR_TYPES: Record<number, string> = { 400: 'ValidationException', 403: 'AccessDeniedException', 404: 'ResourceNotFoundException', 429: 'ThrottlingException', 503: 'ServiceUnavailableException' };

export const bedrockErrorType = (status: number) => ERROR_TYPES[status] ?? 'InternalServerException';

export function bedrockError(status: number): unknown {
  return { message: `fake provider failure (HTTP ${status})` };
}
