import type * as v from 'valibot';
import type { RunEvent } from '../../../contracts/run-event.ts';
import type { RunRequest } from '../../../contracts/runner.wire.ts';
import { badRequest } from '../../../shared/errors.ts';
import type { TraceContext } from '../../../shared/tracing/index.ts';
import { startRun, type RunsDeps } from './runs.service.ts';
import type { Taps } from './taps.ts';

export type OpenRunDeps = RunsDeps & { taps: Taps };

export interface OpenedRun {
  /** What the caller reads: the run's events, or (adoptable) a reader of its tap from event 1. */
  events: AsyncIterable<RunEvent>;
  /** The caller hung up: cancels the run, or only detaches the reader of an adoptable one. */
  hangUp(): void;
}

/**
 * Starts a run for a caller, whoever it is (`POST /runner/run`, or the conductor of this process directly). Throws
 * (400, 404, 409) before anything streams. The caller's `signal` aborting is a hang-up: it cancels the run, unless the
 * run is adoptable: then the run goes on, kept in its tap for a conductor that re-attaches (taps.ts).
 */
export function openRun(
  deps: OpenRunDeps,
  tenant: string,
  body: v.InferOutput<typeof RunRequest>,
  opts: { runToken?: string; adoptable: boolean; trace: TraceContext },
  signal: AbortSignal,
): OpenedRun {
  const { subTask, skills, model, mcpServers, env, parkable, resume } = body;
  if (opts.adoptable && !subTask.id) throw badRequest('subTask.id: an adoptable run needs its id (a conductor re-attaches by it)');
  const run = startRun(deps, tenant, subTask, { runToken: opts.runToken, skills, model, mcpServers, env, trace: opts.trace, parkable, resume });
  if (opts.adoptable) {
    const runId = subTask.id!;
    deps.taps.open(tenant, runId, run);
    const detach = new AbortController();
    signal.addEventListener('abort', () => detach.abort(), { once: true });
    return { events: deps.taps.read(tenant, runId, 0, detach.signal), hangUp: () => detach.abort() };
  }
  signal.addEventListener('abort', () => run.cancel(), { once: true });
  return { events: run.events, hangUp: () => run.cancel() };
}
