import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as jose from 'jose';

/**
 * A fake identity provider at its HTTP boundary: a JWKS endpoint on 127.0.0.1 serving one RS256 public key, and a
 * signer for the session tokens (JWTs) the dashboard would receive from it. Point SVC_JWT_JWKS_URL at `jwksUrl`.
 */
export interface FakeIdp {
  issuer: string;
  jwksUrl: string;
  /** A session token for `claims` (`tenant_id`, `role`, `sub`, …), valid for an hour. */
  sign(claims: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startFakeIdp(issuer = 'https://idp.example.test/'): Promise<FakeIdp> {
  const { publicKey, privateKey } = await jose.generateKeyPair('RS256');
  const jwk = { ...(await jose.exportJWK(publicKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
  const server = createServer((req, res) => {
    if (req.url !== '/.well-known/jwks.json') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    issuer,
    jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    sign: (claims) =>
      new jose.SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key-1' }).setIssuer(issuer).setIssuedAt().setExpirationTime('1h').sign(privateKey),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
