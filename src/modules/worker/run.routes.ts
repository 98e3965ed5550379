import { Hono } from 'hono';
import { withTerminal, type RunEvent } from '../../contracts/run-event.ts';
import { WorkerRunRequest, WORKER_INFLIGHT_HEADER } from '../../contracts/worker.ts';
import { describeError } from '../../shared/errors.ts';
import { readJson } from '../../shared/http.ts';
import { createLogger } from '../../shared/log.ts';
import { ndjsonStream } from '../../shared/ndjson.ts';
import { bindIterable, contextWith, endSpan, extractTrace, SpanKind, startSpan } from '../../shared/tracing/index.ts';
import { runtimeFor, type WorkerContext } from './worker.context.ts';

const log = createLogger('worker');

/**
 * `POST /run`: validate the body, pick the runtime by profile.runtime, stream its events as NDJSON. The stream always
 * ends with exactly one terminal event, and a client that hangs up aborts the model call.
 */
export function runRoutes(ctx: WorkerContext): Hono {
  const app = new Hono();
  app.post('/run', async (c) => {
    const body = await readJson(c, WorkerRunRequest);
    const runtime = runtimeFor(ctx, body.profile.runtime, 'profile.runtime');
    const abort = new AbortController();
    const started = Date.now();
    let outcome = 'cancelled';
    let released = false;
    // the runner's run span continues here; the runtime's model and tool spans (and its MCP calls) are children
    const parent = extractTrace(c.req.raw.headers);
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
      c.req.raw.signal.removeEventListener('abort', cancel);
      log.info('run finished', { sessionId: body.sessionId, runtime: runtime.id, outcome, ms: Date.now() - started });
    };
    const cancel = () => {
      abort.abort(new Error('client disconnected'));
      release();
    };
    c.req.raw.signal.addEventListener('abort', cancel, { once: true });
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

    return c.body(ndjsonStream(bindIterable(contextWith(span, parent), { [Symbol.asyncIterator]: events }), cancel), 200, {
      'content-type': 'application/x-ndjson',
      'cache-control': 'no-store',
      [WORKER_INFLIGHT_HEADER]: String(ctx.inflight),
    });
  });
  return app;
}
