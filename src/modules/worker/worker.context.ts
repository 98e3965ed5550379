import { RUNTIMES, type Runtime, type WorkerMode } from '../../contracts/worker.ts';
import { badRequest } from '../../shared/errors.ts';
import type { WorkerRuntime } from './runtime.ts';

/**
 * What the worker's routes share: identity of this process, the in-flight run count, the runtimes this MODE serves,
 * and the abort handles of live runs (closed on shutdown).
 */
export interface WorkerContext {
  mode: WorkerMode;
  instanceId: string;
  startedAt: Date;
  inflight: number;
  runtimes: ReadonlyMap<Runtime, WorkerRuntime>;
  live: Set<AbortController>;
}

/** The runtime for a name from a request; unknown names and runtimes this MODE does not serve are 400s. */
export function runtimeFor(ctx: WorkerContext, name: string | undefined, field: string): WorkerRuntime {
  if (name === undefined || name === '') {
    if (ctx.mode !== 'all') return ctx.runtimes.get(ctx.mode)!;
    throw badRequest(`${field}: required when MODE is all (one of ${RUNTIMES.join(', ')})`);
  }
  if (!(RUNTIMES as readonly string[]).includes(name)) throw badRequest(`${field}: unknown runtime "${name}" (one of ${RUNTIMES.join(', ')})`);
  const runtime = ctx.runtimes.get(name as Runtime);
  if (!runtime) throw badRequest(`${field}: runtime ${name} is not served by this worker (MODE=${ctx.mode})`);
  return runtime;
}
