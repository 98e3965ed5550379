import { afterEach, describe, expect, it, vi } from 'vitest';
import { createOutput } from './output.ts';

/** Lists read as tables in a terminal (a header row, aligned columns) and stay tab-separated rows when piped. */
describe('list rows', () => {
  afterEach(() => vi.restoreAllMocks());
  const capture = () => {
    let text = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((text += String(chunk)), true));
    return () => text;
  };
  const rows = [
    ['helper', 'general', 'demo:echo'],
    ['a-much-longer-name', 'claude', null],
  ];

  it('in a terminal: a header row, then the rows aligned under it', () => {
    const text = capture();
    createOutput({ stdoutTTY: true, stderrTTY: false, color: false }, false).rows(rows, ['name', 'runtime', 'model']);
    expect(text()).toBe(['NAME                RUNTIME  MODEL', 'helper              general  demo:echo', 'a-much-longer-name  claude   -', ''].join('\n'));
  });

  it('piped: no header, one tab-separated row per item', () => {
    const text = capture();
    createOutput({ stdoutTTY: false, stderrTTY: false, color: false }, false).rows(rows, ['name', 'runtime', 'model']);
    expect(text()).toBe('helper\tgeneral\tdemo:echo\na-much-longer-name\tclaude\t-\n');
  });

  it('prints nothing for an empty list, header included', () => {
    const text = capture();
    createOutput({ stdoutTTY: true, stderrTTY: false, color: false }, false).rows([], ['name']);
    expect(text()).toBe('');
  });
});
