import { withTerminal, type RunEvent } from '../../contracts/run-event.ts';
import type { WorkerRunRequest } from '../../contracts/worker.ts';
import { describeError } from '../../shared/errors.ts';
import { createLogger } from '../../shared/log.ts';
import { bindIterable, contextWith, endSpan, SpanKind, startSpan, type TraceContext } from '../../shared/tracing/index.ts';
import { runtimeFor, type WorkerContext } from './worker.context.ts';

const log = createLogger('worker');

export interface StartedWorkerRun {
  /** The run's events under its span, ending with exactly one terminal event. */
  events: AsyncIterable<RunEvent>;
  /** Ends the run (the caller went away): aborts the model call and releases the run. Idempotent. */
  cancel(): void;
}

/**
 * One run on this worker, whoever asked (`POST /run`, or the runner of this process directly): pick the runtime by
 * profile.runtime (an unknown or unserved one throws a 400 before anything runs), count it in flight, and stream its
 * events under the run's span, a child of the caller's `parent`. The caller's `signal` aborting cancels the run.
 */
export function startWorkerRun(ctx: WorkerContext, body: WorkerRunRequest, parent: TraceContext, signal: AbortSignal): StartedWorkerRun {
  const runtime = runtimeFor(ctx, body.profile.runtime, 'profile.runtime');
  const abort = new AbortController();
  const started = Date.now();
  let outcome = 'cancelled';
  let released = false;
  // the runner's run span continues here; the runtime's model and tool spans (and its MCP calls) are children
  const span = startSpan('svc.worker.run', {
    parent,
    kind: SpanKind.SERVER,
    attributes: { 'svc.session.id': body.sessionId, 'svc.runtime': runtime.id, 'svc.profile': body.profile.name },
  });
  // Runs once, from the stream's end or its cancellation (a never-pulled generator would skip its finally).
  const release = () => {
    if (released) return;
    released = true;
    span.setAttribute('svc.run.outcome', outcome);
    endSpan(span, outcome === 'error' ? 'run ended with an error' : undefined);
    ctx.inflight--;
    ctx.live.delete(abort);
    signal.removeEventListener('abort', cancel);
    log.info('run finished', { sessionId: body.sessionId, runtime: runtime.id, outcome, ms: Date.now() - started });
  };
  const cancel = () => {
    abort.abort(new Error('client disconnected'));
    release();
  };
  signal.addEventListener('abort', cancel, { once: true });
  ctx.live.add(abort);
  ctx.inflight++;

  async function* events(): AsyncGenerator<RunEvent> {
    try {
      for await (const event of withTerminal(runtime.run(body, abort.signal), describeError)) {
        if (event.type === 'result' || event.type === 'error') outcome = abort.signal.aborted ? 'cancelled' : event.type;
        yield event;
      }
    } finally {
      release();
    }
  }

  return {
    events: bindIterable(contextWith(span, parent), { [Symbol.asyncIterator]: events }),
    cancel,
  };
}
