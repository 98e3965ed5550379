import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server, startOn } from '../support/backends.ts';
import type { TestSvc } from '../support/svc.ts';
import { keyOf, startOperatorSvc } from '../support/tenants.ts';

/** Workflow runs, definitions and schedules of tenant A are unknown to tenant B on every route (row security). */
describe('workflows across tenants', () => {
  let svc: TestSvc;
  let keyB: string;

  beforeAll(async () => {
    svc = await startOn(server, (url) => startOperatorSvc({ DATABASE_URL: url }));
    keyB = await keyOf(svc, 'tenant-b');
    expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'demo', runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('answers 404 to another tenant for every route of a run, definition and schedule, and lists none of them', async () => {
    const nodes = [{ id: 'a', profile: 'demo', prompt: 'x' }];
    const run = (await (await svc.api('/api/workflows/runs', { method: 'POST', json: { nodes, autoStart: false } })).json()).workflowRun;
    const def = (await (await svc.api('/api/workflows/definitions', { method: 'POST', json: { name: 'mine', nodes } })).json()).workflowDefinition;
    const sched = (await (await svc.api('/api/workflows/schedules', { method: 'POST', json: { workflowDefinitionId: def.id, cron: '0 9 * * *' } })).json()).workflowSchedule;
    const asB = (method: string, path: string, json?: unknown) => svc.api(path, { method, key: keyB, ...(json !== undefined ? { json } : {}) });

    for (const [method, path, json] of [
      ['GET', `/api/workflows/runs/${run.id}`],
      ['GET', `/api/workflows/runs/${run.id}/stream`],
      ['POST', `/api/workflows/runs/${run.id}/start`],
      ['POST', `/api/workflows/runs/${run.id}/cancel`],
      ['POST', `/api/workflows/runs/${run.id}/repair`, { action: 'abort' }],
      ['POST', `/api/workflows/runs/${run.id}/nodes/a`, { status: 'ok' }],
      ['GET', `/api/workflows/definitions/${def.id}`],
      ['PUT', `/api/workflows/definitions/${def.id}`, { name: 'theirs' }],
      ['DELETE', `/api/workflows/definitions/${def.id}`],
      ['GET', `/api/workflows/schedules/${sched.id}`],
      ['POST', `/api/workflows/schedules/${sched.id}/pause`],
      ['DELETE', `/api/workflows/schedules/${sched.id}`],
    ] as const) {
      expect((await asB(method, path, json)).status, `${method} ${path}`).toBe(404);
    }
    for (const list of ['/api/workflows/runs', '/api/workflows/definitions', '/api/workflows/schedules']) {
      const res = await asB('GET', list);
      expect(await res.json()).toEqual([]);
      expect(res.headers.get('x-total-count')).toBe('0');
    }
    expect((await (await asB('POST', '/api/workflows/runs', { definitionId: def.id })).json()).error).toBe(`definitionId: unknown workflow definition: ${def.id}`);
    expect((await (await asB('POST', '/api/workflows/schedules', { workflowDefinitionId: def.id, cron: '0 9 * * *' })).json()).error).toMatch(/^workflowDefinitionId: unknown/);
    expect((await (await asB('POST', '/api/workflows/runs', { nodes })).json()).error).toBe('nodes: node a: unknown_profile: demo');
    // A's objects are untouched
    expect((await (await svc.api(`/api/workflows/runs/${run.id}`)).json()).workflowRun).toEqual({ ...run, status: 0 });
    expect((await (await svc.api(`/api/workflows/schedules/${sched.id}`)).json()).workflowSchedule).toEqual(sched);
  });
});
