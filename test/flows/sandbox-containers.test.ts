import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/contracts/run-event.ts';
import { createRunnerClient } from '../../src/contracts/runner.client.ts';
import { createRunner, type Runner } from '../../src/modules/runner/index.ts';
import { configureLogging } from '../../src/shared/log.ts';
import { engineAnswers, engineProxy, testContainerConfig, testEngine } from '../support/containers.ts';
import { modelRequests, startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { collect, INTERNAL_TOKEN, MODEL, runnerDefaults, runnerHarness, TENANT, testDataDir } from '../support/runner.ts';

configureLogging({ level: 'warn' });

/**
 * Sandbox sessions on the `container` substrate, on a real container engine: runner → one container per session
 * (this tree's program mounted into the base image) → the callback socket → the fake provider through the runner.
 * Without an engine these skip locally and fail under CI=true.
 */
const ENGINE_UP = await engineAnswers();
let fake: FakeProvider;
const { startRunner, stopAll } = runnerHarness(() => fake);
const SECRET = 'worker-token-secret-for-the-tests-0123456789';
const engine = testEngine();

interface Lease {
  sessionId: string;
  substrate: string;
  workerId: string;
  state: string;
}

const resultOf = (events: RunEvent[]) => events.at(-1)!;
const outputOf = (events: RunEvent[]) => (events.find((e) => e.type === 'tool_result') as unknown as { output: { structuredContent?: { stdout: string; stderr: string } } }).output.structuredContent;
const stdoutOf = (events: RunEvent[]) => outputOf(events)?.stdout ?? '';
const shell = (script: string) => `CALL_TOOL run_command ${JSON.stringify({ command: 'bash', args: ['-c', script] })}`;
const byLabel = (label: string) => engine.listContainers([label]);
const volumesByLabel = async (label: string) => (await engine.listVolumes([label])).map((v) => v.Name);

/** Polls a live read until it says what the test waits for (a state the runner or the engine reaches on its own). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The user prompts the fake provider saw in its last request: the conversation the worker sent. */
function promptsSeen(): string[] {
  const body = modelRequests(fake).at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
  return body.messages.filter((m) => m.role === 'user').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

const providerEnv = () => ({ OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'fake-key-of-the-provider' });

/** The profile's limits: the container is created with them (the operator's defaults fill the rest). */
const BOX_LIMITS = { memoryMiB: 512, pids: 256, cpus: 1.5, openFiles: 512, fileMiB: 64 };

async function setup(over: Record<string, unknown> = {}) {
  const r = await startRunner({ workerTokenSecret: SECRET, providerEnv: providerEnv(), workerSubstrate: 'container', container: testContainerConfig(), ...over });
  await r.runner.ready;
  await r.client.putProfile(TENANT, { name: 'box', runtime: 'general', model: MODEL, workerMode: 'sandbox', tools: ['@files', '@exec'], limits: BOX_LIMITS });
  return r;
}

interface Limit {
  limit: string;
  key: string;
  value: number;
  scope: string;
}
const toolResultOf = (events: RunEvent[]) => events.find((e) => e.type === 'tool_result') as unknown as { isError: boolean; output: { structuredContent?: { stdout: string; stderr: string; exitCode: number | null; signal: string | null; truncated: boolean; limit?: Limit } } };

describe.skipIf(!ENGINE_UP && !process.env.CI)('sandbox sessions in containers', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterEach(async () => {
    await stopAll();
  });
  afterAll(async () => {
    await fake?.close();
    await engine.close();
  });

  it("runs each session in its own container: no view of another session's files, no network, no host processes, non-root without capabilities", async () => {
    const { client, runner, http } = await setup();
    expect(runner.info().substrates).toEqual(['container', 'process']);
    const a = await client.createSession(TENANT, 'box');
    const b = await client.createSession(TENANT, 'box');
    const wrote = await collect(await client.run(TENANT, { id: 'run-a', profile: 'box', sessionId: a, prompt: 'CALL_TOOL run_command {"command":"echo alpha > /work/secret-a.txt && id -u"}' }));
    expect(stdoutOf(wrote)).toBe('1001\n');

    const runnerPort = new URL(http.url).port;
    const script = [
      'for p in /work/secret-a.txt /var/svc/state /root; do if [ -r "$p" ]; then echo "READABLE $p"; else echo "UNREADABLE $p"; fi; done',
      'echo "ID $(id -u):$(id -g)"',
      'grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\\t" " "',
      `if (exec 3<>/dev/tcp/127.0.0.1/${runnerPort}) 2>/dev/null; then echo "NET runner open"; else echo "NET runner closed"; fi`,
      'if getent hosts deb.debian.org >/dev/null; then echo "DNS resolves"; else echo "DNS fails"; fi',
      'echo "NETDEVS $(ls /sys/class/net | tr "\\n" " ")"',
      `if [ -e /proc/${process.pid} ]; then echo "HOSTPID visible"; else echo "HOSTPID absent"; fi`,
      'echo "PROCS $(ls -d /proc/[0-9]* | wc -l)"',
      'if grep -qs SVC_WORKER_TOKEN /proc/[0-9]*/environ; then echo "TOKEN readable"; else echo "TOKEN unreadable"; fi',
      'if touch /etc/svc-probe 2>/dev/null; then echo "ROOTFS writable"; else echo "ROOTFS read-only"; fi',
      'echo "ENV $(env | cut -d= -f1 | sort | tr "\\n" " ")"',
      'echo "ULIMITS nofile=$(ulimit -n) fsize=$(ulimit -f) cpu=$(ulimit -t) core=$(ulimit -c)"',
    ].join('; ');
    const probed = await collect(await client.run(TENANT, { id: 'run-b', profile: 'box', sessionId: b, prompt: shell(script) }));
    const out = stdoutOf(probed);
    expect(out).toContain('UNREADABLE /work/secret-a.txt');
    // the worker's own state and token belong to the worker's user, not to the command's
    expect(out).toContain('UNREADABLE /var/svc/state');
    expect(out).toContain('TOKEN unreadable');
    expect(out).toContain('UNREADABLE /root');
    expect(out).toContain('ID 1001:1001');
    for (const cap of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) expect(out).toContain(`${cap}: 0000000000000000`);
    expect(out).toContain('NoNewPrivs: 1');
    expect(out).toContain('Seccomp: 2');
    expect(out).toContain('NET runner closed');
    expect(out).toContain('DNS fails');
    expect(out).toContain('NETDEVS lo ');
    expect(out).toContain('HOSTPID absent');
    expect(Number(/PROCS (\d+)/.exec(out)![1])).toBeLessThan(20);
    expect(out).toContain('ROOTFS read-only');
    // the profile's limits hold its commands (file size in 1 KiB blocks; CPU time: the operator's default, per command)
    expect(out).toContain(`ULIMITS nofile=512 fsize=${64 * 1024} cpu=300 core=0`);
    // the command's environment is its own, nothing of the worker's (its token, its runner URL)
    const env = /ENV (.*)/.exec(out)![1].trim().split(' ');
    expect(env.filter((name) => !['HOME', 'LANG', 'PATH', 'PWD', 'SHLVL', 'TMPDIR', '_', 'SVC_EXEC_ID'].includes(name))).toEqual([]);

    // a command's leftovers end with it, and a timed-out command is killed whole (the engine has no kill for an exec)
    const leftover = await collect(await client.run(TENANT, { id: 'run-b2', profile: 'box', sessionId: b, prompt: shell('(sleep 300 &); echo started') }));
    expect(outputOf(leftover)).toMatchObject({ stdout: 'started\n', stderr: '' });
    const timedOut = await collect(await client.run(TENANT, { id: 'run-b3', profile: 'box', sessionId: b, prompt: 'CALL_TOOL run_command {"command":"sleep 300","timeout_ms":1000}' }));
    expect(timedOut.find((e) => e.type === 'tool_result')).toMatchObject({ isError: true });
    expect(JSON.stringify(timedOut)).toContain('command timed out after 1000 ms');
    const after = await collect(await client.run(TENANT, { id: 'run-b4', profile: 'box', sessionId: b, prompt: shell('for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done | grep -c "^sleep" || true') }));
    expect(stdoutOf(after)).toBe('0\n');

    // two containers, each labelled and locked down as the engine reports it
    const leases = [(await client.workerLease(TENANT, a)) as Lease, (await client.workerLease(TENANT, b)) as Lease];
    expect(leases.map((l) => [l.substrate, l.state])).toEqual([['container', 'running'], ['container', 'running']]);
    expect(leases[0].workerId).not.toBe(leases[1].workerId);
    const [inspectB] = await Promise.all([engine.inspectContainer(leases[1].workerId)]);
    const hostConfig = (inspectB as unknown as { HostConfig: Record<string, unknown> }).HostConfig;
    expect(hostConfig).toMatchObject({ NetworkMode: 'none', ReadonlyRootfs: true, CapDrop: ['ALL'], SecurityOpt: ['no-new-privileges'] });
    // the profile's `limits`, as the engine holds them: memory without swap beyond it, CPU quota, pids, rlimits
    expect(hostConfig).toMatchObject({
      Memory: 512 * 2 ** 20,
      MemorySwap: 512 * 2 ** 20,
      NanoCpus: 1.5e9,
      PidsLimit: 256,
      Ulimits: [
        { Name: 'nofile', Soft: 512, Hard: 512 },
        { Name: 'fsize', Soft: 64 * 2 ** 20, Hard: 64 * 2 ** 20 },
        { Name: 'core', Soft: 0, Hard: 0 },
      ],
    });
    expect(inspectB!.Config.Labels).toMatchObject({ 'svc.tenant': TENANT, 'svc.session': b, 'svc.runner': runner.info().id });
    expect(await volumesByLabel(`svc.session=${b}`)).toHaveLength(1);

    // deleting a session removes its container and its state volume
    await client.deleteSession(TENANT, b);
    await until(() => byLabel(`svc.session=${b}`), (list) => list.length === 0, "session b's container to be removed");
    await until(() => volumesByLabel(`svc.session=${b}`), (list) => list.length === 0, "session b's volume to be removed");
    expect(await byLabel(`svc.session=${a}`)).toHaveLength(1);
  });

  it("holds a container session's commands to its limits and names the one that stopped them; a memory hog dies, not the worker", async () => {
    const { client } = await setup();
    const profile = (name: string, limits: Record<string, number>) => client.putProfile(TENANT, { name, runtime: 'general', model: MODEL, workerMode: 'sandbox', tools: ['@files', '@exec'], limits });
    await profile('tight', { memoryMiB: 192, outputBytes: 4096, fileMiB: 8, cpuSeconds: 1, wallSeconds: 120 });
    await profile('brief', { wallSeconds: 2 });
    const sessionId = await client.createSession(TENANT, 'tight');
    const briefId = await client.createSession(TENANT, 'brief');
    const run = async (id: string, prompt: string, session = sessionId) => toolResultOf(await collect(await client.run(TENANT, { id, profile: session === sessionId ? 'tight' : 'brief', sessionId: session, prompt })));

    // a memory hog: the kernel kills it (the container's memory limit), the worker lives on; meanwhile, in another
    // session, a command outlives the session's wall time (below the tool's timeout)
    const [hog, slow] = await Promise.all([run('run-hog', shell('tail /dev/zero')), run('run-slow', shell('sleep 60'), briefId)]);
    expect(hog.isError).toBe(true);
    expect(hog.output.structuredContent).toMatchObject({ exitCode: null, signal: 'SIGKILL', limit: { limit: 'memory', key: 'memoryMiB', value: 192, scope: 'command' } });
    expect(hog.output.structuredContent!.stderr).toContain('[memory limit 192 MiB reached: killed]');
    const lease = (await client.workerLease(TENANT, sessionId)) as Lease;
    expect(lease.state).toBe('running');
    const after = await run('run-after', shell('echo still here'));
    expect(after.output.structuredContent).toMatchObject({ stdout: 'still here\n', exitCode: 0 });
    expect(after.output.structuredContent!.limit).toBeUndefined();
    expect(((await client.workerLease(TENANT, sessionId)) as Lease).workerId).toBe(lease.workerId);

    expect(slow.output.structuredContent).toMatchObject({ exitCode: null, signal: 'SIGKILL', limit: { limit: 'wall time', key: 'wallSeconds', value: 2, scope: 'command' } });
    expect(slow.output.structuredContent!.stderr).toContain('[wall time limit 2 s reached: killed]');
    // the size of one file, and CPU time
    const big = await run('run-big', shell('head -c 20000000 /dev/zero > /work/big.bin'));
    expect(big.output.structuredContent).toMatchObject({ signal: 'SIGXFSZ', limit: { key: 'fileMiB', value: 8 } });
    const spin = await run('run-spin', shell('while :; do :; done'));
    expect(spin.output.structuredContent).toMatchObject({ signal: 'SIGXCPU', limit: { key: 'cpuSeconds', value: 1 } });
    // output kept up to the session's limit, the rest cut with the marker
    const flood = await run('run-flood', shell('yes | head -c 100000'));
    expect(flood.output.structuredContent).toMatchObject({ exitCode: 0, truncated: true, limit: { key: 'outputBytes', value: 4096 } });
    expect(flood.output.structuredContent!.stdout).toContain('[output truncated at 4096 bytes]');
    expect(((await client.workerLease(TENANT, sessionId)) as Lease)).toMatchObject({ state: 'running', workerId: lease.workerId });
  });

  it('ends a run whose worker the kernel killed for memory with one error naming the limit; the next run gets a fresh container', async () => {
    const { client } = await setup();
    // less memory than the worker itself needs: the container's own process is the hog
    await client.putProfile(TENANT, { name: 'starved', runtime: 'general', model: MODEL, workerMode: 'sandbox', tools: ['@files', '@exec'], limits: { memoryMiB: 64 } });
    const sessionId = await client.createSession(TENANT, 'starved');
    const first = await collect(await client.run(TENANT, { id: 'run-1', profile: 'starved', sessionId, prompt: 'hello' }));
    expect(first.filter((e) => e.type === 'error')).toEqual([expect.objectContaining({ message: expect.stringContaining('memory limit 64 MiB reached: killed') })]);
    expect(resultOf(first).type).toBe('error');
    const gone = await until(() => client.workerLease(TENANT, sessionId) as Promise<Lease>, (l) => l.state === 'gone', 'the lease to turn gone');
    const inspected = await engine.inspectContainer(gone.workerId);
    expect(inspected?.State).toMatchObject({ OOMKilled: true, Running: false });

    const second = await collect(await client.run(TENANT, { id: 'run-2', profile: 'starved', sessionId, prompt: 'hello again' }));
    expect(resultOf(second)).toMatchObject({ type: 'error', message: expect.stringContaining('memory limit 64 MiB reached: killed') });
    const replaced = (await client.workerLease(TENANT, sessionId)) as Lease;
    expect(replaced.workerId).not.toBe(gone.workerId);
    // the killed container went when its replacement came
    expect((await byLabel(`svc.session=${sessionId}`)).map((c) => c.Names[0])).toEqual([`/${replaced.workerId}`]);
  });

  it('pauses an idle container (stopped, volume kept) and resumes it with its conversation on the next run', async () => {
    const { client, runner } = await setup({ workerIdleMs: 500 });
    const sessionId = await client.createSession(TENANT, 'box');
    expect(resultOf(await collect(await client.run(TENANT, { id: 'run-1', profile: 'box', sessionId, prompt: 'my name is Ada' })))).toMatchObject({ type: 'result' });
    const paused = await until(() => client.workerLease(TENANT, sessionId) as Promise<Lease>, (l) => l.state === 'paused', 'the idle container to pause');
    const stopped = await engine.inspectContainer(paused.workerId);
    expect(stopped?.State.Running).toBe(false);

    const second = await collect(await client.run(TENANT, { id: 'run-2', profile: 'box', sessionId, prompt: 'what is my name?' }));
    expect(resultOf(second)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: what is my name?' });
    expect(promptsSeen()).toEqual(['my name is Ada', 'what is my name?']);
    const resumed = (await client.workerLease(TENANT, sessionId)) as Lease;
    // the same container, started again
    expect(resumed).toMatchObject({ state: 'running', workerId: paused.workerId });

    // a runner that stops right after a session was deleted still removes its container and volume
    await client.deleteSession(TENANT, sessionId);
    await runner.close();
    expect(await byLabel(`svc.session=${sessionId}`)).toEqual([]);
    expect(await volumesByLabel(`svc.session=${sessionId}`)).toEqual([]);
  });

  it('reports a killed container as gone, and the next run launches a replacement that restores the conversation', async () => {
    const { client } = await setup();
    const sessionId = await client.createSession(TENANT, 'box');
    expect(resultOf(await collect(await client.run(TENANT, { id: 'run-1', profile: 'box', sessionId, prompt: 'remember the word kumquat' })))).toMatchObject({ type: 'result' });
    const lease = (await client.workerLease(TENANT, sessionId)) as Lease;
    expect(spawnSync('docker', ['kill', lease.workerId]).status).toBe(0);
    await until(() => client.workerLease(TENANT, sessionId) as Promise<Lease>, (l) => l.state === 'gone', 'the lease to turn gone');

    const second = await collect(await client.run(TENANT, { id: 'run-2', profile: 'box', sessionId, prompt: 'which word?' }));
    expect(resultOf(second)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: which word?' });
    expect(promptsSeen()).toEqual(['remember the word kumquat', 'which word?']);
    const replaced = (await client.workerLease(TENANT, sessionId)) as Lease;
    expect(replaced.state).toBe('running');
    expect(replaced.workerId).not.toBe(lease.workerId);
    // the killed container was cleared away when its replacement came
    expect((await byLabel(`svc.session=${sessionId}`)).map((c) => c.Names[0])).toEqual([`/${replaced.workerId}`]);
  });

  it("reports a container's lease as unknown while the engine does not answer, and running again once it does", async () => {
    const proxy = await engineProxy(join(tmpdir(), `svc-engine-${process.pid}.sock`));
    try {
      const { client } = await setup({ container: testContainerConfig({ dockerHost: proxy.address }) });
      const sessionId = await client.createSession(TENANT, 'box');
      expect(resultOf(await collect(await client.run(TENANT, { id: 'run-1', profile: 'box', sessionId, prompt: 'hello' })))).toMatchObject({ type: 'result' });
      await proxy.cut();
      await until(() => client.workerLease(TENANT, sessionId) as Promise<Lease>, (l) => l.state === 'unknown', 'the lease to turn unknown');
      await proxy.restore();
      await until(() => client.workerLease(TENANT, sessionId) as Promise<Lease>, (l) => l.state === 'running', 'the lease to be running again');
      expect(resultOf(await collect(await client.run(TENANT, { id: 'run-2', profile: 'box', sessionId, prompt: 'still there?' })))).toMatchObject({ type: 'result', message: 'FAKE-REPLY: still there?' });
    } finally {
      await proxy.restore().catch(() => {});
      await stopAll();
      await proxy.close();
    }
  });

  it("a restarted runner removes its previous process's containers, adopts a returning session's state volume and removes the rest", async () => {
    // two runner processes of one runner (same URL, same data folder): the first never shut down, as after a crash
    const config = { ...runnerDefaults(), dataDir: testDataDir(), workerTokenSecret: SECRET, providerEnv: providerEnv(), workerSubstrate: 'container', container: testContainerConfig(), adoptGraceMs: 2_000 };
    const publicUrl = `http://runner-restart-${process.pid}.test:7070`;
    const runners: Runner[] = [];
    const start = async () => {
      const runner = createRunner({ config, internalToken: INTERNAL_TOKEN, publicUrl, version: 'test', probeIntervalMs: 0 });
      runners.push(runner);
      await runner.ready;
      const client = createRunnerClient({ baseUrl: publicUrl, fetch: (req) => runner.app.fetch(req), internalToken: INTERNAL_TOKEN });
      await client.putProfile(TENANT, { name: 'box', runtime: 'general', model: MODEL, workerMode: 'sandbox' });
      return { runner, client };
    };
    try {
      const first = await start();
      const runnerLabel = `svc.runner=${first.runner.info().id}`;
      const kept = await first.client.createSession(TENANT, 'box');
      const dropped = await first.client.createSession(TENANT, 'box');
      await collect(await first.client.run(TENANT, { id: 'run-1', profile: 'box', sessionId: kept, prompt: 'the password is swordfish' }));
      await collect(await first.client.run(TENANT, { id: 'run-2', profile: 'box', sessionId: dropped, prompt: 'hello' }));
      expect(await byLabel(runnerLabel)).toHaveLength(2);

      const second = await start();
      expect(await byLabel(runnerLabel)).toEqual([]);
      expect((await volumesByLabel(runnerLabel)).sort()).toHaveLength(2);

      // the conductor brings `kept` back (hydrate, no bundle): its next worker starts on the adopted volume
      await second.client.hydrate(TENANT, kept, { profileName: 'box' });
      const events = await collect(await second.client.run(TENANT, { id: 'run-3', profile: 'box', sessionId: kept, prompt: 'what is the password?' }));
      expect(resultOf(events)).toMatchObject({ type: 'result' });
      expect(promptsSeen()).toEqual(['the password is swordfish', 'what is the password?']);
      // `dropped` never came back: its volume goes once the grace is over
      await until(() => volumesByLabel(`svc.session=${dropped}`), (list) => list.length === 0, "the unclaimed session's volume to be removed");
      expect(await volumesByLabel(`svc.session=${kept}`)).toHaveLength(1);
    } finally {
      for (const r of runners.reverse()) await r.close();
    }
  });

  it('offers `container` only when the engine answers and the image is present, and says so in /readyz', async () => {
    const present = await setup();
    const ready = await present.runner.readiness();
    expect(ready.checks.find((c) => c.name === 'container engine')).toMatchObject({ ok: true, detail: expect.stringMatching(/^docker \d+\.\d+.* \(API 1\.\d+\) at unix:\/\/.*, image node:24-bookworm-slim present; limits by the engine: memory and swap, CPU quota, pids, rlimits .*; disk: \S+/) });

    const absent = await setup({ container: testContainerConfig({ image: 'svc-test-no-such-image:none' }) });
    expect(absent.runner.info().substrates).toEqual(['process']);
    const refused = await collect(await absent.client.run(TENANT, { id: 'run-1', profile: 'box', sessionId: await absent.client.createSession(TENANT, 'box'), prompt: 'hi' }));
    expect(resultOf(refused)).toMatchObject({ type: 'error', message: expect.stringMatching(/substrate container is not offered.*image svc-test-no-such-image:none is not present \(SVC_WORKER_IMAGE_PULL=never\)/) });
    expect((await absent.runner.readiness()).ready).toBe(false);

    const noEngine = await setup({ container: testContainerConfig({ dockerHost: 'unix:///nonexistent/docker.sock' }) });
    expect(noEngine.runner.info().substrates).toEqual(['process']);
    const report = await noEngine.runner.readiness();
    expect(report).toMatchObject({ ready: false, problems: [expect.stringMatching(/^container engine: .*ENOENT|connect/)] });
  });
});
