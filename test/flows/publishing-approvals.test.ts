import { Ajv2020 } from 'ajv/dist/2020.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';

/**
 * A published agent whose `ask` tool waits for its owner (`approvals: "owner"`), asked without a stream: the chat
 * answers 202 at once with where the reply will be, the run goes on waiting (not cancelled at the sync deadline), and
 * the reply lands in the conversation once the owner decides.
 */
const WAIT = { timeout: 30_000, interval: 100 };
let h: AgentsHarness;
const api = (path: string, init: RequestInit & { json?: unknown } = {}) => h.svc.api(path, init);
const chat = (slug: string, key: string, json: unknown) =>
  fetch(`${h.svc.url}/chat/${slug}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(json) });
const read = (url: string, key: string) => fetch(`${h.svc.url}${url}`, { headers: { authorization: `Bearer ${key}` } });
const write = (content: string) => `CALL_TOOL fs_write {"path":"/work/note.txt","content":"${content}"}`;

type Waiting = { status: string; message: string; conversationId: string; runId: string; toolName: string; approvalId: string; expiresAt?: string; conversationUrl: string };
type Conversation = { messages: Array<{ role: string; content: string; runId: string }>; pending?: { runId: string; status: string } };

async function ownerApproved(name: string): Promise<string> {
  const profile = { name, runtime: 'general', model: 'openai-compatible:gpt-4o', tools: ['@files'], permissions: { fs_write: 'ask' } };
  expect((await api('/api/profiles', { method: 'POST', json: profile })).status).toBe(201);
  // the longest sync deadline: a chat held to it would outlast the test
  expect((await api(`/api/profiles/${name}/publish`, { method: 'POST', json: { approvals: 'owner', syncMaxDurationSeconds: 270 } })).status).toBe(201);
  const key = await api(`/api/profiles/${name}/keys`, { method: 'POST', json: { label: 'site' } });
  expect(key.status).toBe(201);
  return ((await key.json()) as { token: string }).token;
}

beforeAll(async () => {
  h = await startAgentsHarness();
}, 60_000);
afterAll(async () => {
  await h?.stop();
});

describe('a non-streamed chat whose run waits for the owner', () => {
  it('answers 202 at once with the conversation to read later; the reply lands there once the owner approves', async () => {
    const key = await ownerApproved('sync-owner');
    const res = await chat('sync-owner', key, { message: write('approved later') });
    expect(res.status).toBe(202);
    const waiting = (await res.json()) as Waiting;
    expect(waiting).toEqual({
      status: 'waiting',
      message: expect.stringContaining("waiting for the agent's owner to approve a call to fs_write"),
      conversationId: expect.stringMatching(/^conv_/),
      runId: expect.any(String),
      toolName: 'fs_write',
      approvalId: expect.any(String),
      expiresAt: expect.any(String),
      conversationUrl: `/chat/sync-owner/conversations/${waiting.conversationId}`,
    });
    expect(waiting.message).toContain(`GET ${waiting.conversationUrl}`);

    // the answer is the one the reference documents for 202
    const spec = (await (await fetch(`${h.svc.url}/openapi.json`)).json()) as any;
    const schema = spec.paths['/chat/{slug}'].post.responses['202'].content['application/json'].schema;
    const valid = new Ajv2020({ strict: false, validateFormats: false }).compile({ ...schema, $schema: undefined, components: spec.components });
    expect(valid(waiting), JSON.stringify(valid.errors)).toBe(true);

    // the run still waits for the owner: nothing cancelled it
    expect((await (await api(`/api/runs/${waiting.runId}`)).json()).status).toBe('waiting');
    const before = (await (await read(waiting.conversationUrl, key)).json()) as Conversation;
    expect(before.pending).toEqual({ runId: waiting.runId, status: 'waiting' });
    expect(before.messages.map((m) => m.role)).toEqual(['user']);
    // the conversation is busy until then
    expect((await chat('sync-owner', key, { message: 'are you there?', conversationId: waiting.conversationId })).status).toBe(409);

    expect((await api(`/api/runs/${waiting.runId}/approvals/${waiting.approvalId}`, { method: 'POST', json: { decision: 'approve' } })).status).toBe(200);
    const after = await vi.waitFor(async () => {
      const view = (await (await read(waiting.conversationUrl, key)).json()) as Conversation;
      expect(view.pending).toBeUndefined();
      return view;
    }, WAIT);
    expect(after.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(after.messages[1]!.content).toContain('TOOL-RESULT-SEEN');
    expect(after.messages[1]!.content).not.toContain('was not run');
    expect((await (await api(`/api/runs/${waiting.runId}`)).json()).status).toBe('ok');
  });

  it('a denial reaches the model, whose answer is the conversation\'s next message', async () => {
    const key = await ownerApproved('sync-denied');
    const res = await chat('sync-denied', key, { message: write('denied later') });
    expect(res.status).toBe(202);
    const waiting = (await res.json()) as Waiting;
    expect((await api(`/api/runs/${waiting.runId}/approvals/${waiting.approvalId}`, { method: 'POST', json: { decision: 'deny', message: 'not from the public page' } })).status).toBe(200);
    const after = await vi.waitFor(async () => {
      const view = (await (await read(waiting.conversationUrl, key)).json()) as Conversation;
      expect(view.pending).toBeUndefined();
      return view;
    }, WAIT);
    expect(after.messages.at(-1)!.content).toContain('not from the public page');
    // a next message continues the conversation as usual
    const next = await chat('sync-denied', key, { message: 'thanks anyway', conversationId: waiting.conversationId });
    expect(next.status).toBe(200);
    expect(((await next.json()) as { reply: string }).reply).toContain('thanks anyway');
  });

  it('the Chat Completions wire answers 409 approval_pending at once, which the openai client does not retry; the reply lands in the conversation', async () => {
    const key = await ownerApproved('sync-completions');
    const client = new OpenAI({ baseURL: `${h.svc.url}/chat/sync-completions/v1`, apiKey: key });
    const { data, response } = await client.chat.completions.create({ model: 'any', messages: [{ role: 'user', content: write('from a chat front end') }] }).withResponse().then(
      () => ({ data: undefined, response: undefined }),
      (err: unknown) => ({ data: err, response: (err as { headers?: Headers }).headers }),
    );
    expect(data).toBeInstanceOf(OpenAI.ConflictError);
    const err = data as InstanceType<typeof OpenAI.ConflictError>;
    expect(err.code).toBe('approval_pending');
    expect(err.message).toContain("waiting for the agent's owner to approve a call to fs_write");
    expect(response?.get('x-should-retry')).toBe('false');
    const conversationId = response?.get('x-conversation-id') ?? '';
    expect(conversationId).toMatch(/^conv_/);
    expect(err.message).toContain(`GET /chat/sync-completions/conversations/${conversationId}`);

    // one message, one run: the client did not send it again
    const view = (await (await read(`/chat/sync-completions/conversations/${conversationId}`, key)).json()) as Conversation;
    expect(view.messages.map((m) => m.role)).toEqual(['user']);
    expect(view.pending?.status).toBe('waiting');
    const mine = (await (await api(`/api/approvals?status=pending&runId=${view.pending!.runId}`)).json()) as Array<{ id: string; toolName: string }>;
    expect(mine.map((a) => a.toolName)).toEqual(['fs_write']);
    expect((await api(`/api/runs/${view.pending!.runId}/approvals/${mine[0]!.id}`, { method: 'POST', json: { decision: 'approve' } })).status).toBe(200);
    const after = await vi.waitFor(async () => {
      const v = (await (await read(`/chat/sync-completions/conversations/${conversationId}`, key)).json()) as Conversation;
      expect(v.pending).toBeUndefined();
      return v;
    }, WAIT);
    expect(after.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(after.messages[1]!.content).toContain('TOOL-RESULT-SEEN');
  });
});
