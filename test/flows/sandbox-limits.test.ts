import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CEILINGS, type LimitsConfig, type SandboxLimits } from '../../src/contracts/sandbox-limits.ts';
import type { RunEvent } from '../../src/contracts/run-event.ts';
import { cgroupMounts, ownCgroups } from '../../src/modules/runner/limits/index.ts';
import { configureLogging } from '../../src/shared/log.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { collect, MODEL, runnerHarness, TENANT, testDataDir } from '../support/runner.ts';

configureLogging({ level: 'error' });

/**
 * Issue 37: what an agent's commands may consume, enforced by the kernel on this machine for real (root, cgroups,
 * bubblewrap, a loop device). Without them these tests skip locally and fail under CI=true, as the bubblewrap and
 * Chromium tests do.
 */
const ROOT = process.getuid?.() === 0;
const CGROUPS = (() => {
  try {
    return cgroupMounts().length > 0;
  } catch {
    return false;
  }
})();
const BWRAP = spawnSync('bwrap', ['--version']).status === 0;
const ENFORCEABLE = ROOT && CGROUPS && BWRAP;

const LIMITS: SandboxLimits = { memoryMiB: 64, cpus: 0.5, pids: 64, wallSeconds: 5, cpuSeconds: 60, fileMiB: 8, diskMiB: 32, outputBytes: 4096, openFiles: 256 };
const config = (over: Partial<LimitsConfig> = {}): LimitsConfig => ({ mode: 'require', defaults: LIMITS, ceilings: DEFAULT_CEILINGS, ...over });

let fake: FakeProvider;
const { startRunner, startWorker, stopAll } = runnerHarness(() => fake);
const cleanups: Array<() => void> = [];

beforeAll(async () => {
  if (!ENFORCEABLE) throw new Error(`the sandbox limit tests need root, cgroups and bubblewrap (root ${ROOT}, cgroups ${CGROUPS}, bwrap ${BWRAP})`);
  fake = await startFakeProvider();
});
afterEach(async () => {
  await stopAll();
  for (const c of cleanups.splice(0)) c();
});
afterAll(() => fake?.close());

interface CommandValue {
  error?: string;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  truncated: boolean;
  durationMs: number;
  limit?: { limit: string; key: string; value: number; scope: string };
  usage?: { cpuSeconds?: number; memoryPeakMiB?: number; pidsPeak?: number };
}

/** The runner's subtree (svc-<hash>-<pid>-<n> under this process's own cgroup, in the CPU hierarchy) once a command of the session runs in it. */
async function commandTree(v1: boolean, sessionId: string, running: Promise<unknown>): Promise<{ tree: string; tenant: string; session: string }> {
  let ended: unknown;
  void running.then((r) => (ended = r ?? 'ended'), (err) => (ended = err));
  const mount = cgroupMounts().find((m) => (v1 ? m.version === 1 && m.controllers.includes('cpu') : m.version === 2))!;
  const parent = join(mount.dir, ownCgroups().get(v1 ? 'cpu' : '') ?? '/');
  const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);
  const [tenant, session] = [`t-${hash(TENANT)}`, `s-${hash(sessionId)}`];
  // the command's own group appears in its session's, in its tenant's, while it runs
  for (;;) {
    const tree = readdirSync(parent).map((n) => join(parent, n)).find((d) => /\/svc-[0-9a-f]+-\d+-\d+$/.test(d) && existsSync(join(d, tenant, session)) && readdirSync(join(d, tenant, session)).some((c) => c.startsWith('command-')));
    if (tree) return { tree, tenant, session };
    if (ended !== undefined) throw new Error(`the command ended before its cgroup was seen: ${JSON.stringify(ended)}`);
    await new Promise((r) => setImmediate(r));
  }
}

async function setup(over: Partial<LimitsConfig> = {}, runner: Record<string, unknown> = {}) {
  const r = await startRunner({ dataDir: testDataDir(), ...runner }, { sandboxLimits: config(over) });
  await r.client.putProfile(TENANT, { name: 'box', runtime: 'general', model: MODEL, tools: ['@files', '@exec'] });
  const sessionId = await r.client.createSession(TENANT, 'box');
  const command = async (script: string, timeoutMs = 60_000) => {
    const result = await r.client.invokeTool(TENANT, sessionId, 'run_command', { command: 'sh', args: ['-c', script], timeout_ms: timeoutMs });
    return { ok: result.ok, ...(result.value as CommandValue) };
  };
  return { ...r, sessionId, command };
}

describe.skipIf(!ENFORCEABLE && !process.env.CI)('sandbox limits on run_command (cgroups, rlimits, a disk per session)', { timeout: 120_000 }, () => {
  it('reports how each limit is enforced here, in runner info and readiness', async () => {
    const { client, runner } = await setup();
    const info = await client.info();
    expect(info.limits).toMatchObject({ mode: 'require', missing: [], defaults: LIMITS });
    const enforced = info.limits!.enforced;
    expect(enforced).toMatchObject({ wallSeconds: 'timer', cpuSeconds: 'rlimit', fileMiB: 'rlimit', openFiles: 'rlimit', diskMiB: 'loop-ext4', outputBytes: 'runner' });
    for (const key of ['memoryMiB', 'cpus', 'pids'] as const) expect(enforced[key]).toMatch(/^cgroup-v[12]$/);
    const ready = await runner.readiness();
    expect(ready.ready).toBe(true);
    expect(ready.checks.find((c) => c.name === 'sandbox limits')).toMatchObject({ ok: true, detail: expect.stringContaining('memory cgroup-v') });
  });

  it('ends a fork bomb within its wall time, its processes held to the cap, the runner answering throughout', async () => {
    const { command, http } = await setup();
    let done = false;
    // every process forks for ever: only the pids cap holds them, only the wall time ends them
    const bomb = command('f() { while :; do f & done; }; f').finally(() => (done = true));
    const answers: number[] = [];
    while (!done) answers.push((await fetch(`${http.url}/healthz`)).status);
    const r = await bomb;
    expect(r.ok).toBe(false);
    // the shell gives up where a fork fails, or the wall time ends it: either way the pids limit is what it met
    expect(r.error).toMatch(/^pids limit 64 processes reached: fork refused(, then killed at the wall time)?$/);
    expect(r.limit).toEqual({ limit: 'pids', key: 'pids', value: 64, scope: 'command' });
    expect(r.usage!.pidsPeak).toBeLessThanOrEqual(64);
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.every((s) => s === 200)).toBe(true);
    console.log(`[limits] fork bomb: ${r.error}; pids peak ${r.usage!.pidsPeak} (cap 64), ended after ${r.durationMs} ms (wall time 5 s), /healthz answered ${answers.length} times, all 200`);
  });

  it('kills a command that allocates twice its memory, naming the limit; the run goes on and records limit_exceeded', async () => {
    const w = await startWorker();
    const { command, client, sessionId } = await setup({}, { workerUrl: w.url });
    const r = await command('perl -e \'$x = "a" x (128 * 1024 * 1024); print length($x)\'');
    expect(r.ok).toBe(false);
    expect(r.error).toBe('memory limit 64 MiB reached: killed');
    expect(r.limit).toEqual({ limit: 'memory', key: 'memoryMiB', value: 64, scope: 'command' });

    // the same through a run: the model's tool call fails with the limit named, the event is recorded, the run ends well
    const hog = { command: 'perl', args: ['-e', '$x = "a" x (128 * 1024 * 1024)'] };
    const events: RunEvent[] = await collect(await client.run(TENANT, { id: 'run-hog', profile: 'box', sessionId, prompt: `CALL_TOOL run_command ${JSON.stringify(hog)}` }));
    const tripped = events.filter((e) => e.type === 'limit_exceeded');
    expect(tripped).toEqual([expect.objectContaining({ message: 'memory limit 64 MiB reached: killed', limit: { limit: 'memory', key: 'memoryMiB', value: 64, scope: 'command' } })]);
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ isError: true });
    expect(events.at(-1)).toMatchObject({ type: 'result' });
    expect(await client.metrics()).toMatch(/svc_sandbox_limit_kills_total\{limit="memory"\} 2/);
  });

  it('holds four CPU spinners to the CPU quota (CPU time over the wall time at most quota x wall + 10%)', async () => {
    const { command } = await setup();
    const r = await command('for i in 1 2 3 4; do yes > /dev/null & done; wait');
    expect(r.error).toBe('wall time limit 5 s reached: killed');
    const bound = LIMITS.cpus * LIMITS.wallSeconds * 1.1;
    console.log(`[limits] 4 x yes for ${LIMITS.wallSeconds} s at ${LIMITS.cpus} CPUs: ${r.usage!.cpuSeconds} s of CPU (bound ${bound} s)`);
    expect(r.usage!.cpuSeconds).toBeLessThanOrEqual(bound);
    expect(r.usage!.cpuSeconds).toBeGreaterThan(0);
  });

  it("holds each tenant's sessions in a group of the tenant's, each tenant weighing the same, all under the runner-wide CPU cap", async () => {
    const { command, client, runner, sessionId } = await setup({ totalCpus: 1 });
    const info = await client.info();
    expect(info.limits).toMatchObject({ totalCpus: 1 });
    expect((await runner.readiness()).checks.find((c) => c.name === 'sandbox limits')!.detail).toMatch(/; all sandboxes together at most 1 CPUs$/);
    const v1 = info.limits!.enforced.cpus === 'cgroup-v1';
    const spinners = command('for i in 1 2 3 4; do yes > /dev/null & done; wait');
    const { tree, tenant, session } = await commandTree(v1, sessionId, spinners);
    const read = (...p: string[]) => readFileSync(join(tree, ...p), 'utf8').trim();
    if (v1) {
      expect([read('cpu.cfs_quota_us'), read('cpu.cfs_period_us')]).toEqual(['100000', '100000']);
      expect(read(tenant, 'cpu.shares')).toBe('1024');
      expect(read(tenant, session, 'cpu.cfs_quota_us')).toBe('50000');
    } else {
      expect(read('cpu.max')).toBe('100000 100000');
      expect(read(tenant, 'cpu.weight')).toBe('100');
      expect(read(tenant, session, 'cpu.max')).toBe('50000 100000');
    }
    // and a spinner is still held to its session's quota, not the runner-wide cap
    const r = await spinners;
    expect(r.error).toBe('wall time limit 5 s reached: killed');
    expect(r.usage!.cpuSeconds).toBeLessThanOrEqual(LIMITS.cpus * LIMITS.wallSeconds * 1.1);
  });

  it("holds a session's CPU quota within the runner-wide cap when its own is larger (cgroup v1 refuses one above its parent's)", async () => {
    const { command, client, sessionId } = await setup({ totalCpus: 0.3 });
    const v1 = (await client.info()).limits!.enforced.cpus === 'cgroup-v1';
    const sleeper = command('sleep 1; echo done');
    const { tree, tenant, session } = await commandTree(v1, sessionId, sleeper);
    expect(readFileSync(join(tree, tenant, session, v1 ? 'cpu.cfs_quota_us' : 'cpu.max'), 'utf8').trim()).toBe(v1 ? '30000' : '30000 100000');
    expect(await sleeper).toMatchObject({ ok: true, stdout: 'done\n' });
  });

  it('keeps outputBytes of a flood of output and truncates the rest with the marker', async () => {
    const { command } = await setup();
    const r = await command('yes | head -c 1000000');
    expect(r.ok).toBe(true);
    expect(r.truncated).toBe(true);
    expect(r.stdout.endsWith('\n[output truncated at 4096 bytes]')).toBe(true);
    expect(r.stdout.length).toBe(4096 + '\n[output truncated at 4096 bytes]'.length);
    expect(r.limit).toEqual({ limit: 'output', key: 'outputBytes', value: 4096, scope: 'command' });
  });

  it('refuses a file past fileMiB and a disk past diskMiB inside the sandbox; the host loses at most the quota', async () => {
    // the runner's data folder on a filesystem of its own, so the host's free space is measured without the neighbours'
    const host = mkdtempSync(join(tmpdir(), 'svc-limits-host-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256m', 'tmpfs', host]);
    cleanups.push(() => {
      spawnSync('umount', ['-l', host]);
      rmSync(host, { recursive: true, force: true });
    });
    const dataDir = join(host, 'runner');
    mkdirSync(dataDir);
    const { command } = await setup({}, { dataDir });
    const big = await command('dd if=/dev/zero of=/work/big bs=1M count=16 2>&1');
    expect(big.ok).toBe(false);
    expect(big.error).toBe('file size limit 8 MiB reached: killed');

    const free = () => {
      const s = statfsSync(host);
      return s.bavail * s.bsize;
    };
    const before = free();
    const fill = await command('for i in 1 2 3 4 5 6; do dd if=/dev/zero of=/work/fill$i bs=1M count=7 status=none || exit 1; done');
    const dropMiB = (before - free()) / 1048576;
    expect(fill.ok).toBe(false);
    expect(fill.stderr).toMatch(/No space left on device/);
    expect(fill.error).toBe('disk limit 32 MiB reached: write refused');
    console.log(`[limits] disk filler: host free space dropped ${dropMiB.toFixed(1)} MiB (quota 32 MiB)`);
    expect(dropMiB).toBeLessThanOrEqual(32);
    // the session's files are where its tools see them
    expect((await command('ls /work')).stdout).toMatch(/big\nfill1/);
  });

  it('refuses commands naming the missing mechanism when required, and runs them with a warning when best-effort', async () => {
    // a PATH with bubblewrap but without util-linux prlimit: CPU time, file size and open files cannot be enforced
    const bin = mkdtempSync(join(tmpdir(), 'svc-limits-path-'));
    cleanups.push(() => rmSync(bin, { recursive: true, force: true }));
    symlinkSync('/usr/bin/bwrap', join(bin, 'bwrap'));
    const strict = await setup({}, { searchPath: bin });
    const refused = await strict.command('echo hi');
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(/^run_command is refused on this runner: SVC_SANDBOX_LIMITS=require and this runner cannot enforce cpu time, file size, open files \(cpu time: util-linux prlimit is not installed/);
    const strictReady = await strict.runner.readiness();
    expect(strictReady.ready).toBe(false);
    expect(strictReady.problems.join('\n')).toMatch(/sandbox limits: SVC_SANDBOX_LIMITS=require/);

    const lax = await setup({ mode: 'best-effort' }, { searchPath: bin });
    expect(await lax.command('echo hi')).toMatchObject({ ok: true, stdout: 'hi\n' });
    const laxReady = await lax.runner.readiness();
    expect(laxReady.ready).toBe(true);
    expect(laxReady.checks.find((c) => c.name === 'sandbox limits')!.detail).toMatch(/^warning: best-effort, not enforced here: cpu time: util-linux prlimit/);
    expect((await lax.client.info()).limits!.enforced).toMatchObject({ cpuSeconds: 'none', fileMiB: 'none', openFiles: 'none' });
  });
});

describe.skipIf(!ENFORCEABLE && !process.env.CI)('sandbox limits on sandbox worker processes', { timeout: 180_000 }, () => {
  const SECRET = 'worker-token-secret-for-the-limit-tests-0123456789';

  it('kills only the worker that outgrows its memory: its run ends with one error naming the limit, its lease is gone, the next run works', async () => {
    const providerEnv = { OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'fake-key' };
    const { client } = await startRunner({ dataDir: testDataDir(), workerTokenSecret: SECRET, providerEnv }, { sandboxLimits: config() });
    // a worker is a Node.js process: it gets 256 MiB (the commands' 64 would not start it)
    await client.putProfile(TENANT, { name: 'sbx', runtime: 'general', model: MODEL, workerMode: 'sandbox', limits: { memoryMiB: 256 } });
    const [hog, neighbour] = [await client.createSession(TENANT, 'sbx'), await client.createSession(TENANT, 'sbx')];
    for (const sessionId of [hog, neighbour]) {
      expect((await collect(await client.run(TENANT, { id: `warm-${sessionId}`, profile: 'sbx', sessionId, prompt: 'hello' }))).at(-1)).toMatchObject({ type: 'result' });
    }
    const neighbourLease = (await client.workerLease(TENANT, neighbour)) as { workerId: string };

    // the model answers with 300 MiB at once: the worker holding it outgrows 256 MiB and the kernel kills it
    const events = await collect(await client.run(TENANT, { id: 'run-hog', profile: 'sbx', sessionId: hog, prompt: 'HUGE_REPLY 300' }));
    const terminal = events.filter((e) => e.type === 'result' || e.type === 'error');
    expect(terminal).toEqual([expect.objectContaining({ type: 'error', message: 'sandbox worker ended: memory limit 256 MiB reached: killed' })]);
    expect(events.filter((e) => e.type === 'limit_exceeded')).toEqual([
      expect.objectContaining({ message: 'memory limit 256 MiB reached: killed', limit: { limit: 'memory', key: 'memoryMiB', value: 256, scope: 'worker' } }),
    ]);
    expect(await client.workerLease(TENANT, hog)).toMatchObject({ state: 'gone' });
    expect(await client.metrics()).toMatch(/svc_sandbox_limit_kills_total\{limit="memory"\} 1/);

    // only that worker: its neighbour runs on, and the hog's session gets a fresh worker
    expect(await client.workerLease(TENANT, neighbour)).toMatchObject({ state: 'running', workerId: neighbourLease.workerId });
    expect((await collect(await client.run(TENANT, { id: 'run-after', profile: 'sbx', sessionId: hog, prompt: 'still there?' }))).at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: still there?' });
    expect((await collect(await client.run(TENANT, { id: 'run-neighbour', profile: 'sbx', sessionId: neighbour, prompt: 'and you?' }))).at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: and you?' });
  });
});

describe.skipIf(!ENFORCEABLE && !process.env.CI)('sandbox limits on stdio MCP servers', { timeout: 120_000 }, () => {
  it("holds a run's stdio MCP server to the session's limits and names the one it met", async () => {
    const w = await startWorker();
    const r = await startRunner({ dataDir: testDataDir(), workerUrl: w.url }, { sandboxLimits: config() });
    await r.client.putProfile(TENANT, { name: 'box', runtime: 'general', model: MODEL, tools: ['@files'] });
    const sessionId = await r.client.createSession(TENANT, 'box');
    const hog = { name: 'hog', transport: 'stdio', command: 'perl', args: ['-e', '$x = "a" x (128 * 1024 * 1024); sleep 60'] };
    const events = await collect(await r.client.run(TENANT, { id: 'run-mcp', profile: 'box', sessionId, prompt: 'hello' }, undefined, { mcpServers: [hog] }));
    expect(events.at(-1)).toMatchObject({ type: 'error', message: expect.stringMatching(/^stdio MCP server hog did not start: memory limit 64 MiB reached: killed/) });
    expect(await r.client.metrics()).toMatch(/svc_sandbox_limit_kills_total\{limit="memory"\} 1/);
  });
});
