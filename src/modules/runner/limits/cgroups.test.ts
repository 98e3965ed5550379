import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cgroupMounts, cgroupV2, ownCgroups, type CgroupDriver } from './cgroups.ts';

/**
 * The cgroup v2 code path, for real: a cgroup2 hierarchy mounted here (on a v2 host it is the host's own tree; on
 * these v1 machines the memory, pids and cpu controllers are bound to v1, so the v2 tree has none of them, but its
 * groups, cgroup.procs, cgroup.kill, cgroup.events and cpu.stat work). What the tree offers is asserted as it is:
 * a controller is either there or named as absent, with the reason. Needs root; skips without, fails under CI=true.
 */
const ROOT = process.getuid?.() === 0;
let dir = '';
let driver: CgroupDriver | undefined;

beforeAll(() => {
  if (!ROOT) throw new Error('the cgroup v2 tests need root (mount -t cgroup2)');
  dir = mkdtempSync(join(tmpdir(), 'svc-cgroup2-'));
  execFileSync('mount', ['-t', 'cgroup2', 'none', dir]);
});
afterAll(async () => {
  await driver?.close();
  if (dir) spawnSync('umount', [dir]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!ROOT && !process.env.CI)('cgroup v2', () => {
  it('finds the cgroup2 mount and this process in it', () => {
    expect(cgroupMounts().some((m) => m.version === 2 && m.dir === dir)).toBe(true);
    expect(ownCgroups().get('')).toMatch(/^\//);
  });

  it('makes a subtree, holds a process tree in a group, and kills the whole group at once', async () => {
    driver = cgroupV2({ version: 2, dir, root: '/', controllers: [] }, ownCgroups(), `svc-v2-test-${process.pid}`);
    expect(driver).toBeDefined();
    const d = driver!;
    expect(d.version).toBe('cgroup-v2');
    expect(d.has.kill).toBe(true);
    for (const c of ['memory', 'pids', 'cpu'] as const) {
      if (!d.has[c]) expect(d.absent.find((a) => a.startsWith(`${c}:`))).toMatch(new RegExp(`^${c}: the cgroup v2 tree at ${dir} offers no ${c} controller here`));
    }
    // the runner-wide CPU cap, a tenant's group with its weight, a session's, a command's
    const sub = join(dir, `svc-v2-test-${process.pid}`);
    d.limitSubtree({ cpus: 1 });
    d.group(['t-test'], { cpuWeight: 100 });
    const group = d.group(['t-test', 's-test', 'command-1'], { memoryBytes: 64 * 1024 * 1024, pids: 16, cpus: 0.5 });
    const [procs] = group.procsFiles;
    expect(existsSync(procs)).toBe(true);
    expect(existsSync(join(sub, 't-test', 's-test', 'command-1'))).toBe(true);
    if (d.has.memory) expect(readFileSync(join(sub, 't-test', 's-test', 'command-1', 'memory.max'), 'utf8').trim()).toBe(String(64 * 1024 * 1024));
    if (d.has.cpu) {
      expect(readFileSync(join(sub, 'cpu.max'), 'utf8').trim()).toBe('100000 100000');
      expect(readFileSync(join(sub, 't-test', 'cpu.weight'), 'utf8').trim()).toBe('100');
      expect(readFileSync(join(sub, 't-test', 's-test', 'command-1', 'cpu.max'), 'utf8').trim()).toBe('50000 100000');
    }

    // joins before it execs, as the limiter's wrapper does; then forks two sleepers into the same group
    const child = spawn('/bin/sh', ['-c', `echo $$ > ${procs} && exec sh -c 'sleep 1000 & sleep 1000 & wait'`], { stdio: 'ignore' });
    const exited = new Promise<string | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    while (group.pids().length < 3) await new Promise((r) => setImmediate(r));
    expect(group.pids()).toContain(child.pid);
    await group.kill();
    expect(await exited).toBe('SIGKILL');
    expect(group.pids()).toEqual([]);
    expect(readFileSync(join(sub, 't-test', 's-test', 'command-1', 'cgroup.events'), 'utf8')).toMatch(/^populated 0$/m);
    expect(group.stats()).toMatchObject({ oomKills: 0, pidsRefused: 0, cpuNs: expect.any(Number) });

    await group.remove();
    expect(existsSync(procs)).toBe(false);
  });
});
