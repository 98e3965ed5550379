import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSvc } from '../support/svc.ts';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { sseFrames, type RunEventLike } from '../support/sse.ts';
import { expectAnswerDocumented, type OpenApiDocument } from '../support/openapi-contract.ts';

/**
 * The API reference's answers match the real ones: for the core of /api (runs, profiles, sessions, keys, tenants and
 * their limits, approvals, capability bundles, connected apps, the device login), real answers of a server that ran a
 * demo-model run and a tool call held for approval (the fake model provider) are checked against the response schema
 * /openapi.json documents for them.
 */
describe('the documented answers of the core /api routes', () => {
  let h: AgentsHarness;
  let svc: TestSvc;
  let spec: OpenApiDocument;
  let runId: string;
  let sessionId: string;
  beforeAll(async () => {
    h = await startAgentsHarness();
    svc = h.svc;
    spec = (await (await fetch(`${svc.url}/openapi.json`)).json()) as OpenApiDocument;
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  /** Calls the route, expects `status`, and checks the body against the reference's schema for `method path status`. */
  async function check(method: string, path: string, openApiPath: string, status: number, json?: unknown, key?: string | null): Promise<any> {
    const res = await svc.api(path, { method, json, key });
    const body = await res.json();
    expect(res.status, `${method} ${path}: ${JSON.stringify(body)}`).toBe(status);
    expectAnswerDocumented(spec, method, openApiPath, status, body);
    return body;
  }

  it('documents profiles as they are answered', async () => {
    await check('POST', '/api/profiles', '/api/profiles', 201, { name: 'demo', runtime: 'general', model: 'demo:echo', systemPrompt: 'Be brief.', tools: ['@default'] });
    await check('GET', '/api/profiles', '/api/profiles', 200);
    await check('GET', '/api/profiles/demo', '/api/profiles/{name}', 200);
    await check('PUT', '/api/profiles/demo', '/api/profiles/{name}', 200, { name: 'demo', runtime: 'general', model: 'demo:echo', systemPrompt: 'Be very brief.' });
    await check('POST', '/api/profiles/demo/pin', '/api/profiles/{name}/pin', 200);
    await check('DELETE', '/api/profiles/demo/pin', '/api/profiles/{name}/pin', 200);
    const history = await check('GET', '/api/profiles/demo/history', '/api/profiles/{name}/history', 200);
    expect(history.length).toBe(2);
    await check('POST', '/api/profiles/helper', '/api/profiles/helper', 201);
  });

  it('documents a run, its list and its session as they are answered', async () => {
    const created = await check('POST', '/api/runs', '/api/runs', 202, { profile: 'demo', prompt: 'hello' });
    runId = created.runId;
    sessionId = created.sessionId;
    // the stream ends with the run's terminal event: the run is finished when it closes
    const stream = await (await svc.api(`/api/runs/${runId}/stream`)).text();
    expect(stream).toContain('"type":"result"');
    const run = await check('GET', `/api/runs/${runId}`, '/api/runs/{id}', 200);
    expect(run).toMatchObject({ status: 'ok', events: expect.arrayContaining([expect.objectContaining({ type: 'result', message: 'demo reply: hello' })]) });
    await check('GET', '/api/runs?limit=5', '/api/runs', 200);
    await check('GET', '/api/profiles/demo/runs', '/api/profiles/{name}/runs', 200);
    await check('GET', '/api/profiles/demo/usage', '/api/profiles/{name}/usage', 200);
    await check('POST', `/api/runs/${runId}/terminate`, '/api/runs/{id}/terminate', 200);
    await check('GET', `/api/sessions/${sessionId}`, '/api/sessions/{id}', 200);
    await check('GET', `/api/sessions/${sessionId}/runs`, '/api/sessions/{id}/runs', 200);
    await check('GET', `/api/sessions/${sessionId}/vfs`, '/api/sessions/{id}/vfs', 200);
    await check('POST', '/api/sessions', '/api/sessions', 201, { profile: 'demo' });
    const sessions = await check('GET', '/api/sessions', '/api/sessions', 200);
    expect(sessions.length).toBe(2);
    await check('GET', '/api/sessions/rail', '/api/sessions/rail', 200);
    await check('GET', '/api/vfs/leases', '/api/vfs/leases', 200);
    await check('GET', '/api/worker/leases', '/api/worker/leases', 200);
    await check('GET', `/api/runs/${runId}/approvals`, '/api/runs/{id}/approvals', 200);
    await check('GET', '/api/approvals?status=pending', '/api/approvals', 200);
  }, 60_000);

  it('documents approvals and the events of a run that waited for one as they are answered', async () => {
    const asker = { name: 'asker', runtime: 'general', model: 'openai-compatible:fake-model', tools: ['@files'], permissions: { fs_write: 'ask', '*': 'allow' } };
    await check('POST', '/api/profiles', '/api/profiles', 201, asker);
    const { runId: held } = await check('POST', '/api/runs', '/api/runs', 202, { profile: 'asker', prompt: 'CALL_TOOL fs_write {"path":"/work/a.txt","content":"x"}' });
    const frames = sseFrames<RunEventLike>(await svc.api(`/api/runs/${held}/stream`));
    let approvalId: string | undefined;
    for await (const frame of frames) {
      if (frame.event.type !== 'approval_required') continue;
      approvalId = frame.event.approvalId as string;
      break;
    }
    expect(approvalId).toMatch(/^apr_/);
    expect((await check('GET', `/api/runs/${held}`, '/api/runs/{id}', 200)).status).toBe('waiting');
    await check('GET', `/api/approvals/${approvalId}`, '/api/approvals/{id}', 200);
    await check('GET', `/api/runs/${held}/approvals`, '/api/runs/{id}/approvals', 200);
    const decided = await check('POST', `/api/runs/${held}/approvals/${approvalId}`, '/api/runs/{id}/approvals/{approvalId}', 200, { decision: 'approve', message: 'fine' });
    expect(decided).toMatchObject({ status: 'approved', delivered: true });
    await (await svc.api(`/api/runs/${held}/stream`)).text();
    const run = await check('GET', `/api/runs/${held}`, '/api/runs/{id}', 200);
    expect(run.events.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['tool_call', 'approval_required', 'approval_decided', 'tool_result', 'result']));
  }, 60_000);

  it('documents keys, tenants and their limits as they are answered', async () => {
    const who = await check('GET', '/api/whoami', '/api/whoami', 200);
    expect(who).toMatchObject({ tenantId: 'default', role: 'owner' });
    const issued = await check('POST', '/api/api-keys', '/api/api-keys', 201, { name: 'contract' });
    expect(issued.token).toMatch(/^ao_/);
    await check('GET', '/api/api-keys', '/api/api-keys', 200);
    await check('POST', '/api/tenants', '/api/tenants', 201, { id: 'acme', name: 'Acme' });
    await check('GET', '/api/tenants', '/api/tenants', 200);
    await check('GET', '/api/tenants/acme', '/api/tenants/{id}', 200);
    await check('PUT', '/api/tenants/acme', '/api/tenants/{id}', 200, { name: 'Acme Inc' });
    await check('POST', '/api/tenants/acme/keys', '/api/tenants/{id}/keys', 201, { name: 'first' });
    await check('GET', '/api/tenants/acme/limits', '/api/tenants/{id}/limits', 200);
    await check('PUT', '/api/tenants/acme/limits', '/api/tenants/{id}/limits', 200, { memoryMiB: 512 });
  });

  it('documents the catalogs and the device login as they are answered', async () => {
    await check('GET', '/api/capability-bundles', '/api/capability-bundles', 200);
    await check('GET', '/api/connected-apps/providers', '/api/connected-apps/providers', 200);
    await check('GET', '/api/connected-apps/connections', '/api/connected-apps/connections', 200);
    await check('POST', '/api/device/code', '/api/device/code', 200, { label: 'contract' }, null);
  });

  it('documents the error answers as they are answered', async () => {
    await check('GET', '/api/runs/run_nope', '/api/runs/{id}', 404);
    await check('POST', '/api/runs', '/api/runs', 400, { profile: 'demo', prompt: 1 });
    await check('POST', '/api/profiles', '/api/profiles', 409, { name: 'demo', runtime: 'general', model: 'demo:echo' });
    await check('GET', '/api/whoami', '/api/whoami', 401, undefined, 'ao_test_not_a_key_at_all_000000000');
    await check('POST', '/api/device/token', '/api/device/token', 400, { deviceCode: 'nope' }, null);
  });

  it('fails a body that does not match, naming the operation and the field', () => {
    expect(() => expectAnswerDocumented(spec, 'GET', '/api/sessions/{id}', 200, { id: 's', runCount: 'two' })).toThrow(/GET \/api\/sessions\/\{id\} 200[\s\S]*must have required property 'profile'[\s\S]*\/runCount must be number/);
    expect(() => expectAnswerDocumented(spec, 'GET', '/api/runs/{id}/stream', 200, {})).toThrow(/documents no JSON schema/);
  });
});
