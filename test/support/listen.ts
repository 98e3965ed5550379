import { serve } from '@hono/node-server';
import { createServer, type AddressInfo } from 'node:net';

/** Serves a fetch handler (a Hono app's `fetch`) on 127.0.0.1 and an ephemeral port, for tests over real HTTP. */
export interface Listening {
  url: string;
  close(): Promise<void>;
}

export function listen(fetch: (request: Request) => Response | Promise<Response>): Promise<Listening> {
  return new Promise((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            if ('closeAllConnections' in server) server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** A port that was free a moment ago (listen on 0, read it, close), for processes that must know their URL up front. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
