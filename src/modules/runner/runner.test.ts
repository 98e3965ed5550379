import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  it('describes itself with the hash of its public URL, its toolkit and the process substrate', async () => {
    runner = makeRunner();
    const res = await call(runner, 'GET', '/runner/info');
    expect(res.status).toBe(200);
    const info = await res.json();
    expect(info).toMatchObject({
      id: `runner-${runnerHash(TEST_PUBLIC_URL)}`,
      hash: runnerHash(TEST_PUBLIC_URL),
      version: '0.0.0-test',
      toolkitNames: ['fs_read', 'fs_write', 'fs_edit', 'fs_list', 'fs_search', 'run_command', 'delegate', 'notify', 'automation_memory', 'memory', 'memory_search'],
      substrates: ['process'],
      defaultSubstrate: 'process',
      substratesKnown: true,
      mcpBaseUrl: `${TEST_PUBLIC_URL}/runner/sessions`,
      // the start-up probe ran a no-op in bubblewrap (installed by .ci/run)
      sandbox: { mode: 'bwrap', available: true, detail: expect.stringMatching(/^bubblewrap /) },
    });
    expect(info.capabilities).toEqual(expect.arrayContaining(['toolkit', 'mcp', 'vfs']));
    expect(info.hash).toMatch(/^[0-9a-f]{8}$/);
    expect(Date.parse(info.startedAt)).not.toBeNaN();
    expect(runner.info()).toEqual(info);
  });

  it('offers no substrate without bubblewrap, and unisolated processes only when the operator opted out', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'svc-no-bwrap-'));
    try {
      runner = makeRunner({ config: { searchPath: empty } });
      expect(await (await call(runner, 'GET', '/runner/info')).json()).toMatchObject({ substrates: [], defaultSubstrate: 'process', substratesKnown: true });
      await runner.close();
      runner = makeRunner({ config: { searchPath: empty, sandbox: 'off' } });
      expect(await (await call(runner, 'GET', '/runner/info')).json()).toMatchObject({ substrates: ['process'], substratesKnown: true });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
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
    const res = await call(runner, 'GET', '/runner/info', { token: null });
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

  it('asks workers calling a session MCP endpoint for the session token, not the internal token', async () => {
    runner = makeRunner({ internalToken: 's3cret' });
    const withInternal = await call(runner, 'POST', '/runner/sessions/sess-x/mcp', { token: 's3cret' });
    expect(withInternal.status).toBe(401);
    expect((await withInternal.json()).error).toMatch(/^invalid or missing worker token/);
    const minted = new URL(runner.sessionMcpUrl('sess-x'));
    expect((await call(runner, 'POST', `${minted.pathname}${minted.search}`, { token: null })).status).toBe(404);
    expect((await call(runner, 'GET', '/runner/sessions/sess-x', { token: null })).status).toBe(401);
  });

  it('keeps /healthz and /metrics open', async () => {
    runner = makeRunner({ internalToken: 's3cret' });
    expect((await call(runner, 'GET', '/healthz', { token: null })).status).toBe(200);
    expect((await call(runner, 'GET', '/metrics', { token: null })).status).toBe(200);
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
