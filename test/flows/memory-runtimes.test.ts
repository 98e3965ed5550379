import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { readSse } from '../support/sse.ts';

/**
 * The memory tools on each runtime, through the whole platform against the fake provider: the AI SDK (`general`)
 * reaches the session toolkit directly, Claude Code (`runtime_a`) and Codex (`runtime_b`) over MCP as the `svc`
 * server, so the model of each one writes a memory in one session and reads it back in the next.
 */
let h: AgentsHarness;

beforeAll(async () => {
  h = await startAgentsHarness({ ANTHROPIC_API_KEY: 'sk-ant-fake', OPENAI_API_KEY: 'sk-fake' });
  expect((await h.svc.api('/api/memory-stores', { method: 'POST', json: { name: 'journal' } })).status).toBe(201);
});
afterAll(async () => {
  await h?.stop();
});

async function run(profile: string, prompt: string) {
  const res = await h.svc.api('/api/runs', { method: 'POST', json: { profile, prompt } });
  expect(res.status).toBe(202);
  const { runId } = (await res.json()) as { runId: string };
  const events = (await readSse(await h.svc.api(`/api/runs/${runId}/stream`))).map((f) => f.event);
  const result = events.find((e) => e.type === 'tool_result') as { toolName: string; isError?: boolean; output: any } | undefined;
  return { result, text: result?.output?.content?.[0]?.text as string | undefined, end: events.at(-1)! };
}

const CASES = [
  { runtime: 'general', model: 'openai-compatible:fake-model', tool: 'memory' },
  { runtime: 'runtime_a', model: 'claude-sonnet-4-5', tool: 'mcp__svc__memory' },
  { runtime: 'runtime_b', model: 'gpt-5.5', tool: 'mcp__svc/memory' },
] as const;

// the SDK runtimes launch native binaries per turn: a longer limit on a loaded machine
describe.each(CASES)('the memory tools on $runtime', { timeout: 120_000 }, ({ runtime, model, tool }) => {
  it('write a memory in one session that the next session reads', async () => {
    const profile = `journal-${runtime.replace('_', '-')}`;
    const created = await h.svc.api('/api/profiles', { method: 'POST', json: { name: profile, runtime, model, memoryStores: [{ name: 'journal' }] } });
    expect(created.status).toBe(201);
    const path = `/memories/journal/${runtime}.md`;

    const wrote = await run(profile, `CALL_TOOL ${tool} ${JSON.stringify({ command: 'create', path, file_text: `${runtime} was here` })}`);
    expect(wrote.result).toMatchObject({ toolName: 'memory', isError: false });
    expect(wrote.text).toBe(`File created successfully at: ${path}`);
    expect(wrote.end.type).toBe('result');
    expect(await (await h.svc.api(`/api/memory-stores/journal/entries/${runtime}.md`)).json()).toMatchObject({ content: `${runtime} was here`, version: 1 });

    const read = await run(profile, `CALL_TOOL ${tool} ${JSON.stringify({ command: 'view', path })}`);
    expect(read.text).toBe(`Here's the content of ${path} with line numbers (version 1):\n     1\t${runtime} was here`);
    expect(read.end).toMatchObject({ type: 'result', message: expect.stringContaining(`${runtime} was here`) });
  });
});
