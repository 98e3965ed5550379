import { Hono } from 'hono';
import { RUN_TOKEN_HEADER } from '../../../contracts/runner.ts';
import { RunRequest } from '../../../contracts/runner.wire.ts';
import { readJson } from '../../../shared/http.ts';
import { ndjsonStream } from '../../../shared/ndjson.ts';
import type { RunnerEnv } from '../runner.context.ts';
import { startRun, type RunsDeps } from './runs.service.ts';

/** `POST /runner/run`: a SubTask in, NDJSON RunEvents out. A caller that hangs up cancels the run. */
export function runRoutes(deps: RunsDeps): Hono<RunnerEnv> {
  const app = new Hono<RunnerEnv>();
  app.post('/runner/run', async (c) => {
    const { subTask, skills, model, mcpServers } = await readJson(c, RunRequest);
    const run = startRun(deps, c.get('tenant'), subTask, { runToken: c.req.header(RUN_TOKEN_HEADER) || undefined, skills, model, mcpServers });
    // over a socket the server aborts the request signal on hang-up; in-process callers cancel the body instead
    c.req.raw.signal.addEventListener('abort', () => run.cancel(), { once: true });
    const body = ndjsonStream(run.events, () => run.cancel());
    return new Response(body, { status: 200, headers: { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' } });
  });
  return app;
}
