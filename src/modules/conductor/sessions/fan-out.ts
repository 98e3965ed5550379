import type { RunnerClient } from '../../../contracts/runner.client.ts';
import { AppError } from '../../../shared/errors.ts';
import type { Fleet } from '../runners/fleet.ts';

/**
 * Asks every live runner the same tenant-scoped question and merges the answers. A runner slower than `timeoutMs` is
 * left out (the result is partial); a runner that answers with an error makes the whole call a 502.
 */
export async function fanOut<T>(fleet: Fleet, timeoutMs: number, ask: (client: RunnerClient, signal: AbortSignal) => Promise<T[]>): Promise<{ items: T[]; partial: boolean }> {
  const live = fleet.members().filter((m) => m.healthy);
  let partial = live.length < fleet.members().length;
  const results = await Promise.all(
    live.map(async (m) => {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), timeoutMs);
      try {
        return await ask(m.client, controller.signal);
      } catch (err) {
        if (controller.signal.aborted) {
          partial = true;
          return [];
        }
        throw new AppError(502, `upstream runner failure (${m.url}): ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { items: results.flat(), partial };
}
