/**
 * The floor of one HTTP hop: a bare Hono app on @hono/node-server, nothing else. `GET /` answers `hello`; `GET
 * /sse?n=<count>` streams `count` small SSE frames through hono/streaming (the same writer the conductor uses), then
 * ends. `GET /healthz` answers `ok` (cold-start reference). Prints `hello listening on <url>`.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { AddressInfo } from 'node:net';

const app = new Hono()
  .get('/', (c) => c.text('hello'))
  .get('/healthz', (c) => c.text('ok'))
  .get('/sse', (c) => {
    const n = Number(c.req.query('n') ?? '10');
    return streamSSE(c, async (stream) => {
      for (let i = 1; i <= n; i++) {
        await stream.writeSSE({ id: String(i), data: JSON.stringify({ type: i === n ? 'result' : 'assistant', message: `d${i} `, delta: true }) });
      }
    });
  });

const port = Number(process.env.PORT ?? '0');
const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info: AddressInfo) => {
  process.stdout.write(`hello listening on http://127.0.0.1:${info.port}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
