import { crc32 } from 'node:zlib';
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
    const gemini = { contents: [{ role: 'user', parts: [{ text: 'q' }] }, { role: 'model', parts: [{ functionCall: { name: 'echo', args: {} } }] }, { role: 'user', parts: [{ functionResponse: { name: 'echo', response: { name: 'echo', content: 'out' } } }] }] };
    expect(lastInput('gemini', gemini)).toEqual({ kind: 'tool', text: 'out' });
    expect(lastInput('gemini', { contents: [{ role: 'user', parts: [{ text: 'hel' }, { text: 'lo' }] }] })).toEqual({ kind: 'user', text: 'hello' });
    const bedrock = { messages: [{ role: 'user', content: [{ text: 'q' }] }, { role: 'assistant', content: [{ toolUse: { toolUseId: 't', name: 'echo', input: {} } }] }, { role: 'user', content: [{ toolResult: { toolUseId: 't', content: [{ text: 'out' }] } }] }] };
    expect(lastInput('bedrock', bedrock)).toEqual({ kind: 'tool', text: 'out' });
    expect(lastInput('bedrock', { messages: [{ role: 'user', content: [{ text: 'hello' }] }] })).toEqual({ kind: 'user', text: 'hello' });
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

  it('answers Gemini generateContent and Bedrock Converse without streaming as one JSON response with usage', async () => {
    const gemini = await (await post('/models/m:generateContent', { contents: [{ role: 'user', parts: [{ text: 'ping' }] }] })).json();
    expect(gemini).toMatchObject({ candidates: [{ content: { role: 'model', parts: [{ text: 'FAKE-REPLY: ping' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 12, cachedContentTokenCount: 4 } });
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v1/models/m:generateContent', wire: 'gemini' });
    const bedrock = await (await fetch(`${fake.origin}/model/m/converse`, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'CALL_TOOL echo {"a":1}' }] }] }) })).json();
    expect(bedrock).toMatchObject({ output: { message: { content: [{ toolUse: { name: 'echo', input: { a: 1 } } }] } }, stopReason: 'tool_use', usage: { inputTokens: 12, cacheReadInputTokens: 4 } });
  });

  it('fails Gemini and Bedrock requests with their own error shapes', async () => {
    const gemini = await post('/models/m:streamGenerateContent', { contents: [{ role: 'user', parts: [{ text: 'FAIL_HTTP_429' }] }] });
    expect(gemini.status).toBe(429);
    expect(await gemini.json()).toEqual({ error: { code: 429, message: 'fake provider failure (HTTP 429)', status: 'RESOURCE_EXHAUSTED' } });
    const bedrock = await fetch(`${fake.origin}/model/m/converse-stream`, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'FAIL_HTTP_429' }] }] }) });
    expect(bedrock.status).toBe(429);
    expect(bedrock.headers.get('x-amzn-errortype')).toBe('ThrottlingException');
    expect(await bedrock.json()).toEqual({ message: 'fake provider failure (HTTP 429)' });
  });

  it('streams Bedrock Converse as AWS event-stream frames whose lengths and CRC32s check out', async () => {
    const res = await fetch(`${fake.origin}/model/m/converse-stream`, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] }) });
    expect(res.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    const bytes = Buffer.from(await res.arrayBuffer());
    const events: Array<{ headers: Record<string, string>; payload: any }> = [];
    for (let at = 0; at < bytes.length; ) {
      const total = bytes.readUInt32BE(at);
      const headersLength = bytes.readUInt32BE(at + 4);
      expect(bytes.readUInt32BE(at + 8)).toBe(crc32(bytes.subarray(at, at + 8)));
      expect(bytes.readUInt32BE(at + total - 4)).toBe(crc32(bytes.subarray(at, at + total - 4)));
      const headers: Record<string, string> = {};
      for (let h = at + 12; h < at + 12 + headersLength; ) {
        const name = bytes.toString('utf8', h + 1, h + 1 + bytes[h]);
        h += 1 + bytes[h];
        expect(bytes[h]).toBe(7); // a string header
        const length = bytes.readUInt16BE(h + 1);
        headers[name] = bytes.toString('utf8', h + 3, h + 3 + length);
        h += 3 + length;
      }
      events.push({ headers, payload: JSON.parse(bytes.toString('utf8', at + 12 + headersLength, at + total - 4)) });
      at += total;
    }
    expect(events.map((e) => e.headers[':event-type'])).toEqual(['messageStart', 'contentBlockDelta', 'contentBlockDelta', 'contentBlockStop', 'messageStop', 'metadata']);
    expect(events.every((e) => e.headers[':message-type'] === 'event' && e.headers[':content-type'] === 'application/json')).toBe(true);
    expect(events.filter((e) => e.headers[':event-type'] === 'contentBlockDelta').map((e) => e.payload.delta.text).join('')).toBe('FAKE-REPLY: hi');
    expect(events.at(-1)!.payload.usage).toEqual({ inputTokens: 12, cacheReadInputTokens: 4, cacheWriteInputTokens: 2, outputTokens: 2, totalTokens: 20 });
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
