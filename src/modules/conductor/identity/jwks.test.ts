import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as jose from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createJwksCache } from './jwks.ts';

/**
 * The JWKS cache against a real HTTP server that counts its hits; only the clock is faked (Date), to step through
 * the windows without waiting.
 */
let server: Server;
let url: string;
let hits = 0;
let answer: 'keys' | 'error' = 'keys';
let key: jose.CryptoKey;
let jwk: jose.JWK;

beforeAll(async () => {
  const pair = await jose.generateKeyPair('RS256');
  key = pair.privateKey;
  jwk = { ...(await jose.exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' };
  server = createServer((_req, res) => {
    hits++;
    if (answer === 'error') return void res.writeHead(500).end('down');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
afterEach(() => {
  vi.useRealTimers();
  answer = 'keys';
});

const sign = (kid: string) => new jose.SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'RS256', kid }).setIssuedAt().setExpirationTime('1h').sign(key);
const fresh = () => createJwksCache({ fetch: (u, init) => fetch(u, init) });
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'verified',
    (err: Error) => err.message,
  );

describe('JWKS documents, cached per URL', () => {
  it('fetches a failing document once per backoff window, however many tokens arrive, and doubles the window', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    answer = 'error';
    const keys = fresh().keysOf(url);
    const start = hits;
    const token = await sign('k1');
    for (let i = 0; i < 20; i++) expect(await outcome(jose.jwtVerify(token, keys))).toBe('the JWKS document answered HTTP 500');
    expect(hits - start).toBe(1);
    vi.setSystemTime(Date.now() + 30_000);
    await outcome(jose.jwtVerify(token, keys));
    expect(hits - start).toBe(2);
    // the second failure holds for 60 s
    vi.setSystemTime(Date.now() + 30_000);
    await outcome(jose.jwtVerify(token, keys));
    expect(hits - start).toBe(2);
    vi.setSystemTime(Date.now() + 30_000);
    answer = 'keys';
    expect(await outcome(jose.jwtVerify(token, keys))).toBe('verified');
    expect(hits - start).toBe(3);
  });

  it('shares one fetch among concurrent tokens, and refetches for an unknown key id at most once per cooldown', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const keys = fresh().keysOf(url);
    const start = hits;
    const good = await sign('k1');
    expect(await Promise.all(Array.from({ length: 20 }, () => outcome(jose.jwtVerify(good, keys))))).toEqual(Array(20).fill('verified'));
    expect(hits - start).toBe(1);
    const stranger = await sign('someone-else');
    for (let i = 0; i < 20; i++) expect(await outcome(jose.jwtVerify(stranger, keys))).toMatch(/no applicable key found in the JSON Web Key Set/);
    expect(hits - start).toBe(1);
    vi.setSystemTime(Date.now() + 30_000);
    await outcome(jose.jwtVerify(stranger, keys));
    await outcome(jose.jwtVerify(stranger, keys));
    expect(hits - start).toBe(2);
  });

  it('keeps verifying with the keys it holds while their document cannot be fetched again', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const keys = fresh().keysOf(url);
    const start = hits;
    const good = await sign('k1');
    expect(await outcome(jose.jwtVerify(good, keys))).toBe('verified');
    answer = 'error';
    vi.setSystemTime(Date.now() + 10 * 60_000);
    for (let i = 0; i < 5; i++) expect(await outcome(jose.jwtVerify(good, keys))).toBe('verified');
    expect(hits - start).toBe(2);
  });

  it('names a document that is not a key set', async () => {
    const notKeys = createJwksCache({ fetch: async () => Response.json({ hello: 'world' }) }).keysOf('https://idp.example/jwks');
    expect(await outcome(jose.jwtVerify(await sign('k1'), notKeys))).toMatch(/^the JWKS document is not a JSON Web Key Set/);
  });
});
