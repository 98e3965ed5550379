import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '../../src/shared/log.ts';
import { startFakeProvider, modelRequests, type FakeProvider } from '../support/fake-provider.ts';
import { listen } from '../support/listen.ts';
import { collect, runnerHarness, TENANT, testDataDir, MODEL } from '../support/runner.ts';

configureLogging({ level: 'warn' });

/**
 * The platform toolkit inside real runs, over real HTTP: runner client → runner → worker → fake model, and the
 * worker reaching the session's MCP endpoint on the runner. A stub conductor on its own port (SVC_CONDUCTOR_URL, the
 * split-role path) answers the tools that call back into it, and records what they sent.
 */
let fake: FakeProvider;
const { startWorker, startRunner, stopAll } = runnerHarness(() => fake);
const dataDir = testDataDir();

interface Seen {
  method: string;
  path: string;
  auth: string | undefined;
  body: unknown;
}
const seen: Seen[] = [];
let conductor: Awaited<ReturnType<typeof listen>>;

function stubConductor(): Hono {
  const app = new Hono();
  app.use('*', async (c, next) => {
    const body = c.req.method === 'POST' ? await c.req.raw.clone().json() : undefined;
    seen.push({ method: c.req.method, path: c.req.path, auth: c.req.header('authorization'), body });
    await next();
  });
  app.post('/api/runs', (c) => c.json({ runId: 'run-child', sessionId: 'sess-child' }, 202));
  app.get('/api/runs/run-child/stream', () => {
    const frames = [{ type: 'progress', message: 'working' }, { type: 'result', message: 'child found 7 facts' }]
      .map((e, i) => `id: ${i + 1}\ndata: ${JSON.stringify({ ...e, ts: new Date().toISOString() })}\n\n`)
      .join('');
    return new Response(frames, { headers: { 'content-type': 'text/event-stream' } });
  });
  app.post('/api/notifications', async (c) => c.json({ id: 'ntf_1', ...(await c.req.json()), status: 'queued', detail: 'no provider' }, 201));
  return app;
}

beforeAll(async () => {
  fake = await startFakeProvider();
  conductor = await listen(stubConductor().fetch);
});
afterEach(() => stopAll());
afterAll(async () => {
  await conductor.close();
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function setup(tools: string[]) {
  const w = await startWorker();
  const r = await startRunner({ workerUrl: w.url, dataDir, conductorUrl: conductor.url });
  await r.client.putProfile(TENANT, { name: 'helper', runtime: 'general', model: MODEL, tools });
  await r.client.putProfile(TENANT, { name: 'researcher', runtime: 'general', model: MODEL });
  await r.client.putPool(TENANT, { name: 'team', members: [{ profile: 'helper', role: 'lead' }, { profile: 'researcher' }] });
  const sessionId = await r.client.createSession(TENANT, 'helper');
  return { ...r, sessionId };
}

describe('the toolkit in runs', () => {
  it('lets the model write a file through the session MCP endpoint', async () => {
    const { client, sessionId } = await setup([]);
    const prompt = 'CALL_TOOL fs_write {"path":"report.md","content":"all done"}';
    const events = await collect(await client.run(TENANT, { id: 'run-1', profile: 'helper', sessionId, prompt }));

    const result = events.find((e) => e.type === 'tool_result');
    expect(result).toMatchObject({ toolName: 'fs_write', isError: false, output: { structuredContent: { path: '/work/report.md', bytesWritten: 8, created: true } } });
    expect(readFileSync(join(dataDir, 'sessions', sessionId, 'work', 'report.md'), 'utf8')).toBe('all done');
    expect(events.at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('TOOL-RESULT-SEEN') });
    const offered = (modelRequests(fake).at(-1)!.body.tools ?? []).map((t: any) => t.function.name);
    expect(offered).toEqual(['fs_read', 'fs_write', 'fs_edit', 'fs_list', 'fs_search']);
  });

  it('delegates to a pool peer through the conductor with the run token and returns the child result', async () => {
    const { client, sessionId } = await setup(['@default', '@delegate']);
    seen.length = 0;
    const prompt = 'CALL_TOOL delegate {"profile":"researcher","prompt":"count the facts"}';
    const events = await collect(await client.run(TENANT, { id: 'run-parent', profile: 'helper', sessionId, prompt }, undefined, { runToken: 'tok-parent' }));

    expect(seen[0]).toEqual({
      method: 'POST',
      path: '/api/runs',
      auth: 'Bearer tok-parent',
      body: { profile: 'researcher', parentId: 'run-parent', prompt: 'count the facts', title: 'delegated by helper' },
    });
    expect(seen[1]).toMatchObject({ method: 'GET', path: '/api/runs/run-child/stream', auth: 'Bearer tok-parent' });
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ toolName: 'delegate', isError: false, output: { content: [{ text: 'child found 7 facts' }] } });
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'TOOL-RESULT-SEEN: child found 7 facts' });
  });

  it('asks the conductor to notify with the run token', async () => {
    const { client, sessionId } = await setup(['@notify']);
    seen.length = 0;
    const prompt = 'CALL_TOOL notify {"message":"report ready","to":"ops@example.com"}';
    const events = await collect(await client.run(TENANT, { id: 'run-2', profile: 'helper', sessionId, prompt }, undefined, { runToken: 'tok-2' }));

    expect(seen).toEqual([{ method: 'POST', path: '/api/notifications', auth: 'Bearer tok-2', body: { message: 'report ready', to: 'ops@example.com', channel: 'email' } }]);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ toolName: 'notify', isError: false });
  });

  it('forwards resolved skills from the run request into the model\'s system prompt', async () => {
    const { client, sessionId } = await setup([]);
    const skills = [{ name: 'release-notes', description: 'Write release notes', body: 'Group changes by area.', resources: [{ path: 'template.md', size: 64 }] }];
    await collect(await client.run(TENANT, { profile: 'helper', sessionId, prompt: 'hello' }, undefined, { skills }));
    const system = modelRequests(fake).at(-1)!.body.messages.find((m: any) => m.role === 'system')?.content as string;
    expect(system).toContain('### release-notes');
    expect(system).toContain('Group changes by area.');
  });
});
