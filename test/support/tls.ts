import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Listening } from './listen.ts';

/**
 * HTTPS for fakes whose real counterparts must be HTTPS (vault credentials take only https MCP servers and token
 * endpoints): a self-signed certificate for 127.0.0.1 made by the system's `openssl`, trusted by this process's TLS
 * clients (global fetch, undici) through `tls.setDefaultCACertificates` — the in-process svc's worker among them.
 */
export interface TestCert {
  key: string;
  cert: string;
}

export function selfSignedCert(): TestCert {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tls-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Adds the certificate to the CAs this process's TLS clients trust by default; returns the undo. */
export function trustCert(c: TestCert): () => void {
  const before = tls.getCACertificates('default');
  tls.setDefaultCACertificates([...before, c.cert]);
  return () => tls.setDefaultCACertificates(before);
}

/** Serves a fetch handler over HTTPS on 127.0.0.1 and an ephemeral port. */
export function listenTls(fetch: (request: Request) => Response | Promise<Response>, c: TestCert): Promise<Listening> {
  return new Promise((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1', createServer: createHttpsServer, serverOptions: { key: c.key, cert: c.cert } }, (info: AddressInfo) => {
      resolve({
        url: `https://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            if ('closeAllConnections' in server) server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
