import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/** One malformed request: what is sent, and the 4xx a client must get back. */
interface Case {
  name: string;
  method: string;
  path: string;
  key?: string | null;
  headers?: Record<string, string>;
  body?: string;
  status: number;
  error?: RegExp;
}

const json = { 'content-type': 'application/json' };
const big = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) });

const CASES: Case[] = [
  // Credentials
  { name: 'no Authorization header', method: 'GET', path: '/api/whoami', key: null, status: 401, error: /missing bearer/ },
  { name: 'Basic instead of Bearer', method: 'GET', path: '/api/whoami', key: null, headers: { authorization: 'Basic dXNlcjpwYXNz' }, status: 401 },
  { name: 'Bearer with no token', method: 'GET', path: '/api/whoami', key: null, headers: { authorization: 'Bearer ' }, status: 401 },
  { name: 'Bearer with two tokens', method: 'GET', path: '/api/whoami', key: null, headers: { authorization: 'Bearer a b' }, status: 401 },
  { name: 'ao_ key of the wrong shape', method: 'GET', path: '/api/whoami', key: 'ao_test_short', status: 401, error: /invalid API key/ },
  { name: 'ao_ key with a bad environment', method: 'GET', path: '/api/whoami', key: 'ao_TEST_abcdefghijklmnopqrstuvwxyz', status: 401 },
  { name: 'unknown well-formed key', method: 'GET', path: '/api/whoami', key: 'ao_test_abcdefghijklmnopqrstuvwxyz012345', status: 401 },
  { name: 'garbage session token', method: 'GET', path: '/api/whoami', key: 'not-a-jwt', status: 401 },
  { name: 'JWT with an unsigned alg', method: 'GET', path: '/api/whoami', key: 'eyJhbGciOiJub25lIn0.eyJ0ZW5hbnRfaWQiOiJkZWZhdWx0In0.', status: 401 },
  { name: 'forged HS256 run token', method: 'GET', path: '/api/whoami', key: 'eyJhbGciOiJIUzI1NiJ9.eyJ0ZW5hbnRfaWQiOiJkZWZhdWx0IiwiaXNzIjoic3ZjLWNvbmR1Y3RvciJ9.c2lnbmF0dXJl', status: 401 },
  { name: 'RS256 session token without configured issuer', method: 'GET', path: '/api/whoami', key: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln', status: 401, error: /not configured/ },
  { name: 'unauthenticated write', method: 'POST', path: '/api/api-keys', key: null, headers: json, body: '{"name":"x"}', status: 401 },
  // Bodies
  { name: 'empty body', method: 'POST', path: '/api/api-keys', headers: json, body: '', status: 400, error: /JSON object is required/ },
  { name: 'whitespace body', method: 'POST', path: '/api/api-keys', headers: json, body: '   ', status: 400 },
  { name: 'truncated JSON', method: 'POST', path: '/api/api-keys', headers: json, body: '{"name":', status: 400, error: /malformed JSON/ },
  { name: 'trailing garbage', method: 'POST', path: '/api/api-keys', headers: json, body: '{"name":"x"} trailing', status: 400, error: /malformed JSON/ },
  { name: 'single quotes', method: 'POST', path: '/api/api-keys', headers: json, body: "{'name':'x'}", status: 400 },
  { name: 'JSON array instead of object', method: 'POST', path: '/api/api-keys', headers: json, body: '[1,2]', status: 400, error: /^body: / },
  { name: 'JSON string instead of object', method: 'POST', path: '/api/api-keys', headers: json, body: '"name"', status: 400 },
  { name: 'JSON null', method: 'POST', path: '/api/api-keys', headers: json, body: 'null', status: 400 },
  { name: 'JSON number', method: 'POST', path: '/api/api-keys', headers: json, body: '42', status: 400 },
  { name: 'form-encoded body', method: 'POST', path: '/api/api-keys', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=x', status: 400 },
  { name: 'bad escape in a string', method: 'POST', path: '/api/api-keys', headers: json, body: '{"name":"a\\uZZZZb"}', status: 400, error: /malformed JSON/ },
  { name: 'body over the size limit', method: 'POST', path: '/api/api-keys', headers: json, body: big, status: 413, error: /exceeds/ },
  // Fields
  { name: 'missing name', method: 'POST', path: '/api/api-keys', headers: json, body: '{}', status: 400, error: /^name: / },
  { name: 'name is a number', method: 'POST', path: '/api/api-keys', headers: json, body: '{"name":5}', status: 400, error: /^name: expected string/ },
  { name: 'name is null', method: 'POST', path: '/api/api-keys', headers: json, body: '{"name":null}', status: 400, error: /^name: / },
  { name: 'name is an object', method: 'POST', path: '/api/api-keys', headers: json, body: '{"name":{}}', status: 400, error: /^name: / },
  { name: 'name is empty', method: 'POST', path: '/api/api-keys', headers: json, body: '{"name":""}', status: 400, error: /^name: / },
  { name: 'name is blank', method: 'POST', path: '/api/api-keys', headers: json, body: '{"name":"   "}', status: 400, error: /^name: / },
  { name: 'name too long', method: 'POST', path: '/api/api-keys', headers: json, body: JSON.stringify({ name: 'x'.repeat(201) }), status: 400, error: /^name: / },
  { name: 'expiresAt not a timestamp', method: 'POST', path: '/api/api-keys', headers: json, body: '{"name":"x","expiresAt":"tomorrow"}', status: 400, error: /^expiresAt: / },
  { name: 'expiresAt a number', method: 'POST', path: '/api/api-keys', headers: json, body: '{"name":"x","expiresAt":1234}', status: 400, error: /^expiresAt: / },
  { name: 'expiresAt in the past', method: 'POST', path: '/api/api-keys', headers: json, body: '{"name":"x","expiresAt":"2000-01-01T00:00:00Z"}', status: 400, error: /^expiresAt: / },
  { name: 'tenant id not a slug', method: 'POST', path: '/api/tenants', headers: json, body: '{"id":"Bad Id","name":"x"}', status: 400, error: /^id: / },
  { name: 'tenant id too long', method: 'POST', path: '/api/tenants', headers: json, body: JSON.stringify({ id: 'a'.repeat(80), name: 'x' }), status: 400, error: /^id: / },
  { name: 'tenant without name', method: 'POST', path: '/api/tenants', headers: json, body: '{"id":"ok-id"}', status: 400, error: /^name: / },
  { name: 'tenant metadata not an object', method: 'POST', path: '/api/tenants', headers: json, body: '{"id":"ok-id","name":"x","metadata":[1]}', status: 400, error: /^metadata: / },
  { name: 'tenant update with a numeric name', method: 'PUT', path: '/api/tenants/default', headers: json, body: '{"name":7}', status: 400, error: /^name: / },
  { name: 'duplicate tenant', method: 'POST', path: '/api/tenants', headers: json, body: '{"id":"default","name":"again"}', status: 409 },
  { name: 'deleting tenant default', method: 'DELETE', path: '/api/tenants/default', status: 400, error: /cannot be deleted/ },
  // Resources and routes
  { name: 'unknown tenant', method: 'GET', path: '/api/tenants/nope', status: 404 },
  { name: 'revoking an unknown key', method: 'DELETE', path: '/api/api-keys/key_nope', status: 404, error: /unknown API key/ },
  { name: 'unknown /api route', method: 'GET', path: '/api/definitely-not-here', status: 404 },
  { name: 'unknown top-level route', method: 'GET', path: '/nothing', key: null, status: 404, error: /no route/ },
  { name: 'wrong method on whoami', method: 'DELETE', path: '/api/whoami', status: 404 },
  { name: 'wrong method on healthz', method: 'POST', path: '/healthz', key: null, status: 404 },
  { name: 'percent-encoded garbage in a path', method: 'GET', path: '/api/tenants/%E0%A4%A', status: 404 },
  { name: 'very long path segment', method: 'GET', path: `/api/tenants/${'x'.repeat(5000)}`, status: 404 },
  { name: 'NUL byte in a path parameter', method: 'DELETE', path: '/api/api-keys/%00', status: 404, error: /unknown API key/ },
];

describe('malformed requests', () => {
  let svc: TestSvc;
  beforeAll(async () => {
    svc = await startTestSvc({ AGENT_ORC_ADMIN_TENANT: 'default' });
  });
  afterAll(async () => svc?.stop());

  it('covers at least fifty kinds', () => {
    expect(new Set(CASES.map((c) => c.name)).size).toBeGreaterThanOrEqual(50);
  });

  it.each([
    ['an unauthenticated upload', '/v1/skills', { 'content-type': 'application/json' }, `{"name":"${'x'.repeat(1_250_000)}"}`, 401],
    ['an unauthenticated write', '/api/profiles', { 'content-type': 'application/json' }, `{"name":"${'x'.repeat(900_000)}"}`, 401],
    ['a dashboard form over its limit', '/dashboard/sign-in', { 'content-type': 'application/x-www-form-urlencoded' }, `key=${'x'.repeat(1_250_000)}`, 413],
  ])('answers %s without reading its body and the next request on the same connection still works', async (_, path, headers, body, status) => {
    // the client reuses its kept-alive connection; the unread rest of the first body used to cut the second one off
    for (let i = 0; i < 3; i++) {
      const res = await fetch(svc.url + path, { method: 'POST', headers, body });
      expect(res.status).toBe(status);
      await res.arrayBuffer();
    }
  });

  it.each(CASES)('answers "$name" with a 4xx JSON error, never a 500', async (c) => {
    const res = await svc.api(c.path, { method: c.method, headers: c.headers, body: c.body, key: c.key === undefined ? svc.key : c.key });
    expect(res.status).toBe(c.status);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const body = await res.json();
    expect(typeof body.error).toBe('string');
    expect(body.error).not.toMatch(/\n\s+at /); // no stack traces
    if (c.error) expect(body.error).toMatch(c.error);
  });
});
