import { APICallError, RetryError, stepCountIs, streamText, type LanguageModel, type LanguageModelUsage, type ModelMessage, type TelemetryOptions, type ToolSet } from 'ai';
import { runEvent, type RunEvent, type Usage } from '../../../../contracts/run-event.ts';
import { describeError } from '../../../../shared/errors.ts';
import type { ProviderOptions } from './providers.ts';
import { coalesceDeltas } from './coalesce.ts';
import { isMcpError } from './toolset.ts';
import { parkedApprovalOf } from '../../../../contracts/approvals.ts';

/**
 * One model turn of the `general` runtime: streamText over the session history plus the new prompt, translated into
 * RunEvents. Success commits the turn's messages; a failure after the turn began commits the prompt and the messages
 * of completed steps, once, before the terminal `error`.
 *
 * A step whose tool call was parked (its result carries PARKED_MARK: the call waits for a person's approval, see
 * conductor runs/parking.ts) ends the turn right there: the call stays pending in the committed history, answered by
 * a placeholder the resumed run replaces (index.ts), and the runner shows `parked` instead of this turn's `result`.
 * A resumed turn has no prompt: it goes on from the history as it stands.
 */
export interface TurnInput {
  model: LanguageModel;
  provider: string;
  providerOptions: ProviderOptions | undefined;
  /** The AI SDK's reasoning effort for this call; undefined leaves the provider's default. */
  reasoning?: Parameters<typeof streamText>[0]['reasoning'];
  system: string | undefined;
  history: ModelMessage[];
  /** The new user message; undefined for a resumed turn (it goes on from the history). */
  prompt: string | undefined;
  tools: ToolSet;
  /** The `capability_span` of a finished `call_tool` (toolset.ts), sent right after its `tool_result`. */
  takeSpan?(toolCallId: string): RunEvent | undefined;
  stepCount: number;
  /** No output from the model for this long (before its first chunk or between chunks) ends the turn as stalled. */
  stallTimeoutMs: number;
  signal: AbortSignal;
  commit(messages: ModelMessage[]): void;
  /** The AI SDK's OpenTelemetry integration when this process exports traces (telemetry.ts). */
  telemetry?: TelemetryOptions;
}

function toUsage(u: LanguageModelUsage): Usage {
  const usage: Usage = { inputTokens: u.inputTokens ?? 0, outputTokens: u.outputTokens ?? 0 };
  if (u.inputTokenDetails?.cacheReadTokens !== undefined) usage.cacheReadTokens = u.inputTokenDetails.cacheReadTokens;
  if (u.inputTokenDetails?.cacheWriteTokens !== undefined) usage.cacheCreateTokens = u.inputTokenDetails.cacheWriteTokens;
  return usage;
}

/**
 * Attempts at a model call that fails before streaming (429, 5xx, connection refused): the AI SDK retries them with
 * backoff, waiting what `Retry-After`/`retry-after-ms` asks when that is 0-60 s. Errors after the first chunk are not
 * retried (the deltas already went out).
 */
export const MODEL_ATTEMPTS = 3;

const isTimeout = (err: unknown): boolean => err instanceof Error && err.name === 'TimeoutError';

/** A readable one-line cause, with the HTTP status when the provider answered one, and what was waited for. */
export function describeModelError(provider: string, err: unknown, signal: AbortSignal, stallTimeoutMs?: number): string {
  if (signal.aborted) return 'run cancelled';
  if (isTimeout(err) && stallTimeoutMs !== undefined) return `model provider ${provider} stalled: no output for ${stallTimeoutMs / 1000} s (SVC_MODEL_STALL_TIMEOUT_MS)`;
  const retried = RetryError.isInstance(err) ? err : undefined;
  const cause = retried ? retried.lastError : err;
  if (APICallError.isInstance(cause)) {
    if (cause.statusCode !== undefined && cause.statusCode < 300) {
      // The provider answered 200 and the body broke off: a reset or a proxy cutting the stream.
      return `model provider ${provider}: connection lost mid-stream (${describeError(cause.cause ?? cause)})`;
    }
    const status = cause.statusCode === undefined ? 'no response' : `HTTP ${cause.statusCode}`;
    const headers = cause.responseHeaders ?? {};
    const wait = headers['retry-after-ms'] ? `retry-after-ms: ${headers['retry-after-ms']} ms` : headers['retry-after'] ? `Retry-After: ${headers['retry-after']} s` : undefined;
    const attempts = retried ? ` after ${retried.errors.length} attempts${wait ? ` (waiting ${wait} between them, as the provider asked)` : ' (with backoff)'}` : '';
    return `model provider ${provider} failed (${status})${attempts}: ${cause.message}`;
  }
  return `model provider ${provider} failed: ${describeError(cause)}`;
}

export async function* runTurn(input: TurnInput): AsyncGenerator<RunEvent> {
  const userMessage: ModelMessage[] = input.prompt === undefined ? [] : [{ role: 'user', content: input.prompt }];
  const completedSteps: ModelMessage[] = [];
  let failure: { error: unknown } | undefined;
  let usage: Usage | undefined;
  const stepTexts: string[] = [];
  let stepText = '';

  const result = streamText({
    model: coalesceDeltas(input.model),
    instructions: input.system,
    messages: [...input.history, ...userMessage],
    tools: input.tools,
    stopWhen: [stepCountIs(input.stepCount), ({ steps }) => steps.at(-1)?.toolResults.some((r) => parkedApprovalOf(r.output) !== undefined) ?? false],
    maxRetries: MODEL_ATTEMPTS - 1,
    timeout: { firstChunkMs: input.stallTimeoutMs, chunkMs: input.stallTimeoutMs },
    providerOptions: input.providerOptions,
    ...(input.reasoning ? { reasoning: input.reasoning } : {}),
    abortSignal: input.signal,
    ...(input.telemetry ? { telemetry: input.telemetry } : {}),
    // A step ended by a provider error chunk still reports here; it is not a completed step.
    onStepEnd: (step) => {
      if (step.finishReason !== 'error') completedSteps.push(...step.response.messages);
    },
    onError: () => {}, // errors arrive as stream parts; the default handler would print them
  });

  try {
    for await (const part of result.stream) {
      switch (part.type) {
        case 'text-delta':
          stepText += part.text;
          if (part.text) yield runEvent('assistant', { message: part.text, delta: true });
          break;
        case 'reasoning-delta':
          // a reasoning summary, where the provider gives one; each part id is one summary part
          if (part.text) yield runEvent('thinking', { message: part.text, delta: true, partId: part.id });
          break;
        case 'finish-step':
          if (stepText) stepTexts.push(stepText);
          stepText = '';
          break;
        case 'tool-call':
          yield runEvent('tool_call', { toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
          break;
        case 'tool-result': {
          yield runEvent('tool_result', { toolCallId: part.toolCallId, toolName: part.toolName, output: part.output, isError: isMcpError(part.output) });
          const span = input.takeSpan?.(part.toolCallId);
          if (span) yield span;
          break;
        }
        case 'tool-error': {
          yield runEvent('tool_result', { toolCallId: part.toolCallId, toolName: part.toolName, output: describeError(part.error), isError: true });
          const span = input.takeSpan?.(part.toolCallId);
          if (span) yield span;
          break;
        }
        case 'error':
          failure ??= { error: part.error };
          break;
        case 'abort':
          // A stall timeout aborts the call too; only the run's own signal means the caller cancelled.
          failure ??= { error: input.signal.aborted ? new Error('run cancelled') : stalled(input.stallTimeoutMs) };
          break;
        case 'finish':
          usage = toUsage(part.totalUsage);
          break;
      }
    }
  } catch (err) {
    failure ??= { error: err };
  }

  let messages: ModelMessage[] | undefined;
  if (!failure && !input.signal.aborted) {
    try {
      messages = await result.responseMessages;
    } catch (error) {
      failure = { error };
    }
  }
  if (!messages) {
    input.commit([...userMessage, ...completedSteps]);
    yield runEvent('error', { message: describeModelError(input.provider, failure?.error, input.signal, input.stallTimeoutMs) });
    return;
  }
  input.commit([...userMessage, ...messages]);
  if (stepText) stepTexts.push(stepText);
  const whole = stepTexts.join('\n\n');
  if (whole) yield runEvent('assistant', { message: whole });
  if (usage) yield runEvent('usage', { usage });
  yield runEvent('result', { message: stepTexts.at(-1) ?? '' });
}

function stalled(ms: number): Error {
  const err = new Error(`no output for ${ms} ms`);
  err.name = 'TimeoutError';
  return err;
}
