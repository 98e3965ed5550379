import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes, routePath } from 'hono/route';
import { HTTP_BUCKETS, type Metrics } from '../shared/metrics.ts';

/**
 * HTTP latency by method, route template and status: `svc_http_request_duration_seconds` (its `_count` is the request
 * counter). The route label is the template Hono matched (`/api/runs/:id`), never the raw path, so the number of
 * series stays bounded whatever clients send. Streams (SSE, NDJSON) are timed to their response headers.
 */
export function httpMetrics(metrics: Metrics): MiddlewareHandler {
  const latency = metrics.histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'Time to answer an HTTP request (to the response headers), by method, route template and status.',
    labels: ['method', 'route', 'status'],
    buckets: HTTP_BUCKETS,
  });
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      latency.observe({ method: c.req.method, route: routeTemplate(c), status: c.res.status }, (performance.now() - started) / 1000);
    }
  };
}

/**
 * The endpoint's template: the last method-specific route that matched (even when a middleware answered before it,
 * e.g. a 401), else the pattern of the handler that answered last (an `app.all` endpoint, or for an unknown path the
 * middleware pattern it fell through, such as `/api/*`): always a pattern from our code, never the client's path.
 */
export function routeTemplate(c: Context): string {
  const endpoint = matchedRoutes(c).findLast((r) => r.method !== 'ALL');
  return endpoint?.path ?? (routePath(c) || 'unmatched');
}
