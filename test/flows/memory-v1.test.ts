import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FAKE_MODEL, startAgentsHarness, type AgentsHarness } from '../support/agents.ts';

/**
 * Memory stores on /v1, in the shape of Claude Managed Agents' (stores, memories by id, `content_sha256`
 * preconditions, memory versions), and a /v1 agent that mounts one: its sessions' end user is `metadata.user_id`.
 */
let h: AgentsHarness;

beforeAll(async () => {
  h = await startAgentsHarness();
});
afterAll(async () => {
  await h?.stop();
});

const v1 = async (method: string, path: string, json?: unknown) => {
  const res = await fetch(`${h.svc.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${h.svc.key}`, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return { status: res.status, body: (await res.json()) as any };
};

describe('/v1/memory_stores', () => {
  it('creates a store and its memories, updates one under a content_sha256 precondition, and lists versions', async () => {
    const store = await v1('POST', '/memory_stores', { name: 'prefs', description: 'User preferences' });
    expect(store).toMatchObject({ status: 200, body: { id: expect.stringMatching(/^mst_/), type: 'memory_store', name: 'prefs', description: 'User preferences', scope: 'shared', archived_at: null, metadata: {} } });
    const id = store.body.id;
    expect((await v1('GET', '/memory_stores')).body).toMatchObject({ object: 'list', data: [expect.objectContaining({ id })], has_more: false });

    const mem = await v1('POST', `/memory_stores/${id}/memories`, { path: '/formatting.md', content: 'Use ISO dates.' });
    expect(mem.body).toMatchObject({ id: expect.stringMatching(/^mem_/), type: 'memory', memory_store_id: id, path: '/formatting.md', content: 'Use ISO dates.', content_size_bytes: 14, content_sha256: expect.stringMatching(/^[0-9a-f]{64}$/), memory_version_id: expect.stringMatching(/^memver_/) });
    const taken = await v1('POST', `/memory_stores/${id}/memories`, { path: '/formatting.md', content: 'again' });
    expect(taken).toMatchObject({ status: 409, body: { error: { type: 'conflict_error', code: 'memory_path_conflict_error' } } });

    const listed = await v1('GET', `/memory_stores/${id}/memories`);
    expect(listed.body.data).toEqual([expect.objectContaining({ id: mem.body.id, content: null })]);
    expect((await v1('GET', `/memory_stores/${id}/memories?view=full`)).body.data[0].content).toBe('Use ISO dates.');

    const stale = 'f'.repeat(64);
    const refused = await v1('POST', `/memory_stores/${id}/memories/${mem.body.id}`, { content: 'Use ISO 8601.', precondition: { type: 'content_sha256', content_sha256: stale } });
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'memory_precondition_failed_error' } } });
    const updated = await v1('POST', `/memory_stores/${id}/memories/${mem.body.id}`, {
      content: 'Use ISO 8601.',
      path: '/style/formatting.md',
      precondition: { type: 'content_sha256', content_sha256: mem.body.content_sha256 },
    });
    expect(updated.body).toMatchObject({ id: mem.body.id, path: '/style/formatting.md', content: 'Use ISO 8601.', version: 3 });

    const versions = (await v1('GET', `/memory_stores/${id}/memory_versions?memory_id=${mem.body.id}`)).body.data;
    expect(versions.map((x: any) => x.operation)).toEqual(['modified', 'renamed', 'created']);
    expect(versions[0].created_by).toMatchObject({ type: 'api_actor', api_key_id: expect.any(String) });
    const first = await v1('GET', `/memory_stores/${id}/memory_versions/${versions[2].id}`);
    expect(first.body).toMatchObject({ type: 'memory_version', content: 'Use ISO dates.', path: '/formatting.md' });
    const restored = await v1('POST', `/memory_stores/${id}/memory_versions/${versions[2].id}/restore`);
    expect(restored.body).toMatchObject({ id: mem.body.id, path: '/style/formatting.md', content: 'Use ISO dates.', version: 4 });

    expect((await v1('DELETE', `/memory_stores/${id}/memories/${mem.body.id}`)).body).toEqual({ id: mem.body.id, type: 'memory_deleted' });
    expect((await v1('GET', `/memory_stores/${id}/memories/${mem.body.id}`)).status).toBe(404);
    expect((await v1('DELETE', `/memory_stores/${id}`)).body).toEqual({ id, type: 'memory_store_deleted' });
    expect((await v1('GET', `/memory_stores/${id}`)).body.error.type).toBe('not_found_error');
  });
});

describe('a /v1 agent with memory_stores', () => {
  it("mounts them in its sessions, each session's metadata.user_id naming whose memory", async () => {
    const store = (await v1('POST', '/memory_stores', { name: 'customers', scope: 'per_user' })).body;
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, memory_stores: [{ name: 'customers', access: 'read_write' }] } as never);
    expect((agent as any).memory_stores).toEqual([{ name: 'customers', access: 'read_write' }]);
    const plain = await h.client.beta.agents.create({ model: FAKE_MODEL });
    expect(plain).not.toHaveProperty('memory_stores');
    const missing = await v1('POST', '/agents', { model: FAKE_MODEL, memory_stores: [{ name: 'nowhere' }] });
    expect(missing.body.error.message).toMatch(/^memory_stores\.0\.name: unknown memory store: nowhere/);
    const override = await v1('POST', '/agents/sessions', { agent: { model: FAKE_MODEL, memory_stores: [{ name: 'nowhere' }] }, environment: { type: 'none' } });
    expect(override.body.error.message).toMatch(/^agent\.memory_stores\.0\.name: unknown memory store: nowhere/);

    const write = `CALL_TOOL memory ${JSON.stringify({ command: 'create', path: '/memories/customers/notes.md', file_text: 'prefers mornings' })}`;
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' }, metadata: { user_id: 'carol' }, input: write });
    await vi.waitFor(async () => expect((await h.client.beta.agents.sessions.retrieve(session.id)).status).toBe('idle'), { timeout: 30_000, interval: 100 });
    const memories = (await v1('GET', `/memory_stores/${store.id}/memories?user_id=carol&view=full`)).body.data;
    expect(memories).toEqual([expect.objectContaining({ path: '/notes.md', content: 'prefers mornings', user_id: 'carol' })]);
    expect((await v1('GET', `/memory_stores/${store.id}/memories?user_id=dave`)).body.data).toEqual([]);
  });
});
