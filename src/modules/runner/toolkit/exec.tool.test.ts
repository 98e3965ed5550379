import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { invokeTool, makeRunner, newSession, putProfile, testDataDir } from '../runner.fixture.ts';
import type { Runner } from '../runner.ts';

let runner: Runner;
afterEach(() => runner?.close());

async function execSession() {
  const dataDir = testDataDir();
  runner = makeRunner({ config: { dataDir } });
  await putProfile(runner, { name: 'builder', tools: ['@default', '@exec'] });
  const id = await newSession(runner, 'builder');
  const run = async (input: Record<string, unknown>) => (await invokeTool(runner, id, 'run_command', input)).body.result;
  return { id, run, workDir: () => realpathSync(join(dataDir, 'sessions', id, 'work')) };
}

/** Running, not a zombie: an orphan killed here may wait for a reaper that a container's PID 1 never runs. */
const alive = (pid: number) => {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

describe('run_command', () => {
  it('runs in the session work directory, where the file tools write', async () => {
    const { id, run, workDir } = await execSession();
    await invokeTool(runner, id, 'fs_write', { path: 'input.txt', content: 'from the file tool\n' });
    const result = await run({ command: 'pwd && cat input.txt && echo made > out.txt' });
    expect(result).toMatchObject({ ok: true, value: { exitCode: 0, stdout: `${workDir()}\nfrom the file tool\n`, timedOut: false } });
    expect(readFileSync(join(workDir(), 'out.txt'), 'utf8')).toBe('made\n');
  });

  it('runs a program with arguments and no shell', async () => {
    const { run } = await execSession();
    const result = await run({ command: 'echo', args: ['$HOME', '; rm -rf /'] });
    expect(result.value.stdout).toBe('$HOME ; rm -rf /\n');
  });

  it('gives the command a minimal environment without the runner\'s secrets', async () => {
    process.env.SVC_TEST_SECRET_FOR_EXEC = 'do-not-leak';
    try {
      const { run, workDir } = await execSession();
      const { value } = await run({ command: 'env' });
      expect(value.stdout).not.toContain('do-not-leak');
      expect(value.stdout).toContain(`HOME=${workDir()}`);
    } finally {
      delete process.env.SVC_TEST_SECRET_FOR_EXEC;
    }
  });

  it('reports a non-zero exit as a failure that still carries the output', async () => {
    const { run } = await execSession();
    const result = await run({ command: 'echo partial; echo oops >&2; exit 3' });
    expect(result).toMatchObject({ ok: false, value: { error: 'command exited with code 3', exitCode: 3, stdout: 'partial\n', stderr: 'oops\n' } });
  });

  it('kills the whole process group when the command times out', async () => {
    const { run, workDir } = await execSession();
    const result = await run({ command: 'sleep 30 & echo $! > bg.pid; sleep 30', timeout_ms: 300 });
    expect(result).toMatchObject({ ok: false, value: { error: 'command timed out after 300 ms', timedOut: true } });
    const bg = Number(readFileSync(join(workDir(), 'bg.pid'), 'utf8'));
    await expect.poll(() => alive(bg)).toBe(false);
  });

  it('caps the output and marks it truncated', async () => {
    const { run } = await execSession();
    const { value } = await run({ command: 'head -c 200000 /dev/zero | tr "\\0" a' });
    expect(value.truncated).toBe(true);
    expect(value.stdout.startsWith('a'.repeat(65536))).toBe(true);
    expect(value.stdout.slice(65536)).toBe('\n[output truncated at 65536 bytes]');
  });
});
