import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, lastInput, planFor, type FakeProvider } from './fake-provider.ts';

describe('the fake provider script', () => {
  it('reads the last user turn of an Anthropic request without reminders or a trailing system message', () => {
    const body = {
      messages: [
        { role: 'user', content: [{ type: 'text', text: '<system-reminder>env</system-reminder>' }, { type: 'text', text: 'hello' }] },
        { role: 'system', content: 'late note' },
      ],
    };
    expect(lastInput('anthropic', body)).toEqual({ kind: 'user', text: 'hello' });
  });

  it('reads only the newest prompt when Claude Code merges a failed turn into the next user message', () => {
    const body = { messages: [{ role: 'user', content: [{ type: 'text', text: 'FAIL_HTTP_500' }, { type: 'text', text: '<system-reminder>x</system-reminder>' }, { type: 'text', text: 'try again' }] }] };
    expect(lastInput('anthropic', body)).toEqual({ kind: 'user', text: 'try again' });
  });

  it('sees a tool result as the last input on every wire', () => {
    expect(lastInput('anthropic', { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'out' }] }] }] })).toEqual({ kind: 'tool', text: 'out' });
    expect(lastInput('responses', { input: [{ role: 'user', content: [{ type: 'input_text', text: 'q' }] }, { type: 'function_call_output', call_id: 'c', output: 'out' }] })).toEqual({ kind: 'tool', text: 'out' });
    expect(lastInput('responses', { input: [{ type: 'custom_tool_call_output', call_id: 'c', output: 'patched' }] })).toEqual({ kind: 'tool', text: 'patched' });
    expect(lastInput('chat', { messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: null }, { role: 'tool', content: 'out' }] })).toEqual({ kind: 'tool', text: 'out' });
  });

  it('turns directives into plans', () => {
    expect(planFor({ kind: 'user', text: 'CALL_TOOL mcp__fake/echo {"a":1}' })).toEqual({ kind: 'tool', namespace: 'mcp__fake', name: 'echo', args: '{"a":1}' });
    expect(planFor({ kind: 'user', text: 'CALL_CUSTOM apply_patch "*** Begin Patch\\n*** End Patch"' })).toEqual({ kind: 'tool', namespace: undefined, name: 'apply_patch', args: '*** Begin Patch\n*** End Patch', custom: true });
    expect(planFor({ kind: 'user', text: 'FAIL_HTTP_429' })).toEqual({ kind: 'fail', status: 429 });
    expect(planFor({ kind: 'user', text: 'SLOW_DELTAS 3 10' })).toEqual({ kind: 'text', deltas: ['d0 ', 'd1 ', 'd2 '], intervalMs: 10 });
    expect(planFor({ kind: 'user', text: 'DELTAS 2' })).toMatchObject({ deltas: ['d0 ', 'd1 '], intervalMs: 0 });
    expect(planFor({ kind: 'tool', text: 'r' })).toMatchObject({ kind: 'text', deltas: ['TOOL-RESULT-SEEN: ', 'r'] });
    expect((planFor({ kind: 'user', text: 'hi you' }) as { deltas: string[] }).deltas.join('')).toBe('FAKE-REPLY: hi you');
  });
});

describe('the fake provider server', () => {
  let fake: FakeProvider;
  const post = (path: string, body: unknown, signal?: AbortSignal) =>
    fetch(`${fake.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });

  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('answers non-streaming Chat Completions with JSON and usage', async () => {
    const res = await post('/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'ping' }] });
    const body = await res.json();
    expect(body.choices[0].message.content).toBe('FAKE-REPLY: ping');
    expect(body.usage.prompt_tokens_details.cached_tokens).toBe(4);
    expect(fake.requests.at(-1)).toMatchObject({ method: 'POST', path: '/v1/chat/completions', wire: 'chat', body: { model: 'm' } });
  });

  it('streams a namespaced Responses function call', async () => {
    const res = await post('/responses', { model: 'm', stream: true, input: [{ role: 'user', content: [{ type: 'input_text', text: 'CALL_TOOL mcp__fake/echo {"message":"x"}' }] }] });
    const text = await res.text();
    expect(text).toContain('event: response.completed');
    expect(text).toContain('"namespace":"mcp__fake"');
  });

  it('streams a freeform custom tool call on the Responses wire', async () => {
    const res = await post('/responses', { model: 'm', stream: true, input: 'CALL_CUSTOM apply_patch "raw input"' });
    const text = await res.text();
    expect(text).toContain('event: response.custom_tool_call_input.done');
    expect(text).toContain('"type":"custom_tool_call"');
    expect(text).toContain('"input":"raw input"');
  });

  it('fails with a provider-shaped error body', async () => {
    const res = await post('/messages', { model: 'm', messages: [{ role: 'user', content: 'FAIL_HTTP_429' }] });
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });

  it('serves count_tokens and the model list', async () => {
    expect((await (await post('/messages/count_tokens', { messages: [] })).json()).input_tokens).toEqual(expect.any(Number));
    expect((await (await fetch(`${fake.url}/models`)).json()).data[0].id).toBe('fake-model');
  });

  it('hangs after the first delta until the client leaves, and logs the early close', async () => {
    const abort = new AbortController();
    const res = await post('/messages', { model: 'm', stream: true, messages: [{ role: 'user', content: 'HANG_AFTER_FIRST' }] }, abort.signal);
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('text_delta')) seen += new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    const closed = await fake.when(() => fake.requests.find((r) => r.clientClosedEarly));
    expect(closed.path).toBe('/v1/messages');
    expect(seen).toContain('"text":"d0 "');
  });
});
