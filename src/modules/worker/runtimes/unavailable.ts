import { AppError } from '../../../shared/errors.ts';
import { runEvent } from '../../../contracts/run-event.ts';
import type { Runtime } from '../../../contracts/worker.ts';
import type { WorkerRuntime } from '../runtime.ts';

/**
 * Stand-in for a runtime this build does not ship yet (runtime_a, runtime_b): a run answers one terminal `error`
 * at once, so callers never hang; there is never state to export, and imports are refused with 501.
 */
export function createUnavailableRuntime(id: Runtime): WorkerRuntime {
  const message = `runtime ${id} is not available in this build`;
  return {
    id,
    async *run() {
      yield runEvent('error', { message });
    },
    async exportState() {
      return undefined;
    },
    async importState() {
      throw new AppError(501, message);
    },
    async close() {},
  };
}
