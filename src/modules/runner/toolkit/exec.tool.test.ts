import { randomUUID } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readNdjson } from '../../../shared/ndjson.ts';
import { processesMentioning } from '../../../../test/support/proc-table.ts';
import { call, invokeTool, makeRunner, newSession, putProfile, testDataDir } from '../runner.fixture.ts';
import type { ProfileSpec } from '../../../contracts/runner.wire.ts';
import type { Runner } from '../runner.ts';

let runner: Runner;
afterEach(() => runner?.close());

async function execSession(profile: Partial<ProfileSpec> = {}, setup?: () => Promise<void>) {
  const dataDir = testDataDir();
  runner = makeRunner({ config: { dataDir } });
  await putProfile(runner, { name: 'builder', tools: ['@default', '@exec'], ...profile });
  await setup?.();
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
    // inside the sandbox the session's scratch folder is /work, as the file tools name it
    expect(result).toMatchObject({ ok: true, value: { exitCode: 0, stdout: '/work\nfrom the file tool\n', timedOut: false } });
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
      const { run } = await execSession();
      const { value } = await run({ command: 'env; cat /proc/1/environ' });
      expect(value.stdout).not.toContain('do-not-leak');
      expect(value.stdout).toContain('HOME=/home');
    } finally {
      delete process.env.SVC_TEST_SECRET_FOR_EXEC;
    }
  });

  it('reports a non-zero exit as a failure that still carries the output', async () => {
    const { run } = await execSession();
    const result = await run({ command: 'echo partial; echo oops >&2; exit 3' });
    expect(result).toMatchObject({ ok: false, value: { error: 'command exited with code 3', exitCode: 3, stdout: 'partial\n', stderr: 'oops\n' } });
  });

  it('kills everything the command started when it times out', async () => {
    const { run } = await execSession();
    // the sandbox has its own PID numbers: find the background process on the host by a marker in its environment
    const marker = `svc-exec-test-${randomUUID()}`;
    const result = await run({ command: `MARKER=${marker} sleep 30 & MARKER=${marker} sleep 30`, timeout_ms: 300 });
    expect(result).toMatchObject({ ok: false, value: { error: 'command timed out after 300 ms', timedOut: true } });
    await expect.poll(() => processesMentioning(marker).filter((p) => alive(p.pid))).toEqual([]);
  });

  it('ends background processes with the command', async () => {
    const { run } = await execSession();
    const marker = `svc-exec-test-${randomUUID()}`;
    const result = await run({ command: `MARKER=${marker} sleep 30 > /dev/null 2>&1 & echo started` });
    expect(result).toMatchObject({ ok: true, value: { stdout: 'started\n' } });
    await expect.poll(() => processesMentioning(marker).filter((p) => alive(p.pid))).toEqual([]);
  });

  it('caps the output and marks it truncated', async () => {
    const { run } = await execSession();
    const { value } = await run({ command: 'head -c 200000 /dev/zero | tr "\\0" a' });
    expect(value.truncated).toBe(true);
    expect(value.stdout.startsWith('a'.repeat(65536))).toBe(true);
    expect(value.stdout.slice(65536)).toBe('\n[output truncated at 65536 bytes]');
  });
});

describe('run_command in the sandbox', () => {
  const lines = (text: string) => text.trim().split('\n');

  it('sees only the mounts the fs policy allows', async () => {
    const { run } = await execSession({ fs: { allowedMounts: ['/work'] } });
    const { value } = await run({ command: 'ls /; ls /home 2>&1; ls /pool 2>&1; true' });
    expect(lines(value.stdout)).not.toContain('home');
    expect(lines(value.stdout)).not.toContain('pool');
    expect(value.stdout).toContain("ls: cannot access '/home': No such file or directory");
  });

  it('keeps read-only what the fs policy makes read-only, once it exists', async () => {
    const { id, run } = await execSession({ fs: { readOnly: ['/work/inputs', '/home/**'] } });
    expect((await run({ command: 'mkdir inputs && echo seed > inputs/data.txt' })).ok).toBe(true);
    const refused = await run({ command: 'echo more >> inputs/data.txt' });
    expect(refused).toMatchObject({ ok: false, value: { stderr: expect.stringContaining('Read-only file system') } });
    expect((await run({ command: 'echo fine > other.txt && echo x > /home/h.txt' })).value.stderr).toContain('Read-only file system');
    expect((await invokeTool(runner, id, 'fs_read', { path: '/work/other.txt' })).body.result).toMatchObject({ ok: true });
    expect((await run({ command: 'cat inputs/data.txt' })).value.stdout).toBe('seed\n');
  });

  it('gives pool members their pool with the pool\'s read and write grants', async () => {
    const { id, run } = await execSession({}, async () => {
      const pool = { name: 'team', members: [{ profile: 'builder' }], fs: { read: ['/pool/{pool}/**'], write: ['/pool/{pool}/out/**'] } };
      expect((await call(runner, 'POST', '/runner/pools', { body: { pool } })).status).toBe(204);
    });
    expect((await invokeTool(runner, id, 'fs_write', { path: '/pool/team/out/seed.txt', content: 'seeded' })).body.result.ok).toBe(true);
    const { value } = await run({ command: 'ls /pool; cat /pool/team/out/seed.txt; echo; echo y > /pool/team/out/made.txt && echo wrote out; echo z > /pool/team/top.txt || echo top refused' });
    expect(lines(value.stdout)).toEqual(['team', 'seeded', 'wrote out', 'top refused']);
  });

  it('has no network unless the profile enables it', async () => {
    const interfaces = (text: string) => lines(text).slice(2).map((l) => l.split(':')[0].trim()).sort();
    const host = interfaces(readFileSync('/proc/net/dev', 'utf8'));
    const off = await execSession();
    expect(interfaces((await off.run({ command: 'cat /proc/net/dev' })).value.stdout)).toEqual(['lo']);
    await runner.close();
    const on = await execSession({ network: 'enabled' });
    expect(interfaces((await on.run({ command: 'cat /proc/net/dev' })).value.stdout)).toEqual(host);
  });

  it('refuses a profile network setting it does not know', async () => {
    runner = makeRunner();
    const res = await call(runner, 'POST', '/runner/profiles', { body: { profile: { name: 'x', runtime: 'general', network: 'host' } } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^profile\.network: expected \("disabled" \| "enabled"\)/);
  });
});

describe('run_command output while it runs', () => {
  it('streams the output of a running command to a streaming invoke, then the result, with the env it was given', async () => {
    const { id } = await execSession();
    // the command prints, then waits for a file the test writes only after it saw that output
    const script = 'echo "started as $WHO"; while [ ! -f go ]; do sleep 0.02; done; echo finished >&2';
    const res = await call(runner, 'POST', `/runner/sessions/${id}/toolkit/invoke`, { body: { toolName: 'run_command', input: { command: script, env: { WHO: 'setup' } }, stream: true } });
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = readNdjson<{ output?: string; result?: { ok: boolean; value: { stdout: string; stderr: string } } }>(res.body!);
    expect((await lines.next()).value).toEqual({ output: 'started as setup\n' });
    await invokeTool(runner, id, 'fs_write', { path: 'go', content: '' });
    const rest: unknown[] = [];
    for await (const line of lines) rest.push(line);
    expect(rest).toEqual([{ output: 'finished\n' }, { result: expect.objectContaining({ ok: true, value: expect.objectContaining({ stdout: 'started as setup\n', stderr: 'finished\n', exitCode: 0 }) }) }]);
  });

  it('answers a refused streaming invoke as JSON, like the plain one', async () => {
    const { id } = await execSession({ tools: ['@default'] });
    const res = await call(runner, 'POST', `/runner/sessions/${id}/toolkit/invoke`, { body: { toolName: 'run_command', input: { command: 'true' }, stream: true } });
    expect(res.status).toBe(403);
    expect((await res.json()).error).toContain('not in the scope');
  });
});
