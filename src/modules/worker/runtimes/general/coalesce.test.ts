import { describe, expect, it } from 'vitest';
import { coalesceDeltaStream } from './coalesce.ts';

type Part = Parameters<typeof coalesceDeltaStream>[0] extends ReadableStream<infer P> ? P : never;

/** A provider stream the test feeds: parts pushed together arrive in one turn of the event loop. */
function provider() {
  let controller!: ReadableStreamDefaultController<Part>;
  let cancelled: unknown;
  const stream = new ReadableStream<Part>(
    {
      start: (c) => void (controller = c),
      cancel: (reason) => void (cancelled = reason ?? 'cancelled'),
    },
    { highWaterMark: 1_000 },
  );
  return {
    stream,
    push: (...parts: Part[]) => parts.forEach((p) => controller.enqueue(p)),
    end: () => controller.close(),
    cancelled: () => cancelled,
  };
}

const text = (delta: string, id = 't1'): Part => ({ type: 'text-delta', id, delta });
const reasoning = (delta: string, id = 'r1'): Part => ({ type: 'reasoning-delta', id, delta });
/** The turn after next: whatever the stream holds from this turn has gone by then. */
const nextTurns = async () => {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await new Promise<void>((resolve) => setImmediate(resolve));
};

async function readAll(stream: ReadableStream<Part>): Promise<Part[]> {
  const out: Part[] = [];
  for await (const part of stream) out.push(part);
  return out;
}

const summary = (parts: Part[]) => parts.map((p) => ('delta' in p ? `${p.type}:${p.delta}` : p.type));

describe('coalescing a model stream per turn of the event loop', () => {
  it('sends the first delta of a burst at once and joins the rest of the turn into one, text unchanged', async () => {
    const p = provider();
    p.push({ type: 'text-start', id: 't1' }, ...['a', 'b', 'c', 'd', 'e'].map((d) => text(d)), { type: 'text-end', id: 't1' });
    p.end();
    expect(summary(await readAll(coalesceDeltaStream(p.stream)))).toEqual(['text-start', 'text-delta:a', 'text-delta:bcde', 'text-end']);
  });

  it('leaves deltas that arrive in different turns as they came', async () => {
    const p = provider();
    const out = readAll(coalesceDeltaStream(p.stream));
    for (const d of ['a', 'b', 'c']) {
      p.push(text(d));
      await nextTurns();
    }
    p.end();
    expect(summary(await out)).toEqual(['text-delta:a', 'text-delta:b', 'text-delta:c']);
  });

  it('keeps every other part in its place, and joins only deltas of one part without provider metadata', async () => {
    const p = provider();
    const withMetadata: Part = { type: 'text-delta', id: 't1', delta: 'm', providerMetadata: { google: { thoughtSignature: 'sig' } } };
    p.push(
      text('a'),
      text('b'),
      { type: 'tool-input-start', id: 'call-1', toolName: 'echo' },
      { type: 'tool-input-delta', id: 'call-1', delta: '{"x":' },
      { type: 'tool-input-delta', id: 'call-1', delta: '1}' },
      { type: 'tool-input-end', id: 'call-1' },
      { type: 'tool-call', toolCallId: 'call-1', toolName: 'echo', input: '{"x":1}' },
      text('c'),
      reasoning('x'),
      reasoning('y'),
      reasoning('z', 'r2'),
      withMetadata,
      text('n'),
      text('o', 't2'),
      text('p', 't2'),
    );
    p.end();
    const parts = await readAll(coalesceDeltaStream(p.stream));
    expect(summary(parts)).toEqual([
      'text-delta:a',
      'text-delta:b',
      'tool-input-start',
      'tool-input-delta:{"x":',
      'tool-input-delta:1}',
      'tool-input-end',
      'tool-call',
      'text-delta:c',
      'reasoning-delta:xy',
      'reasoning-delta:z',
      'text-delta:m',
      'text-delta:n',
      'text-delta:op',
    ]);
    expect(parts.find((x) => x.type === 'text-delta' && x.delta === 'm')).toBe(withMetadata);
    expect(parts.filter((x) => x.type === 'text-delta' && x.id === 't2')).toEqual([{ type: 'text-delta', id: 't2', delta: 'op' }]);
  });

  it('sends what it joined before the provider stream fails', async () => {
    const parts = [text('a'), text('b'), text('c')];
    const failing = new ReadableStream<Part>({ pull: (c) => (parts.length ? c.enqueue(parts.shift()!) : c.error(new Error('connection reset'))) });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const part of coalesceDeltaStream(failing)) seen.push(summary([part])[0]);
      })(),
    ).rejects.toThrow('connection reset');
    expect(seen).toEqual(['text-delta:a', 'text-delta:bc']);
  });

  it('cancels the provider stream when its reader goes away', async () => {
    const p = provider();
    p.push(text('a'));
    const reader = coalesceDeltaStream(p.stream).getReader();
    expect(await reader.read()).toEqual({ done: false, value: text('a') });
    await reader.cancel(new Error('run cancelled'));
    expect(p.cancelled()).toEqual(new Error('run cancelled'));
  });
});
