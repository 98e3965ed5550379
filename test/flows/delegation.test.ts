import { freePort } from '../support/listen.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { readSse, type RunEventLike } from '../support/sse.ts';
import { startSvc, type SvcInstance } from '../../src/index.ts';

/**
 * Delegation end to end on the all-in-one build: a lead profile's run calls the `delegate` tool, the runner creates a
 * child run of a pool peer through the conductor's `/api/runs` (with the parent's run token), waits for it, and hands
 * its result back to the model. SVC_CONDUCTOR_URL points the runner at the conductor over the network, the split-role
 * path, so this also holds when the in-process wiring is absent.
 */
let svc: SvcInstance;
const api = (path: string, json?: unknown) =>
  fetch(svc.url + path, {
    method: json === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${svc.key}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
let fake: FakeProvider;

beforeAll(async () => {
  fake = await startFakeProvider();
  const port = await freePort();
  svc = await startSvc({
    env: {
      SVC_BOOTSTRAP_TOKEN: 'ao_test_delegationdelegation01',
      SVC_CONDUCTOR_URL: `http://127.0.0.1:${port}`,
      OPENAI_COMPATIBLE_BASE_URL: fake.url,
      OPENAI_COMPATIBLE_API_KEY: 'x',
    },
    flags: { role: 'all', port },
  });
  const model = 'openai-compatible:fake-model';
  for (const profile of [
    { name: 'lead', runtime: 'general', model, tools: ['@default', '@delegate'] },
    { name: 'scout', runtime: 'general', model },
    { name: 'outsider', runtime: 'general', model },
  ]) {
    expect((await api('/api/profiles', profile)).status).toBe(201);
  }
  const pool = { name: 'team', members: [{ profile: 'lead', role: 'lead' }, { profile: 'scout' }] };
  expect((await api('/api/pools', pool)).status).toBe(201);
});
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
});

async function runToEnd(body: Record<string, unknown>): Promise<{ runId: string; events: RunEventLike[] }> {
  const res = await api('/api/runs', body);
  expect(res.status).toBe(202);
  const { runId } = (await res.json()) as { runId: string };
  const frames = await readSse(await api(`/api/runs/${runId}/stream`));
  return { runId, events: frames.map((f) => f.event) };
}

describe('delegation', () => {
  it('runs a subtask on a pool peer as a child run and gives its result back to the model', async () => {
    const { runId, events } = await runToEnd({ profile: 'lead', prompt: 'CALL_TOOL delegate {"profile":"scout","prompt":"say hi"}' });

    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ toolName: 'delegate', isError: false, output: { content: [{ text: 'FAKE-REPLY: say hi' }] } });
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'TOOL-RESULT-SEEN: FAKE-REPLY: say hi' });
    const runs = (await (await api('/api/runs')).json()) as Array<{ id: string; status: string; subTask: { profile: string; parentId?: string } }>;
    const child = runs.find((r) => r.subTask.parentId === runId);
    expect(child).toMatchObject({ status: 'ok', subTask: { profile: 'scout', parentId: runId, prompt: 'say hi', title: 'delegated by lead' } });
  });

  it('refuses to delegate to a profile outside the caller\'s pools, and starts no run', async () => {
    const before = ((await (await api('/api/runs')).json()) as unknown[]).length;
    const { events } = await runToEnd({ profile: 'lead', prompt: 'CALL_TOOL delegate {"profile":"outsider","prompt":"hi"}' });

    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({
      toolName: 'delegate',
      isError: true,
      output: { content: [{ text: 'profile outsider is not in a pool with lead (pools of lead: team)' }] },
    });
    expect(((await (await api('/api/runs')).json()) as unknown[]).length).toBe(before + 1);
  });
});
