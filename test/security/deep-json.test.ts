import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN_HEADER } from '../../src/contracts/runner.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { startOperatorSvc } from '../support/tenants.ts';

/**
 * Issue 12, item 10: JSON nested thousands of levels deep in a free-form field (`metadata`, `fs`, a JSON schema, a
 * tool's input) is refused with a 400 naming the nesting limit, on every surface (/api, /v1, the runner), before
 * anything that recurses sees it; nothing is stored. Real JSON schemas, well under the limit, still go through.
 */
const DEEP = 5000;
const deep = (levels: number): Record<string, unknown> => {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 1; i < levels; i++) value = { type: 'object', properties: { next: value } };
  return value;
};
/** A JSON text nested `levels` deep, built as text so the test itself never recurses. */
const deepText = (levels: number) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
/** /api and /v1 allow 64 levels; bodies between roles a few more, since they wrap client values (shared/http.ts). */
const MESSAGE = /^body: JSON nested deeper than (64|80) levels$/;
const fn = (parameters: string) => `{"type":"function","name":"f","description":"d","parameters":${parameters}}`;

describe('over-deep JSON bodies', () => {
  let svc: TestSvc;
  let runner: TestSvc;
  let agentId: string;
  let sessionId: string;

  beforeAll(async () => {
    svc = await startOperatorSvc();
    runner = await startTestSvc({ SVC_INTERNAL_TOKEN: 'deep-json-internal-token' }, 'runner');
    expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'p', runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
    agentId = (await (await svc.api('/v1/agents', { method: 'POST', json: { model: 'svc/demo/echo' } })).json()).id;
    expect((await runner.api('/runner/profiles', { method: 'POST', key: null, headers: { [INTERNAL_TOKEN_HEADER]: 'Bearer deep-json-internal-token' }, json: { profile: { name: 'p', runtime: 'general' } } })).status).toBe(204);
    const created = await runner.api('/runner/sessions', { method: 'POST', key: null, headers: { [INTERNAL_TOKEN_HEADER]: 'Bearer deep-json-internal-token' }, json: { profileName: 'p' } });
    sessionId = (await created.json()).sessionId;
    expect(sessionId).toBeTruthy();
  });
  afterAll(async () => {
    await svc?.stop();
    await runner?.stop();
  });

  const d = deepText(DEEP);
  const ROUTES: Array<[string, string, string, string]> = [
    ['POST', '/api/tenants', `{"id":"deep-tenant","name":"x","metadata":${d}}`, 'metadata'],
    ['PUT', '/api/tenants/default', `{"metadata":${d}}`, 'metadata'],
    ['POST', '/api/profiles', `{"name":"deep","runtime":"general","fs":${d}}`, 'fs'],
    ['PUT', '/api/profiles/p', `{"name":"p","runtime":"general","fs":${d}}`, 'fs'],
    ['POST', '/v1/agents', `{"model":"svc/demo/echo","text":{"format":{"type":"json_schema","schema":${d}}}}`, 'text.format.schema'],
    ['POST', '/v1/agents', `{"model":"svc/demo/echo","tools":[${fn(d)}]}`, 'tools[].parameters'],
    ['POST', '/v1/agents/{agent}', `{"tools":[${fn(d)}]}`, 'tools[].parameters'],
    ['POST', '/v1/agents/sessions', `{"environment":{"type":"none"},"agent":{"model":"svc/demo/echo","tools":[${fn(d)}]}}`, 'agent.tools[].parameters'],
    ['POST', '/v1/agents/sessions', `{"environment":{"type":"none"},"agent":{"model":"svc/demo/echo","text":{"format":{"type":"json_schema","schema":${d}}}}}`, 'agent.text.format.schema'],
    ['POST', '/v1/agents', `{"model":"svc/demo/echo","tools":[{"type":"mcp","server_label":"m","transport":{"type":"http","server_url":"http://127.0.0.1:1/"},"request_metadata":${d}}]}`, 'tools[].request_metadata'],
    ['POST', 'runner:/runner/profiles', `{"profile":{"name":"deep","runtime":"general","fs":${d}}}`, 'fs'],
    ['POST', 'runner:/runner/sessions/{session}/toolkit/invoke', `{"toolName":"fs_list","input":${d}}`, 'input'],
  ];

  for (const [method, route, body, field] of ROUTES) {
    it(`refuses ${method} ${route.replace('runner:', '')} with ${field} nested ${DEEP} deep with a 400 naming the limit`, async () => {
      const onRunner = route.startsWith('runner:');
      const path = route.replace('runner:', '').replace('{agent}', agentId).replace('{session}', sessionId);
      const res = onRunner
        ? await runner.api(path, { method, key: null, headers: { [INTERNAL_TOKEN_HEADER]: 'Bearer deep-json-internal-token', 'content-type': 'application/json' }, body })
        : await svc.api(path, { method, headers: { 'content-type': 'application/json' }, body });
      expect(res.status).toBe(400);
      const error = (await res.json()).error;
      expect(typeof error === 'string' ? error : error.message).toMatch(MESSAGE);
    });
  }

  it('stores nothing from a refused body', async () => {
    expect((await svc.api('/api/tenants/deep-tenant')).status).toBe(404);
    expect((await svc.api('/api/profiles/deep')).status).toBe(404);
    expect((await (await svc.api('/api/tenants/default')).json()).metadata).toEqual({});
    const agents = await (await svc.api('/v1/agents')).json();
    expect(agents.data.map((a: { id: string }) => a.id)).toEqual([agentId]);
    const listed = await runner.api('/runner/profiles', { key: null, headers: { [INTERNAL_TOKEN_HEADER]: 'Bearer deep-json-internal-token' } });
    expect((await listed.json()).profiles.map((p: { name: string }) => p.name)).toEqual(['p']);
  });

  it('accepts a tool whose JSON schema nests as deep as real schemas do', async () => {
    const schema = deep(25); // 25 nested schemas: 49 levels of JSON inside `parameters`, 52 in the whole body
    const res = await svc.api('/v1/agents', { method: 'POST', json: { model: 'svc/demo/echo', tools: [{ type: 'function', name: 'nested', description: 'd', parameters: schema }] } });
    expect(res.status).toBe(200);
    expect((await res.json()).tools[0].parameters).toEqual(schema);
  });

  it('runs a profile whose fs policy nests to the very limit (the runner takes it one level deeper)', async () => {
    const fs = JSON.parse(deepText(63)); // the profile body is 64 levels deep
    const profile = await svc.api('/api/profiles', { method: 'POST', json: { name: 'nested-fs', runtime: 'general', model: 'demo:echo', fs } });
    expect(profile.status).toBe(201);
    const run = await svc.api('/api/runs', { method: 'POST', json: { profile: 'nested-fs', prompt: 'deep enough' } });
    expect(run.status).toBe(202);
    const { runId } = await run.json();
    const text = await (await svc.api(`/api/runs/${runId}/stream`)).text();
    expect(text).toContain('demo reply: deep enough');
  });
});
