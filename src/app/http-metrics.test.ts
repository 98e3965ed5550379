import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../shared/metrics.ts';
import { httpMetrics } from './http-metrics.ts';

/** A tiny app shaped like ours: a sub-app routed under /api behind an auth middleware, and a catch-all 404. */
function appWithMetrics() {
  const metrics = createMetrics();
  const api = new Hono();
  api.use('*', async (c, next) => (c.req.header('authorization') ? next() : c.json({ error: 'missing key' }, 401)));
  api.get('/runs/:id', (c) => c.json({ id: c.req.param('id') }));
  api.all('/sessions/:id/mcp', (c) => c.body(null, 204));
  const app = new Hono();
  app.use('*', httpMetrics(metrics));
  app.route('/api', api);
  return { app, metrics };
}

const counts = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('svc_http_request_duration_seconds_count{'))
    .map((l) => l.replace(/ \d+$/, (n) => `=${n.trim()}`));

describe('the HTTP latency histogram', () => {
  it('labels requests by route template, never by the raw path', async () => {
    const { app, metrics } = appWithMetrics();
    const auth = { headers: { authorization: 'Bearer k' } };
    for (const id of ['r1', 'r2', 'r3']) expect((await app.request(`/api/runs/${id}`, auth)).status).toBe(200);
    expect((await app.request('/api/runs/r4')).status).toBe(401); // refused by a middleware: still the endpoint's template
    expect((await app.request('/api/sessions/s-9/mcp', { ...auth, method: 'POST' })).status).toBe(204);
    expect((await app.request('/api/no/such/thing/123', auth)).status).toBe(404);
    const text = await metrics.render();
    expect(counts(text).sort()).toEqual(
      [
        'svc_http_request_duration_seconds_count{method="GET",route="/api/runs/:id",status="200"}=3',
        'svc_http_request_duration_seconds_count{method="GET",route="/api/runs/:id",status="401"}=1',
        'svc_http_request_duration_seconds_count{method="POST",route="/api/sessions/:id/mcp",status="204"}=1',
        'svc_http_request_duration_seconds_count{method="GET",route="/api/*",status="404"}=1',
      ].sort(),
    );
    expect(text).not.toMatch(/r1|r2|s-9|\/no\/such/);
    expect(text).toMatch(/^svc_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/api\/runs\/:id",status="200"\} \d+$/m);
  });

  it('keeps each instance\'s series apart and still shows the standard process metrics on both', async () => {
    const one = appWithMetrics();
    const two = appWithMetrics();
    await one.app.request('/api/runs/x', { headers: { authorization: 'Bearer k' } });
    expect(counts(await one.metrics.render())).toHaveLength(1);
    const other = await two.metrics.render();
    expect(counts(other)).toHaveLength(0);
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(other).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
    }
  });
});
