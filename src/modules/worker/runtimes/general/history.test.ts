import { describe, expect, it } from 'vitest';
import type { ModelMessage } from 'ai';
import { createHistoryStore, HISTORY_MAX_DEPTH, parseHistory, resumeHistory, serializeHistory, toJsonSafe, trimTurns } from './history.ts';

const turn = (n: number): ModelMessage[] => [
  { role: 'user', content: `q${n}` },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 't', input: {} }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${n}`, toolName: 't', output: { type: 'text', value: 'ok' } }] },
  { role: 'assistant', content: `a${n}` },
];

describe('general runtime history', () => {
  it('answers the call a parked turn left pending with the decided result, and finds nothing to resume otherwise', () => {
    const parked: ModelMessage[] = [
      { role: 'user', content: 'write it' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'fs_write', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'fs_write', output: { type: 'error-text', value: 'tool fs_write waits for approval apr_1: the run is parked until a person decides' } }] },
    ];
    const resumed = resumeHistory(parked, 'apr_1', { content: [{ type: 'text', text: 'wrote 5 bytes' }], isError: false })!;
    expect(resumed.slice(0, 2)).toEqual(parked.slice(0, 2));
    expect(resumed[2]).toEqual({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'fs_write', output: { type: 'text', value: 'wrote 5 bytes' } }] });
    const denied = resumeHistory(parked, 'apr_1', { content: [{ type: 'text', text: 'tool fs_write was not run: a person denied it' }], isError: true })!;
    expect((denied[2] as { content: Array<{ output: unknown }> }).content[0]!.output).toEqual({ type: 'error-text', value: 'tool fs_write was not run: a person denied it' });
    expect(resumeHistory(parked, 'apr_2', {})).toBeUndefined();
    expect(resumeHistory(turn(1), 'apr_1', {})).toBeUndefined();
  });

  it('drops the oldest whole turns past the cap, never splitting a tool call from its result', () => {
    const messages = [...turn(1), ...turn(2), ...turn(3)];
    const kept = trimTurns(messages, 9);
    expect(kept).toEqual([...turn(2), ...turn(3)]);
    expect(kept[0].role).toBe('user');
  });

  it('keeps a single turn whole even when it alone is over the cap', () => {
    expect(trimTurns([...turn(1), ...turn(2)], 2)).toEqual(turn(2));
  });

  it('bounds each session and forgets the least recently used sessions', () => {
    const store = createHistoryStore({ maxMessages: 4, maxSessions: 2 });
    store.append('a', turn(1));
    store.append('a', turn(2));
    expect(store.get('a')).toEqual(turn(2));
    store.append('b', turn(1));
    store.append('c', turn(1));
    expect(store.has('a')).toBe(false);
    expect(store.has('b') && store.has('c')).toBe(true);
  });

  it('serialises circular references as the string [circular]', () => {
    const output: Record<string, unknown> = { ok: true };
    output.self = output;
    const messages = [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'json', value: output } }] }] as unknown as ModelMessage[];
    const json = JSON.parse(serializeHistory(messages));
    expect(json[0].content[0].output.value).toEqual({ ok: true, self: '[circular]' });
  });

  it('keeps shared (non-circular) references and turns bytes into base64', () => {
    const shared = { x: 1 };
    expect(toJsonSafe({ a: shared, b: shared, bytes: new Uint8Array([104, 105]) })).toEqual({ a: { x: 1 }, b: { x: 1 }, bytes: 'aGk=' });
  });

  it('parses an exported history back and names the first invalid message', () => {
    const bytes = new TextEncoder().encode(serializeHistory(turn(1)));
    expect(parseHistory(bytes)).toHaveLength(4);
    expect(() => parseHistory(new TextEncoder().encode('[{"role":"user","content":"x"},{"role":"robot"}]'))).toThrow(/state\[1\]/);
  });

  it('refuses a bundle nested past the limit with a 400 before the message schema recurses, and imports one within it', () => {
    const nested = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
    const tool = (value: string) => `[{"role":"tool","content":[{"type":"tool-result","toolCallId":"c","toolName":"t","output":{"type":"json","value":${value}}}]}]`;
    expect(() => parseHistory(new TextEncoder().encode(tool(nested(5000))))).toThrow(`state: JSON nested deeper than ${HISTORY_MAX_DEPTH} levels`);
    expect(parseHistory(new TextEncoder().encode(tool(nested(500))))).toHaveLength(1);
  });
});
