import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { modelRequests } from '../support/fake-provider.ts';
import { readSse } from '../support/sse.ts';
import { mintRunToken } from '../../src/modules/conductor/identity/index.ts';

/**
 * Agents that remember, through the whole platform (role all, the fake model provider scripting tool calls): the
 * `memory` and `memory_search` tools of a profile that mounts stores, what one session writes read by the next, the
 * per-user memories of a published agent's end users (/chat/{slug}) and of tenants kept apart, size caps the model
 * can read, and two sessions editing one file: one wins, the other reads a conflict and retries.
 */
let h: AgentsHarness;
const MODEL = 'openai-compatible:fake-model';
const RUN_TOKEN_SECRET = 'memory-agents-run-token-secret-0123456789';

beforeAll(async () => {
  h = await startAgentsHarness({ SVC_RUN_TOKEN_SECRET: RUN_TOKEN_SECRET });
});
afterAll(async () => {
  await h?.stop();
});

const call = async (method: string, path: string, json?: unknown, key?: string) => {
  const res = await h.svc.api(path, { method, ...(json !== undefined ? { json } : {}), ...(key ? { key } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

async function profile(name: string, memoryStores: unknown[], key?: string, extra: Record<string, unknown> = {}) {
  const res = await call('POST', '/api/profiles', { name, runtime: 'general', model: MODEL, memoryStores, ...extra }, key);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

/** One run to its end: its tool results and the final message (the fake model echoes what the tool answered). */
async function run(body: Record<string, unknown>, key?: string) {
  const started = await call('POST', '/api/runs', body, key);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  const frames = await readSse((await h.svc.api(`/api/runs/${started.body.runId}/stream`, key ? { key } : {})));
  const events = frames.map((f) => f.event);
  const results = events.filter((e) => e.type === 'tool_result') as unknown as Array<{ isError?: boolean; output: any; toolName: string }>;
  return { runId: started.body.runId as string, sessionId: started.body.sessionId as string, results, end: events.at(-1)!, text: (i = 0) => results[i]?.output?.content?.[0]?.text as string };
}

const tool = (input: Record<string, unknown>, name = 'memory') => `CALL_TOOL ${name} ${JSON.stringify(input)}`;

describe('a session writes a memory and a new session of the same agent reads it', () => {
  it('creates a file in one session and views it from another', async () => {
    expect((await call('POST', '/api/memory-stores', { name: 'notes', description: 'What I learnt about my users' })).status).toBe(201);
    await profile('rememberer', [{ name: 'notes', access: 'read_write' }]);

    const first = await run({ profile: 'rememberer', prompt: tool({ command: 'create', path: '/memories/notes/dana.md', file_text: 'Dana drinks oolong tea.\nDana is in Lisbon.' }) });
    expect(first.results[0]).toMatchObject({ toolName: 'memory', isError: false });
    expect(first.text()).toBe('File created successfully at: /memories/notes/dana.md');
    expect(first.end).toMatchObject({ type: 'result', message: 'TOOL-RESULT-SEEN: File created successfully at: /memories/notes/dana.md' });
    const request = modelRequests(h.fake).at(-1)!.body;
    expect((request.tools ?? []).map((t: any) => t.function.name)).toEqual(expect.arrayContaining(['memory', 'memory_search']));
    // the model is told where its memory is
    expect(JSON.stringify(request.messages[0])).toContain('You have a memory that outlives this conversation: /memories/notes/.');

    const second = await run({ profile: 'rememberer', prompt: tool({ command: 'view', path: '/memories/notes/dana.md' }) });
    expect(second.sessionId).not.toBe(first.sessionId);
    expect(second.text()).toBe("Here's the content of /memories/notes/dana.md with line numbers (version 1):\n     1\tDana drinks oolong tea.\n     2\tDana is in Lisbon.");

    const root = await run({ profile: 'rememberer', prompt: tool({ command: 'view', path: '/memories' }) });
    expect(root.text()).toMatch(/^Here are your memory stores: one directory each under \/memories, kept across sessions:\n\/memories\/notes\/ \(shared by every session that mounts it; read and write; 1 of at most 1000 files/);
    expect(root.text()).toContain('What I learnt about my users');

    const found = await run({ profile: 'rememberer', prompt: tool({ query: 'tea' }, 'memory_search') });
    expect(found.text()).toMatch(/^1 memory match for "tea", best first:\n\/memories\/notes\/dana\.md \(version 1, 42 bytes, rank [0-9.]+\): Dana drinks oolong «tea»/);
    // what the agent wrote is the store's entry, written by its run
    const versions = (await call('GET', '/api/memory-stores/notes/versions?path=/dana.md')).body;
    expect(versions).toEqual([expect.objectContaining({ operation: 'created', actor: `run:${first.runId}` })]);
  });

  it('gives a plain profile no memory tools, and a read-only mount no writes', async () => {
    await profile('plain', []);
    await run({ profile: 'plain', prompt: 'hello' });
    const offered = (modelRequests(h.fake).at(-1)!.body.tools ?? []).map((t: any) => t.function.name);
    expect(offered).not.toContain('memory');

    await profile('reader', [{ name: 'notes', access: 'read' }]);
    const refused = await run({ profile: 'reader', prompt: tool({ command: 'create', path: '/memories/notes/x.md', file_text: 'nope' }) });
    expect(refused.results[0].isError).toBe(true);
    expect(refused.text()).toBe('memory store notes is mounted read-only for this agent; it may view and search it, not change it');
    const read = await run({ profile: 'reader', prompt: tool({ command: 'view', path: '/memories/notes/dana.md' }) });
    expect(read.text()).toContain('Dana drinks oolong tea.');
    expect((await call('POST', '/api/profiles', { name: 'ghost', runtime: 'general', model: MODEL, memoryStores: [{ name: 'nowhere' }] })).body.error).toBe(
      'memoryStores.0.name: unknown memory store: nowhere (create it with POST /api/memory-stores)',
    );
  });
});

describe("a run's token", () => {
  it('reaches the entries of the stores its run mounts, with their access, and nothing else', async () => {
    const { runId } = await run({ profile: 'reader', prompt: 'hello' });
    const token = await mintRunToken(new TextEncoder().encode(RUN_TOKEN_SECRET), { tenantId: 'default', runId });
    expect((await call('GET', '/api/memory-stores/notes/entries/dana.md', undefined, token)).body.content).toContain('oolong');
    expect((await call('GET', '/api/memory-mounts', undefined, token)).body).toEqual([expect.objectContaining({ name: 'notes', access: 'read', available: true })]);
    expect((await call('PUT', '/api/memory-stores/notes/entries/dana.md', { content: 'x' }, token)).status).toBe(403);
    expect((await call('GET', '/api/memory-stores', undefined, token)).body.error).toMatch(/^a run reaches the memory stores it mounts through their entries/);
    expect((await call('GET', '/api/memory-stores/notes', undefined, token)).status).toBe(403);
    await call('POST', '/api/memory-stores', { name: 'secret' });
    expect((await call('GET', '/api/memory-stores/secret/entries', undefined, token)).body.error).toBe('memory store secret is not mounted for this run (mounted: notes)');
    expect((await call('GET', '/api/memory-stores/notes/entries?userId=alice', undefined, token)).body.error).toBe('userId: a run reaches only the memory of its own end user');
  });
});

describe('size caps', () => {
  it('answer the model with errors that say which cap and what to do', async () => {
    await call('POST', '/api/memory-stores', { name: 'tiny', limits: { maxEntries: 1, maxEntryBytes: 16, maxTotalBytes: 16 } });
    await profile('cramped', [{ name: 'tiny' }]);
    const big = await run({ profile: 'cramped', prompt: tool({ command: 'create', path: '/memories/tiny/a.md', file_text: 'far too long for this store' }) });
    expect(big.results[0].isError).toBe(true);
    expect(big.text()).toBe('memory entry /a.md would be 27 bytes; store tiny allows at most 16 bytes per entry. Keep entries short, or split this one');
    expect(big.end).toMatchObject({ type: 'result', message: `TOOL-RESULT-SEEN: ${big.text()}` });

    expect((await run({ profile: 'cramped', prompt: tool({ command: 'create', path: '/memories/tiny/a.md', file_text: 'short' }) })).results[0].isError).toBe(false);
    const full = await run({ profile: 'cramped', prompt: tool({ command: 'create', path: '/memories/tiny/b.md', file_text: 'x' }) });
    expect(full.text()).toBe('store tiny is full: it holds 1 of at most 1 entries. Delete or merge entries before adding /b.md');
    const grow = await run({ profile: 'cramped', prompt: tool({ command: 'insert', path: '/memories/tiny/a.md', insert_line: 1, insert_text: 'and now much longer' }) });
    expect(grow.text()).toMatch(/^memory entry \/a\.md would be 25 bytes; store tiny allows at most 16 bytes per entry/);
  });
});

describe('two sessions editing one file', () => {
  it('one str_replace wins, the other reads a conflict, views again and retries', async () => {
    await call('PUT', '/api/memory-stores/notes/entries/plan.md', { content: 'status: draft\nowner: ann' });
    const a = await run({ profile: 'rememberer', prompt: tool({ command: 'view', path: '/memories/notes/plan.md' }) });
    const b = await run({ profile: 'rememberer', prompt: tool({ command: 'view', path: '/memories/notes/plan.md' }) });
    expect(a.text()).toContain('(version 1)');
    expect(b.text()).toContain('(version 1)');

    const wins = await run({ profile: 'rememberer', sessionId: a.sessionId, prompt: tool({ command: 'str_replace', path: '/memories/notes/plan.md', old_str: 'draft', new_str: 'final' }) });
    expect(wins.results[0].isError).toBe(false);
    expect(wins.text()).toMatch(/^The memory file has been edited \(version 2\)\./);

    const loses = await run({ profile: 'rememberer', sessionId: b.sessionId, prompt: tool({ command: 'str_replace', path: '/memories/notes/plan.md', old_str: 'ann', new_str: 'bob' }) });
    expect(loses.results[0].isError).toBe(true);
    expect(loses.text()).toBe(
      'Conflict: /memories/notes/plan.md changed since you last saw it (you saw version 1; another session has written version 2). Nothing was changed. View the file again and retry your edit on what it holds now.',
    );
    expect((await call('GET', '/api/memory-stores/notes/entries/plan.md')).body.content).toBe('status: final\nowner: ann');

    await run({ profile: 'rememberer', sessionId: b.sessionId, prompt: tool({ command: 'view', path: '/memories/notes/plan.md' }) });
    const retried = await run({ profile: 'rememberer', sessionId: b.sessionId, prompt: tool({ command: 'str_replace', path: '/memories/notes/plan.md', old_str: 'ann', new_str: 'bob' }) });
    expect(retried.results[0].isError).toBe(false);
    expect((await call('GET', '/api/memory-stores/notes/entries/plan.md')).body).toMatchObject({ content: 'status: final\nowner: bob', version: 3 });
  });
});

describe('per-user memory of a published agent', () => {
  let slug: string;
  let agentKey: string;
  const chat = async (message: string, opts: { user?: string; key?: string | null } = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (opts.key !== null) headers.authorization = `Bearer ${opts.key ?? agentKey}`;
    const res = await fetch(`${h.svc.url}/chat/${slug}`, { method: 'POST', headers, body: JSON.stringify({ message, ...(opts.user ? { user: opts.user } : {}) }) });
    return { status: res.status, body: (await res.json()) as { reply: string; conversationId: string } };
  };

  beforeAll(async () => {
    await call('POST', '/api/memory-stores', { name: 'customers', scope: 'per_user', description: 'What each customer told us' });
    await profile('concierge', [{ name: 'customers' }]);
    slug = (await call('POST', '/api/profiles/concierge/publish', { slug: 'concierge', visibility: 'public' })).body.slug;
    agentKey = (await call('POST', '/api/profiles/concierge/keys', { label: 'site' })).body.token;
  });

  it("keeps each end user's memory apart: what alice's chat wrote, bob's never sees", async () => {
    const wrote = await chat(tool({ command: 'create', path: '/memories/customers/profile.md', file_text: 'Alice: allergic to nuts' }), { user: 'alice' });
    expect(wrote.body.reply).toBe('TOOL-RESULT-SEEN: File created successfully at: /memories/customers/profile.md');
    const bob = await chat(tool({ command: 'view', path: '/memories/customers/profile.md' }), { user: 'bob' });
    expect(bob.body.reply).toBe('TOOL-RESULT-SEEN: The path /memories/customers/profile.md does not exist. Please provide a valid path.');
    const bobSearch = await chat(tool({ query: 'nuts' }, 'memory_search'), { user: 'bob' });
    expect(bobSearch.body.reply).toBe('TOOL-RESULT-SEEN: No memory matches "nuts".');
    // a new conversation of alice's reads what she told the agent before
    const alice = await chat(tool({ command: 'view', path: '/memories/customers/profile.md' }), { user: 'alice' });
    expect(alice.body.reply).toContain('Alice: allergic to nuts');
    expect((await call('GET', '/api/memory-stores/customers/entries/profile.md?userId=alice')).body.content).toBe('Alice: allergic to nuts');
    expect((await call('GET', '/api/memory-stores/customers/entries/profile.md?userId=bob')).status).toBe(404);
  });

  it('gives an anonymous caller (and a run without a user) no per-user memory', async () => {
    const anonymous = await chat(tool({ command: 'view', path: '/memories/customers/profile.md' }), { key: null, user: 'alice' });
    expect(anonymous.body.reply).toMatch(/^TOOL-RESULT-SEEN: memory store customers keeps a separate memory per end user, and this run has no end user/);
    const root = await chat(tool({ command: 'view', path: '/memories' }), { key: null });
    expect(root.body.reply).toMatch(/\/memories\/customers\/ \(unavailable: memory store customers keeps a separate memory per end user/);
    const plain = await run({ profile: 'concierge', prompt: tool({ command: 'view', path: '/memories/customers/profile.md' }) });
    expect(plain.text()).toMatch(/this run has no end user/);
    const named = await run({ profile: 'concierge', userId: 'alice', prompt: tool({ command: 'view', path: '/memories/customers/profile.md' }) });
    expect(named.text()).toContain('Alice: allergic to nuts');
    expect((await call('GET', `/api/runs/${named.runId}`)).body.userId).toBe('alice');
    // a run it delegates to acts for the same end user
    const child = await run({ profile: 'concierge', parentId: named.runId, prompt: tool({ command: 'view', path: '/memories/customers/profile.md' }) });
    expect(child.text()).toContain('Alice: allergic to nuts');
    expect((await call('GET', `/api/runs/${child.runId}`)).body.userId).toBe('alice');
  });

  it("keeps tenants apart: another tenant's agent with a store of the same name sees nothing of this one", async () => {
    const key = await h.otherOrg('elsewhere');
    expect((await call('POST', '/api/memory-stores', { name: 'customers', scope: 'per_user' }, key)).status).toBe(201);
    await profile('concierge', [{ name: 'customers' }], key);
    const theirs = await run({ profile: 'concierge', userId: 'alice', prompt: tool({ command: 'view', path: '/memories/customers/profile.md' }) }, key);
    expect(theirs.text()).toBe('The path /memories/customers/profile.md does not exist. Please provide a valid path.');
    const search = await run({ profile: 'concierge', userId: 'alice', prompt: tool({ query: 'nuts' }, 'memory_search') }, key);
    expect(search.text()).toBe('No memory matches "nuts".');
  });
});
