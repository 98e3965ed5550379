import { describe, expect, it } from 'vitest';
import { runEvent } from '../../../contracts/run-event.ts';
import { createTurnTranslator, splitToolName } from './translate.ts';

describe('the turn translator', () => {
  const make = () => createTurnTranslator({ sessionId: 's1', turnId: 't1', isFunctionTool: (n) => n === 'get_weather' });
  const types = (bodies: Array<{ type: string }>) => bodies.map((b) => b.type.replace('agent.session.turn.', ''));

  it('turns streamed assistant deltas into one message with the Responses-style event sequence', () => {
    const t = make();
    const out = [...t.handle(runEvent('assistant', { message: 'Hel', delta: true })), ...t.handle(runEvent('assistant', { message: 'lo', delta: true }))];
    out.push(...t.handle(runEvent('assistant', { message: 'Hello' })), ...t.handle(runEvent('result', { message: 'Hello' })));
    expect(types(out)).toEqual(['item.added', 'content_part.added', 'output_text.delta', 'output_text.delta', 'output_text.done', 'content_part.done', 'item.done']);
    expect(out.at(-1)).toMatchObject({ output_index: 0, item: { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello' }], turn_id: 't1' } });
  });

  it('emits the whole text of a runtime that does not stream', () => {
    const t = make();
    const out = t.handle(runEvent('assistant', { message: 'all at once' }));
    expect(out.filter((b) => b.type.endsWith('output_text.delta')).map((b) => b.delta)).toEqual(['all at once']);
    expect(types(out).at(-1)).toBe('item.done');
  });

  it('reports server-side tools as mcp_call items and leaves function tools to the function-tool endpoint', () => {
    const t = make();
    const out = [
      ...t.handle(runEvent('assistant', { message: 'Let me look.', delta: true })),
      ...t.handle(runEvent('tool_call', { toolCallId: 'c1', toolName: 'docs__search', input: { q: 'x' } })),
      ...t.handle(runEvent('tool_result', { toolCallId: 'c1', toolName: 'docs__search', output: { content: [] } })),
      ...t.handle(runEvent('tool_call', { toolCallId: 'c2', toolName: 'get_weather', input: {} })),
      ...t.handle(runEvent('tool_result', { toolCallId: 'c2', toolName: 'get_weather', output: 'sunny' })),
    ];
    expect(types(out)).toEqual(['item.added', 'content_part.added', 'output_text.delta', 'output_text.done', 'content_part.done', 'item.done', 'item.added', 'item.done']);
    expect(out[6]).toMatchObject({ output_index: 1, item: { type: 'mcp_call', server_label: 'docs', name: 'search', arguments: '{"q":"x"}', status: 'in_progress' } });
    expect(out[7]).toMatchObject({ output_index: 1, item: { type: 'mcp_call', status: 'completed', output: { content: [] } } });
    expect(t.nextOutputIndex()).toBe(2);
  });

  it('sums usage over the runs of a turn and closes what is open when the turn fails', () => {
    const t = make();
    t.handle(runEvent('usage', { usage: { inputTokens: 10, outputTokens: 2, cacheReadTokens: 4 } }));
    t.handle(runEvent('usage', { usage: { inputTokens: 5, outputTokens: 1 } }));
    expect(t.usage()).toEqual({ input_tokens: 15, input_tokens_details: { cached_tokens: 4 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 18 });
    t.handle(runEvent('assistant', { message: 'partial', delta: true }));
    expect(t.finish('failed').at(-1)).toMatchObject({ item: { status: 'incomplete', content: [{ type: 'output_text', text: 'partial' }] } });
  });

  it('turns reasoning summary deltas into a reasoning item with one summary part per part id, before the answer', () => {
    const t = make();
    const out = [
      ...t.handle(runEvent('thinking', { message: 'Think', delta: true, partId: 'rs_1:0' })),
      ...t.handle(runEvent('thinking', { message: 'ing.', delta: true, partId: 'rs_1:0' })),
      ...t.handle(runEvent('thinking', { message: 'Then answer.', delta: true, partId: 'rs_1:1' })),
      ...t.handle(runEvent('assistant', { message: 'Done', delta: true })),
      ...t.handle(runEvent('result', { message: 'Done' })),
    ];
    expect(types(out)).toEqual([
      'item.added', 'reasoning_summary_part.added', 'reasoning_summary_text.delta', 'reasoning_summary_text.delta',
      'reasoning_summary_text.done', 'reasoning_summary_part.done', 'reasoning_summary_part.added', 'reasoning_summary_text.delta',
      'reasoning_summary_text.done', 'reasoning_summary_part.done', 'item.done',
      'item.added', 'content_part.added', 'output_text.delta', 'output_text.done', 'content_part.done', 'item.done',
    ]);
    expect(out[1]).toMatchObject({ item_id: (out[0].item as { id: string }).id, output_index: 0, summary_index: 0, part: { type: 'summary_text', text: '' } });
    expect(out[9]).toMatchObject({ summary_index: 1, part: { type: 'summary_text', text: 'Then answer.' }, status: null });
    expect(out[10]).toMatchObject({ output_index: 0, item: { type: 'reasoning', status: 'completed', summary: [{ type: 'summary_text', text: 'Thinking.' }, { type: 'summary_text', text: 'Then answer.' }], turn_id: 't1' } });
    expect(out[11]).toMatchObject({ output_index: 1, item: { type: 'message' } });
  });

  it("puts a running command's output on its call's item, also output that came before the call", () => {
    const t = make();
    const early = t.handle(runEvent('tool_output', { toolName: 'run_command', message: 'one\n', delta: true }));
    expect(early).toEqual([]);
    const out = [
      ...t.handle(runEvent('tool_call', { toolCallId: 'c1', toolName: 'run_command', input: { command: 'x' } })),
      ...t.handle(runEvent('tool_output', { toolName: 'run_command', message: 'two\n', delta: true })),
      ...t.handle(runEvent('tool_result', { toolCallId: 'c1', toolName: 'run_command', output: 'one\ntwo\n' })),
    ];
    expect(out.map((b) => b.type)).toEqual(['agent.session.turn.item.added', 'agent.output.command_execution_output.delta', 'agent.output.command_execution_output.delta', 'agent.session.turn.item.done']);
    const id = (out[0].item as { id: string }).id;
    expect(out.slice(1, 3).map((b) => [b.item_id, b.output_index, b.delta])).toEqual([[id, 0, 'one\n'], [id, 0, 'two\n']]);
  });

  it('splits MCP tool names into server label and tool', () => {
    expect(splitToolName('docs__search__deep')).toEqual({ server_label: 'docs', name: 'search__deep' });
    expect(splitToolName('fs_read')).toEqual({ server_label: 'svc_toolkit', name: 'fs_read' });
  });
});
