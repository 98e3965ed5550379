import { isTerminal, runEvent, type RunEvent } from '../../../../contracts/run-event.ts';

/**
 * Turns an SDK's message stream into RunEvents that end in exactly one terminal, whatever the SDK does around a
 * failure (Claude: a synthetic assistant message, a `result` with is_error, then a throw; Codex: `turn.failed`, then a
 * throw). The first terminal the translator produces wins and is held back until the SDK's stream has ended, so the
 * child process has exited and flushed its transcript or rollout before the caller sees the run as over (and may
 * export it). A child that lingers after its terminal is stopped after `drainMs`.
 */
export interface SettleOptions {
  signal: AbortSignal;
  /** Stops the SDK's child process (aborts its controller). */
  stop(): void;
  /** Message for a thrown error when no terminal came first. */
  describe(err: unknown): string;
  drainMs?: number;
}

export const CANCELLED = 'run cancelled';
const DRAIN_MS = 5_000;

export async function* settle<M>(source: AsyncIterable<M>, translate: (message: M) => Iterable<RunEvent>, opts: SettleOptions): AsyncGenerator<RunEvent> {
  let terminal: RunEvent | undefined;
  let drainTimer: NodeJS.Timeout | undefined;
  try {
    for await (const message of source) {
      if (terminal) continue; // draining: the child is finishing its writes
      for (const event of translate(message)) {
        if (isTerminal(event)) {
          terminal = event;
          drainTimer = setTimeout(opts.stop, opts.drainMs ?? DRAIN_MS);
          drainTimer.unref();
          break;
        }
        yield event;
      }
    }
  } catch (err) {
    terminal ??= runEvent('error', { message: opts.signal.aborted ? CANCELLED : opts.describe(err) });
  } finally {
    clearTimeout(drainTimer);
  }
  yield terminal ?? runEvent('error', { message: opts.signal.aborted ? CANCELLED : 'the runtime ended without a result' });
}
