import type { SseOut } from './sse.ts';
import { drip } from './sse.ts';
import type { ReplyContext } from './chat.ts';
import { FAKE_USAGE, type Plan } from './script.ts';

/**
 * Google Gemini API wire (ai.google.dev/api/generate-content): `POST …/models/{model}:streamGenerateContent?alt=sse`
 * answers bare `data:` frames, each a GenerateContentResponse (`candidates[0].content.parts` with `text` or a
 * `functionCall {name, args}`); the last one carries `finishReason` and `usageMetadata` (promptTokenCount includes
 * cachedContentTokenCount). `…:generateContent` answers one GenerateContentResponse. Errors are
 * `{error: {code, message, status}}`.
 */
const usageMetadata = (outputTokens: number) => ({
  promptTokenCount: FAKE_USAGE.input,
  cachedContentTokenCount: FAKE_USAGE.cached,
  candidatesTokenCount: outputTokens,
  totalTokenCount: FAKE_USAGE.input + outputTokens,
});

const candidate = (parts: unknown[] | undefined, finishReason?: string) => ({
  ...(parts ? { content: { role: 'model', parts } } : {}),
  ...(finishReason ? { finishReason } : {}),
  index: 0,
});

const callPart = (plan: Extract<Plan, { kind: 'tool' }>) => ({ functionCall: { name: plan.name, args: JSON.parse(plan.args) } });

export async function streamGemini(out: SseOut, plan: Exclude<Plan, { kind: 'fail' }>, ctx: ReplyContext): Promise<void> {
  const frame = (c: unknown, outputTokens?: number) =>
    out.send(undefined, { candidates: [c], ...(outputTokens === undefined ? {} : { usageMetadata: usageMetadata(outputTokens) }), modelVersion: ctx.model, responseId: `resp_${ctx.id}` });
  if (plan.kind === 'tool') {
    frame(candidate([callPart(plan)], 'STOP'), 1);
    return out.end();
  }
  if (plan.kind === 'hang') {
    frame(candidate([{ text: plan.first }]));
    return out.waitClosed();
  }
  if (!(await drip(out, plan.deltas, plan.intervalMs, (text) => frame(candidate([{ text }]))))) return;
  frame(candidate(undefined, 'STOP'), plan.deltas.length);
  out.end();
}

export function jsonGemini(plan: Extract<Plan, { kind: 'text' | 'tool' }>, ctx: ReplyContext): unknown {
  const parts = plan.kind === 'tool' ? [callPart(plan)] : [{ text: plan.deltas.join('') }];
  return { candidates: [candidate(parts, 'STOP')], usageMetadata: usageMetadata(plan.kind === 'tool' ? 1 : plan.deltas.length), modelVersion: ctx.model, responseId: `resp_${ctx.id}` };
}

const STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 503: 'UNAVAILABLE' };

export function geminiError(status: number): unknown {
  return { error: { code: status, message: `fake provider failure (HTTP ${status})`, status: STATUS[status] ?? 'INTERNAL' } };
}
