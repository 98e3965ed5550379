import { describe, expect, it } from 'vitest';
import { tickStream } from './tick-stream.ts';

/** The byte stream of every NDJSON and SSE response: what arrives in one turn leaves as one write, in order. */
const decode = (chunks: Uint8Array[]) => chunks.map((c) => new TextDecoder().decode(c));
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return decode(chunks);
}

describe('tickStream', () => {
  it('writes the first item of a turn at once and the rest of that turn as one chunk', async () => {
    async function* items() {
      for (let i = 1; i <= 500; i++) yield i; // one burst, as a socket read of many upstream events
      await turn();
      await turn();
      yield 501; // alone in a later turn: written alone, without waiting for more
    }
    const chunks = await readAll(tickStream(items(), (i) => `${i}\n`));
    expect(chunks).toEqual(['1\n', Array.from({ length: 499 }, (_, i) => `${i + 2}\n`).join(''), '501\n']);
  });

  it('reads the source only a bounded way ahead of a consumer that does not read', async () => {
    let produced = 0;
    async function* items() {
      for (;;) {
        produced++;
        yield 'x'.repeat(1024);
        if (produced % 50 === 0) await turn();
      }
    }
    const stream = tickStream(items(), (s) => s);
    for (let i = 0; i < 50; i++) await turn();
    // about 256 KiB pending plus one chunk enqueued, not everything the source could make in 50 turns
    expect(produced).toBeLessThan(700);
    await stream.cancel();
  });

  it('on cancel, calls onCancel and ends the source, whose finally runs', async () => {
    let cancelled = false;
    let finished = false;
    async function* items() {
      try {
        for (let i = 0; ; i++) {
          yield i;
          await turn();
        }
      } finally {
        finished = true;
      }
    }
    const reader = tickStream(items(), (i) => `${i}\n`, { onCancel: () => (cancelled = true) }).getReader();
    expect(decode([(await reader.read()).value!])).toEqual(['0\n']);
    await reader.cancel();
    expect(cancelled).toBe(true);
    expect(finished).toBe(true);
  });

  it('passes a source failure on to the reader after what came before it', async () => {
    async function* items() {
      yield 'a';
      await turn();
      throw new Error('upstream broke');
    }
    const reader = tickStream(items(), (s) => s).getReader();
    expect(decode([(await reader.read()).value!])).toEqual(['a']);
    await expect(reader.read()).rejects.toThrow('upstream broke');
  });

  it('with onError, ends cleanly after what came before a source failure (an SSE client sees an ended stream)', async () => {
    const failures: string[] = [];
    async function* items() {
      yield 'a';
      yield 'b';
      throw new Error('upstream broke');
    }
    const chunks = await readAll(tickStream(items(), (s) => s, { onError: (err) => failures.push(String(err)) }));
    expect(chunks.join('')).toBe('ab');
    expect(failures).toEqual(['Error: upstream broke']);
  });
});
