import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lastTotals, rolloutBundleThreadId, rolloutFiles, rolloutThreadId } from './rollout.ts';

const ID = '01a1fe7f-53f7-7231-a5b4-87c15ab1e4f8';
const file = (path: string, text = '{}\n') => ({ path, data: new TextEncoder().encode(text) });

describe('Codex rollout matching', () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-rollout-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('reads the thread id after the timestamp of a rollout name', () => {
    expect(rolloutThreadId(`rollout-2026-11-21T14-25-19-${ID}.jsonl`)).toBe(ID);
    expect(rolloutThreadId(`rollout-2026-11-21T14-25-19-${ID}.json`)).toBeUndefined();
    expect(rolloutThreadId(`history-2026-11-21T14-25-19-${ID}.jsonl`)).toBeUndefined();
    expect(rolloutThreadId(`rollout-${ID}.jsonl`)).toBeUndefined();
  });

  it('exports only the rollouts of the exact thread, never one whose id merely starts or ends with it', async () => {
    const day = join(home, 'sessions', '2026', '11', '21');
    mkdirSync(day, { recursive: true });
    const names = [
      `rollout-2026-11-21T14-25-19-${ID}.jsonl`, // the thread
      `rollout-2026-11-21T14-25-20-${ID}-2.jsonl`, // a thread whose id has ours as a prefix
      `rollout-2026-11-21T14-25-21-x-${ID}.jsonl`, // … or as a suffix
      `rollout-2026-11-21T14-25-22-${ID.slice(0, 20)}.jsonl`, // a prefix of ours
    ];
    for (const name of names) writeFileSync(join(day, name), `${name}\n`);
    mkdirSync(join(home, 'sessions', 'elsewhere'), { recursive: true });
    writeFileSync(join(home, 'sessions', 'elsewhere', `rollout-2020-01-01T00-00-00-${ID}.jsonl`), 'older\n');

    const files = await rolloutFiles(home, ID);
    expect(files.map((f) => f.path)).toEqual([`sessions/2026/11/21/${names[0]}`, `sessions/elsewhere/rollout-2020-01-01T00-00-00-${ID}.jsonl`]);
    expect((await rolloutFiles(home, `${ID}-2`)).map((f) => f.path)).toEqual([`sessions/2026/11/21/${names[1]}`]);
    expect(await rolloutFiles(home, ID.slice(0, 8))).toEqual([]);
  });

  it('accepts a bundle of one thread and names it', () => {
    expect(rolloutBundleThreadId([file(`sessions/2026/11/21/rollout-2026-11-21T14-25-19-${ID}.jsonl`)])).toBe(ID);
  });

  it.each([
    ['a file outside sessions/', [file(`rollout-2026-11-21T14-25-19-${ID}.jsonl`)], /unexpected entry/],
    ['a file that is not a rollout', [file('sessions/state_5.sqlite')], /unexpected entry/],
    ['two threads', [file(`sessions/rollout-2026-11-21T14-25-19-${ID}.jsonl`), file(`sessions/rollout-2026-11-21T14-25-19-${ID}-2.jsonl`)], /mixes 2 threads/],
  ])('refuses a bundle with %s', (_label, files, pattern) => {
    expect(() => rolloutBundleThreadId(files)).toThrow(pattern);
  });

  it('takes the thread totals from the last token_count event, skipping a torn last line', () => {
    const line = (input: number) => JSON.stringify({ type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: { input_tokens: input, cached_input_tokens: 4, cache_write_input_tokens: 0, output_tokens: 3 } } } });
    const totals = lastTotals([file('r', [line(12), line(24), '{"type":"event_msg","payload":{"type":"token_count"'].join('\n'))]);
    expect(totals).toMatchObject({ input_tokens: 24, cached_input_tokens: 4, output_tokens: 3 });
    expect(lastTotals([])).toMatchObject({ input_tokens: 0, output_tokens: 0 });
  });
});
