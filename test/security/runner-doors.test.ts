import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspectRoutes } from 'hono/dev';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { listen, type Listening } from '../support/listen.ts';
import { runSvc } from '../support/process.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { startOperatorSvc } from '../support/tenants.ts';
import { serve, tempDir, type Served } from './support.ts';

/**
 * Issue 12, items 1 and 2: no runner route answers a caller without a credential. In role `all` the runner is reached
 * in-process only (its routes are not on the public port, except the session MCP endpoint); a runner of its own
 * answers only the internal token; a session's MCP endpoint answers only that session's token.
 */
const OWNER_KEY = 'ao_test_securitysecuritysecurity01';
const INTERNAL = 'doors-internal-token-0123456789';
const started: Served[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) await s.stop();
});

async function start(args: string[], env: Record<string, string>): Promise<Served> {
  const s = await serve(args, { SVC_LOG_LEVEL: 'warn', ...env }, OWNER_KEY, { database: args.some((a) => /conductor|all/.test(a)) });
  started.push(s);
  return s;
}

const RUNNER_CALLS: Array<[string, string, unknown?]> = [
  ['GET', '/runner/info'],
  ['GET', '/runner/sessions'],
  ['POST', '/runner/profiles', { profile: { name: 'pwn', runtime: 'general', tools: ['@exec'] } }],
  ['POST', '/runner/sessions', { profileName: 'pwn' }],
  ['POST', '/runner/sessions/sess-x/toolkit/invoke', { toolName: 'run_command', input: { command: 'id' } }],
  ['POST', '/runner/run', { subTask: { profile: 'pwn', prompt: 'hi' } }],
  ['GET', '/runner/vfs/leases'],
];

const send = (base: string, [method, path, body]: [string, string, unknown?], headers: Record<string, string> = {}) =>
  fetch(base + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });

describe('item 1: the runner has no unauthenticated door', () => {
  it('serves no runner route on the public port of svc serve --role=all', async () => {
    const svc = await start(['--role=all'], { SVC_BOOTSTRAP_TOKEN: OWNER_KEY });
    for (const call of RUNNER_CALLS) {
      for (const headers of [{}, { 'X-Svc-Internal-Token': 'Bearer guessed', 'X-Svc-Tenant': 'default' }] as Array<Record<string, string>>) {
        const res = await send(svc.url, call, headers);
        expect({ call: call.slice(0, 2), status: res.status }).toEqual({ call: call.slice(0, 2), status: 404 });
        expect((await res.json()).error).toBe(`no route for ${call[0]} ${call[1]}`);
      }
    }
    // what workers reach over HTTP stays, behind the session's token
    const mcp = await send(svc.url, ['POST', '/runner/sessions/sess-x/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }]);
    expect(mcp.status).toBe(401);
    // the /v1 function tools answer run tokens only
    expect((await svc.api('/api/agent-sessions/sess-x/function-tools/mcp', { method: 'POST', key: '', json: {} })).status).toBe(401);
    expect((await svc.api('/api/agent-sessions/sess-x/function-tools/mcp', { method: 'POST', json: {} })).status).toBe(403);
    // and the in-process runner still works: a run with the file tools goes through
    expect((await svc.api('/api/profiles', { json: { name: 'helper', runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
    expect((await svc.api('/api/runs', { json: { profile: 'helper', prompt: 'hello' } })).status).toBe(202);
  });

  it('answers a runner of its own only with the internal token, generated in the secrets folder in dev', async () => {
    const runner = await start(['--role=runner'], {});
    for (const call of RUNNER_CALLS) {
      for (const headers of [{}, { 'X-Svc-Internal-Token': 'Bearer guessed' }, { Authorization: `Bearer ${OWNER_KEY}` }] as Array<Record<string, string>>) {
        const res = await send(runner.url, call, headers);
        expect({ call: call.slice(0, 2), status: res.status }).toEqual({ call: call.slice(0, 2), status: 401 });
        expect((await res.json()).error).toMatch(/internal token/);
      }
    }
    const tokenFile = join(runner.dataDir, 'secrets', 'internal-token');
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(token.length).toBeGreaterThanOrEqual(32);
    const info = await send(runner.url, RUNNER_CALLS[0], { 'X-Svc-Internal-Token': `Bearer ${token}` });
    expect(info.status).toBe(200);
    // and it reports the sandbox it proved at start
    expect((await info.json()).sandbox).toMatchObject({ mode: 'bwrap', available: true });
    // a conductor sharing the data folder finds the same token and drives this runner
    const conductor = await start(['--role=conductor'], {
      SVC_BOOTSTRAP_TOKEN: OWNER_KEY,
      SVC_DATA_DIR: runner.dataDir,
      SVC_RUNNERS: runner.url,
    });
    expect((await conductor.api('/api/profiles', { json: { name: 'helper', runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
    const run = await conductor.api('/api/runs', { json: { profile: 'helper', prompt: 'hello' } });
    expect({ status: run.status, body: await run.json() }).toMatchObject({ status: 202, body: { runId: expect.any(String) } });
  });

  it('refuses to boot split roles outside dev without SVC_INTERNAL_TOKEN', async () => {
    for (const role of ['runner', 'conductor']) {
      const res = await runSvc(['serve', `--role=${role}`, '--port=0'], { AGENT_ORC_ENV: 'live', AGENT_API_KEY_PEPPER: 'p'.repeat(32), SVC_SECRETS_KEY: 's'.repeat(32), SVC_DATA_DIR: tempDir('live'), DATABASE_URL: 'memory' }, 20_000);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/SVC_INTERNAL_TOKEN: required when AGENT_ORC_ENV is "live"/);
    }
  });
});

describe('item 2: a session MCP endpoint answers that session\'s runs only', () => {
  let worker: Listening | undefined;
  afterAll(() => worker?.close());

  it('needs the session token its runs receive, even from a caller holding the internal token', async () => {
    // a stand-in worker that records the run bodies the runner sends it and finishes each run at once
    const bodies: Array<{ sessionId: string; sessionMcpUrl: string }> = [];
    worker = await listen(async (req) => {
      if (new URL(req.url).pathname === '/health') return Response.json({ ok: true, runtime: 'general' });
      bodies.push((await req.json()) as { sessionId: string; sessionMcpUrl: string });
      return new Response(`${JSON.stringify({ type: 'result', message: 'done' })}\n`, { headers: { 'content-type': 'application/x-ndjson' } });
    });
    const runner = await start(['--role=runner'], { SVC_INTERNAL_TOKEN: INTERNAL, SVC_WORKER_URL: worker.url });
    const internal = { 'X-Svc-Internal-Token': `Bearer ${INTERNAL}`, 'X-Svc-Tenant': 'acme' };
    expect((await send(runner.url, ['POST', '/runner/profiles', { profile: { name: 'builder', runtime: 'general', tools: ['@all'] } }], internal)).status).toBe(204);
    const sessions: string[] = [];
    for (let i = 0; i < 2; i++) sessions.push((await (await send(runner.url, ['POST', '/runner/sessions', { profileName: 'builder' }], internal)).json()).sessionId);
    for (const sessionId of sessions) {
      const run = await send(runner.url, ['POST', '/runner/run', { subTask: { profile: 'builder', sessionId, prompt: 'go' } }], internal);
      expect(await run.text()).toContain('"result"');
    }
    const [a, b] = sessions.map((id) => bodies.find((body) => body.sessionId === id)!.sessionMcpUrl);

    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fs_write', arguments: { path: 'owned.txt', content: 'x' } } };
    const mcp = (url: string, headers: Record<string, string> = {}) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(call) });
    const bare = `${runner.url}/runner/sessions/${sessions[0]}/mcp`;
    const tokenOfB = new URL(b).search;
    for (const [url, headers] of [[bare, {}], [bare, internal], [`${bare}${tokenOfB}`, {}], [`${bare}?svc_worker_token=${'A'.repeat(40)}.${'B'.repeat(43)}`, {}]] as const) {
      const res = await mcp(url, headers);
      expect(res.status).toBe(401);
      expect((await res.json()).error).toMatch(/^invalid or missing worker token/);
    }
    // the URL the session's own run received carries its token, and works
    expect(new URL(a).searchParams.get('svc_worker_token')).toBeTruthy();
    const own = await mcp(`${bare}${new URL(a).search}`);
    expect(own.status).toBe(200);
    expect(JSON.stringify(await own.json())).toContain('owned.txt');
  });
});

describe('every route the runner mounts (read from the app, so routes added later are covered)', () => {
  const instances: TestSvc[] = [];
  afterAll(async () => {
    for (const svc of instances) await svc.stop().catch(() => {});
  });
  /** Each runner-owned route of an app, its parameters filled with a made-up id, ALL sent as POST. */
  const runnerRoutes = (svc: TestSvc) => {
    const seen = new Map<string, [string, string]>();
    for (const r of inspectRoutes(svc.server.built.app)) {
      if (r.isMiddleware || !/^\/(runner|worker\/sessions)\//.test(r.path)) continue;
      const method = r.method === 'ALL' ? 'POST' : r.method;
      seen.set(`${method} ${r.path}`, [method, r.path.replace(/:[A-Za-z]+/g, 'sess-made-up')]);
    }
    return [...seen.values()];
  };
  // the session MCP endpoint and the relays of its runs' stdio MCP servers (same token)
  const isSessionMcp = (path: string) => /^\/runner\/sessions\/[^/]+\/mcp(\/(stdio|server)\/[^/]+)?$/.test(path);
  const isWorkerCallback = (path: string) => path.startsWith('/worker/sessions/');

  it('answers every /runner route of a runner of its own 401 without the internal token, and its worker callbacks 401 without a worker token', async () => {
    const runner = await startTestSvc({ SVC_DATA_DIR: tempDir('every-runner'), SVC_INTERNAL_TOKEN: INTERNAL, SVC_LOG_LEVEL: 'error' }, 'runner');
    instances.push(runner);
    const routes = runnerRoutes(runner);
    expect(routes.length).toBeGreaterThan(25);
    for (const [method, path] of routes) {
      for (const headers of [{}, { 'X-Svc-Internal-Token': 'Bearer guessed' }, { 'X-Svc-Internal-Token': INTERNAL }, { Authorization: `Bearer ${INTERNAL}` }] as Array<Record<string, string>>) {
        const res = await send(runner.url, [method, path, method === 'GET' || method === 'DELETE' ? undefined : {}], headers);
        expect({ route: `${method} ${path}`, status: res.status }).toEqual({ route: `${method} ${path}`, status: 401 });
        const { error } = await res.json();
        expect(error).toMatch(isSessionMcp(path) || isWorkerCallback(path) ? /worker token/ : /internal token/);
      }
    }
  });

  it('serves none of them on the public port of role all, except the session MCP endpoint and worker callbacks, which ask for their tokens', async () => {
    const all = await startOperatorSvc({ SVC_DATA_DIR: tempDir('every-all'), SVC_LOG_LEVEL: 'error' });
    instances.push(all);
    const runner = await startTestSvc({ SVC_DATA_DIR: tempDir('every-runner-2'), SVC_INTERNAL_TOKEN: INTERNAL, SVC_LOG_LEVEL: 'error' }, 'runner');
    instances.push(runner);
    // the runner's own list: what role all would serve if it mounted the runner's app
    for (const [method, path] of runnerRoutes(runner)) {
      const res = await send(all.url, [method, path, method === 'GET' || method === 'DELETE' ? undefined : {}], { 'X-Svc-Internal-Token': 'Bearer guessed' });
      const open = isSessionMcp(path) || isWorkerCallback(path);
      expect({ route: `${method} ${path}`, status: res.status }).toEqual({ route: `${method} ${path}`, status: open ? 401 : 404 });
    }
  });
});
