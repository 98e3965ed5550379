import { afterEach, describe, expect, it } from 'vitest';
import { runnerHash } from '../../shared/ids.ts';
import { call, makeRunner, TEST_PUBLIC_URL } from './runner.fixture.ts';
import type { Runner } from './runner.ts';

let runner: Runner | undefined;
afterEach(async () => {
  await runner?.close();
  runner = undefined;
});

describe('runner info and probes', () => {
  it('describes itself with the hash of its public URL, its toolkit and no substrates', async () => {
    runner = makeRunner();
    const res = await call(runner, 'GET', '/runner/info');
    expect(res.status).toBe(200);
    const info = await res.json();
    expect(info).toMatchObject({
      id: `runner-${runnerHash(TEST_PUBLIC_URL)}`,
      hash: runnerHash(TEST_PUBLIC_URL),
      version: '0.0.0-test',
      toolkitNames: ['fs_read', 'fs_write', 'fs_edit', 'fs_list', 'fs_search', 'run_command', 'delegate', 'notify'],
      substrates: [],
      substratesKnown: true,
      mcpBaseUrl: `${TEST_PUBLIC_URL}/runner/sessions`,
    });
    expect(info.capabilities).toEqual(expect.arrayContaining(['toolkit', 'mcp', 'vfs']));
    expect(info.hash).toMatch(/^[0-9a-f]{8}$/);
    expect(Date.parse(info.startedAt)).not.toBeNaN();
    expect(runner.info()).toEqual(info);
  });

  it('answers /healthz with plain ok and /metrics in Prometheus text', async () => {
    runner = makeRunner();
    const health = await call(runner, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(await health.text()).toBe('ok');
    const metrics = await call(runner, 'GET', '/metrics');
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await metrics.text();
    expect(text).toContain('# TYPE svc_runner_runs_started_total counter');
    expect(text).toContain('svc_runner_sessions{status="idle"} 0');
  });

  it('answers unknown routes with a JSON error naming the route', async () => {
    runner = makeRunner();
    const res = await call(runner, 'GET', '/runner/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'no route for GET /runner/nope' });
  });
});

describe('internal token', () => {
  it('rejects /runner routes without the token with 401 and a JSON error', async () => {
    runner = makeRunner({ internalToken: 's3cret' });
    const res = await call(runner, 'GET', '/runner/info');
    expect(res.status).toBe(401);
    expect((await res.json()).error).toMatch(/internal token/);
  });

  it('rejects a wrong token of the same length', async () => {
    runner = makeRunner({ internalToken: 's3cret' });
    expect((await call(runner, 'GET', '/runner/sessions', { token: 's3cres' })).status).toBe(401);
  });

  it('lets the right token through', async () => {
    runner = makeRunner({ internalToken: 's3cret' });
    expect((await call(runner, 'GET', '/runner/info', { token: 's3cret' })).status).toBe(200);
  });

  it('does not ask workers calling a session MCP endpoint for the internal token', async () => {
    runner = makeRunner({ internalToken: 's3cret' });
    expect((await call(runner, 'POST', '/runner/sessions/sess-x/mcp')).status).not.toBe(401);
    expect((await call(runner, 'GET', '/runner/sessions/sess-x')).status).toBe(401);
  });

  it('keeps /healthz and /metrics open', async () => {
    runner = makeRunner({ internalToken: 's3cret' });
    expect((await call(runner, 'GET', '/healthz')).status).toBe(200);
    expect((await call(runner, 'GET', '/metrics')).status).toBe(200);
  });
});

describe('tenant header', () => {
  it('rejects a malformed tenant id with 400 naming the header', async () => {
    runner = makeRunner();
    const res = await call(runner, 'GET', '/runner/sessions', { tenant: 'bad tenant!' });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^X-Svc-Tenant: /);
  });
});
