import { safeEqual as same } from '../../../shared/safe-equal.ts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The CLI's listener for the browser login: 127.0.0.1 on an ephemeral port, one route (`POST /callback`, a form the
 * dashboard's approval page submits). A post with the wrong state is refused and the wait goes on.
 */
export type Callback = { ok: true; apiKey: string; keyId: string | null; role: string | null; org: string | null } | { ok: false; error: string };

export interface Loopback {
  port: number;
  result: Promise<Callback>;
  close(): Promise<void>;
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body style="font:16px system-ui;margin:15vh auto;max-width:32em"><h1>${title}</h1><p>${text}</p></body></html>`;


export async function startLoopback(state: string): Promise<Loopback> {
  let settle!: (cb: Callback) => void;
  const result = new Promise<Callback>((r) => (settle = r));
  const server: Server = createServer((req, res) => {
    const send = (status: number, title: string, text: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' });
      res.end(PAGE(title, text));
    };
    if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/callback') return send(404, 'Not found', 'This is the svc CLI login listener.');
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > 16_384) req.destroy();
    });
    req.on('end', () => {
      const form = new URLSearchParams(body);
      if (!same(form.get('state') ?? '', state)) return send(400, 'Login link mismatch', 'This response does not belong to the login waiting in your terminal.');
      const error = form.get('error');
      if (error) {
        send(200, 'Login denied', 'The CLI login was denied. You can close this tab.');
        return settle({ ok: false, error });
      }
      const apiKey = form.get('apiKey');
      if (!apiKey) return send(400, 'Missing key', 'The response carried no key.');
      send(200, 'svc CLI login complete', 'The key was handed to the CLI. You can close this tab and return to your terminal.');
      settle({ ok: true, apiKey, keyId: form.get('keyId') || null, role: form.get('role') || null, org: form.get('org') || null });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    result,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
