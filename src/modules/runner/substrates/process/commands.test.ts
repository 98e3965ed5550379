import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCommand } from './commands.ts';

/**
 * A command's output becomes text once, on the runner: bytes that are not UTF-8 become U+FFFD the same way in the
 * live output (what a client streams while the command runs) and in the result, so the two never disagree, even
 * when the output ends inside a multi-byte sequence.
 */
describe('command output', () => {
  const run = async (script: string) => {
    const live: string[] = [];
    const result = await runCommand(
      { command: script, timeoutMs: 10_000, maxOutputBytes: 64 * 1024, onOutput: (text) => live.push(text) },
      ([file, ...argv]) => spawn(file, argv, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    return { live: live.join(''), result };
  };

  it('shows the same text live as in the result, for bytes that are not UTF-8 and a sequence the output ends inside', async () => {
    // "é" whole, a lone continuation byte, NUL, then the first two bytes of "€" (e2 82 ac) and nothing after them
    const { live, result } = await run(`printf 'caf\\303\\251 \\200 a\\000b \\342\\202'`);
    expect(result.stdout).toBe('café \ufffd a\u0000b \ufffd');
    expect(live).toBe(result.stdout);
  });
});
