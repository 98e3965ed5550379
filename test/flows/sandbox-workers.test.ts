import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '../../src/shared/log.ts';
import type { RunEvent } from '../../src/contracts/run-event.ts';
import { startFakeProvider, modelRequests, type FakeProvider } from '../support/fake-provider.ts';
import { collect, runnerHarness, TENANT, testDataDir, MODEL } from '../support/runner.ts';
import { startMcpServer } from '../support/mcp-server.ts';
import { RELAY_KEY_PLACEHOLDER } from '../../src/modules/runner/workers/sandbox/worker-socket.ts';

configureLogging({ level: 'warn' });

/**
 * Sandbox workers end to end: runner client → runner on a port → one bubblewrap-isolated worker process per session
 * (this program in outbound mode) → the runner's callback socket → the fake model provider through the runner.
 */
let fake: FakeProvider;
const { startRunner, stopAll } = runnerHarness(() => fake);
const SECRET = 'worker-token-secret-for-the-tests-0123456789';

beforeAll(async () => {
  fake = await startFakeProvider();
});
afterEach(async () => {
  delete process.env.SVC_TEST_CANARY;
  await stopAll();
});
afterAll(() => fake.close());

async function setup(over: Record<string, unknown> = {}) {
  const dataDir = testDataDir();
  const providerEnv = { OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'fake-key-of-the-provider', OPENAI_API_KEY: 'sk-other-provider' };
  const r = await startRunner({ dataDir, workerTokenSecret: SECRET, providerEnv, ...over });
  await r.client.putProfile(TENANT, { name: 'sbx', runtime: 'general', model: MODEL, workerMode: 'sandbox', tools: ['@files', '@exec'] });
  return { ...r, dataDir };
}

const resultOf = (events: RunEvent[]) => events.at(-1)!;
const toolOutput = (events: RunEvent[]) => events.find((e) => e.type === 'tool_result') as RunEvent & { output: { structuredContent?: Record<string, any> } };

interface Lease {
  sessionId: string;
  substrate: string;
  workerId: string;
  runtime: string;
  state: string;
  startedAt: string;
}

/** The host pid of the worker process itself (inside bubblewrap's init), found below the lease's pid. */
function workerPid(lease: Lease): number {
  const pending = [Number(/^process-(\d+)-/.exec(lease.workerId)![1])];
  while (pending.length) {
    const pid = pending.shift()!;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (cmdline.includes('svc.js') && !cmdline.split('\0')[0].endsWith('bwrap')) return pid;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    if (children) pending.push(...children.split(/\s+/).map(Number));
  }
  throw new Error(`no worker process below ${lease.workerId}`);
}

function environOf(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

/** Polls a live read until it says what the test waits for (a state the runner reaches on its own). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The user prompts the fake provider saw in its last request: the conversation the worker sent. */
function promptsSeen(): string[] {
  const body = modelRequests(fake).at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
  return body.messages.filter((m) => m.role === 'user').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

const shell = (script: string) => `CALL_TOOL run_command ${JSON.stringify({ command: 'bash', args: ['-c', script] })}`;

describe('sandbox workers', () => {
  it('runs a session on its own worker process', async () => {
    const { client } = await setup();
    const sessionId = await client.createSession(TENANT, 'sbx');
    const events = await collect(await client.run(TENANT, { id: 'run-1', profile: 'sbx', sessionId, prompt: 'hello sandbox' }));
    expect(resultOf(events)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello sandbox' });
    // the worker holds no key; the provider still got the runner's, added by the runner as it forwarded the call
    expect(modelRequests(fake).at(-1)!.headers.authorization).toBe('Bearer fake-key-of-the-provider');
  }, 30_000);

  it('isolates two sessions in two worker processes: no view of each other, the data folder, /root, the server env or the network', async () => {
    process.env.SVC_TEST_CANARY = 'canary-of-the-server-environment';
    const { client, dataDir, http } = await setup();
    const a = await client.createSession(TENANT, 'sbx');
    const b = await client.createSession(TENANT, 'sbx');
    const wrote = await collect(await client.run(TENANT, { id: 'run-a', profile: 'sbx', sessionId: a, prompt: 'CALL_TOOL fs_write {"path":"secret-a.txt","content":"alpha"}' }));
    expect(resultOf(wrote)).toMatchObject({ type: 'result' });
    expect(readFileSync(join(dataDir, 'sessions', a, 'work', 'secret-a.txt'), 'utf8')).toBe('alpha');

    const hostFileOfA = join(dataDir, 'sessions', a, 'work', 'secret-a.txt');
    const runnerPort = new URL(http.url).port;
    const providerPort = new URL(fake.url).port;
    const script = [
      `for p in ${hostFileOfA} ${dataDir} /work/secret-a.txt /root /var/svc; do if [ -e "$p" ]; then echo "VISIBLE $p"; else echo "ABSENT $p"; fi; done`,
      'echo "ENV $(env | cut -d= -f1 | sort | tr "\\n" " ")"',
      `for port in ${runnerPort} ${providerPort}; do if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo "NET $port open"; else echo "NET $port closed"; fi; done`,
      'if (exec 3<>/dev/tcp/1.1.1.1/80) 2>/dev/null; then echo "NET outside open"; else echo "NET outside closed"; fi',
    ].join('; ');
    const probed = await collect(await client.run(TENANT, { id: 'run-b', profile: 'sbx', sessionId: b, prompt: shell(script) }));
    const stdout: string = toolOutput(probed).output.structuredContent!.stdout;
    expect(stdout).toContain(`ABSENT ${hostFileOfA}`);
    expect(stdout).toContain(`ABSENT ${dataDir}`);
    expect(stdout).toContain('ABSENT /work/secret-a.txt');
    expect(stdout).toContain('ABSENT /root');
    // nor its own worker's folder (its token lives in that process, its state there)
    expect(stdout).toContain('ABSENT /var/svc');
    const env = /ENV (.*)/.exec(stdout)![1].trim().split(' ');
    expect(env.filter((name) => !['HOME', 'LANG', 'PATH', 'PWD', 'SHLVL', 'TMPDIR', '_'].includes(name))).toEqual([]);
    expect(stdout).toContain(`NET ${runnerPort} closed`);
    expect(stdout).toContain(`NET ${providerPort} closed`);
    expect(stdout).toContain('NET outside closed');

    // the file tools of B cannot reach A's file either
    const read = await collect(await client.run(TENANT, { id: 'run-b2', profile: 'sbx', sessionId: b, prompt: `CALL_TOOL fs_read {"path":"${hostFileOfA}"}` }));
    expect(read.find((e) => e.type === 'tool_result')).toMatchObject({ isError: true });
    expect(JSON.stringify(read)).not.toContain('alpha');

    // two worker processes, each seeing only its own session
    const leaseA = (await client.workerLease(TENANT, a)) as Lease;
    const leaseB = (await client.workerLease(TENANT, b)) as Lease;
    expect(leaseA).toMatchObject({ sessionId: a, substrate: 'process', runtime: 'general', state: 'running' });
    expect(leaseB).toMatchObject({ sessionId: b, substrate: 'process', runtime: 'general', state: 'running' });
    const [pidA, pidB] = [workerPid(leaseA), workerPid(leaseB)];
    expect(pidA).not.toBe(pidB);
    for (const [pid, own, other] of [[pidA, a, b], [pidB, b, a]] as const) {
      const root = `/proc/${pid}/root`;
      expect(existsSync(`${root}${dataDir}`)).toBe(false);
      expect(existsSync(`${root}/root`)).toBe(false);
      expect(existsSync(`${root}/var/svc/state`)).toBe(true);
      expect(readdirSync(`${root}/work`)).toEqual(own === a ? ['secret-a.txt'] : []);
      expect(existsSync(`${root}${join(dataDir, 'sessions', other)}`)).toBe(false);
      const environ = environOf(pid);
      expect(environ.SVC_SESSION_ID).toBe(own);
      expect(environ.SVC_TEST_CANARY).toBeUndefined();
      expect(Object.values(environ)).not.toContain('internal-secret');
      // no provider key at all: a placeholder for its own provider's (the runner adds the key), none for another's
      expect(environ.OPENAI_COMPATIBLE_API_KEY).toBe(RELAY_KEY_PLACEHOLDER);
      expect(environ.OPENAI_API_KEY).toBeUndefined();
      expect(readFileSync(`/proc/${pid}/environ`, 'utf8')).not.toContain('fake-key-of-the-provider');
      expect(readFileSync(`/proc/${pid}/environ`, 'utf8')).not.toContain('sk-other-provider');
      // a network namespace with only a loopback device: nothing but its relay to the callback socket leads out
      const devices = readFileSync(`/proc/${pid}/net/dev`, 'utf8').split('\n').slice(2).map((l) => l.trim().split(':')[0]).filter(Boolean);
      expect(devices).toEqual(['lo']);
    }
  }, 60_000);

  it("lets a worker's network reach only the runner's callbacks for its own session and its model provider", async () => {
    const { client, http } = await setup();
    const a = await client.createSession(TENANT, 'sbx');
    const b = await client.createSession(TENANT, 'sbx');
    for (const [id, sessionId] of [['run-a', a], ['run-b', b]]) await collect(await client.run(TENANT, { id, profile: 'sbx', sessionId, prompt: 'hi' }));
    const pid = workerPid((await client.workerLease(TENANT, a)) as Lease);
    // from inside the worker's network namespace (as the worker itself would connect)
    // (asynchronously: the runner answering the relay lives in this process)
    const inside = (cmd: string) =>
      new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn('nsenter', ['-t', String(pid), '-n', 'bash', '-c', cmd], { stdio: ['ignore', 'pipe', 'ignore'] });
        let stdout = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.on('close', (code) => resolve({ code, stdout }));
      });
    const connect = async (host: string, port: string | number) => (await inside(`timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/${port}'`)).code;
    expect(await connect('127.0.0.1', new URL(http.url).port)).not.toBe(0);
    expect(await connect('127.0.0.1', new URL(fake.url).port)).not.toBe(0);
    expect(await connect('1.1.1.1', 80)).not.toBe(0);
    // its relay (127.0.0.1:7070 inside) leads to the runner's socket for this session, which answers only that
    // a bare HTTP/1.0 request from bash (no client program needed): the status code of the answer
    const curl = async (path: string, method = 'GET') => {
      const request = `${method} ${path} HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\nContent-Length: 0\\r\\n\\r\\n`;
      const { stdout } = await inside(`exec 3<>/dev/tcp/127.0.0.1/7070 && printf '${request}' >&3 && timeout 10 head -n 1 <&3`);
      return /^HTTP\/1\.[01] (\d{3})/.exec(stdout)?.[1] ?? stdout;
    };
    expect(await curl('/runner/info')).toBe('404');
    expect(await curl('/runner/worker/leases')).toBe('404');
    expect(await curl(`/worker/sessions/${b}/next-run`)).toBe('404');
    expect(await curl(`/worker/sessions/${a}/next-run`)).toBe('401'); // its own callbacks, with its token only
    // the configured provider is forwarded (the fake answers), one that is not configured is not
    const before = fake.requests.length;
    expect(await curl('/provider/openai-compatible/chat/completions', 'POST')).not.toBe('404');
    expect(fake.requests.length).toBe(before + 1);
    expect(await curl('/provider/anthropic/messages', 'POST')).toBe('404');
  }, 60_000);
});

describe('the MCP servers of a sandbox session', () => {
  it("are reached through the runner, which fronts them (the worker has no network), and pass its permission gate", async () => {
    const docs = await startMcpServer({ name: 'docs' });
    try {
      const { client } = await setup();
      await client.putProfile(TENANT, { name: 'sbx-mcp', runtime: 'general', model: MODEL, workerMode: 'sandbox', mcpServers: [{ name: 'docs', transport: 'http', url: docs.url }], permissions: { 'mcp:docs/fail': 'deny' } });
      const sessionId = await client.createSession(TENANT, 'sbx-mcp');
      const echoed = await collect(await client.run(TENANT, { id: 'run-mcp-1', profile: 'sbx-mcp', sessionId, prompt: 'CALL_TOOL docs__echo {"message":"from the sandbox"}' }));
      expect(resultOf(echoed)).toMatchObject({ type: 'result', message: expect.stringContaining('TOOL-RESULT-SEEN: echo: from the sandbox') });
      const denied = await collect(await client.run(TENANT, { id: 'run-mcp-2', profile: 'sbx-mcp', sessionId, prompt: 'CALL_TOOL docs__fail {}' }));
      expect(resultOf(denied)).toMatchObject({ type: 'result', message: expect.stringContaining('tool docs__fail denied by the permission policy of profile sbx-mcp (mcp:docs/fail: deny)') });
      expect(docs.calls).toEqual([{ name: 'echo', args: { message: 'from the sandbox' } }]);
    } finally {
      await docs.close();
    }
  }, 60_000);
});

describe('sandbox worker leases', () => {
  it('lists leases by tenant, reads one, and replaces a killed worker (gone) on the next run, which restores its saved state', async () => {
    const { client, runner, http } = await setup();
    await client.putProfile('globex', { name: 'sbx', runtime: 'general', model: MODEL, workerMode: 'sandbox' });
    await client.putProfile(TENANT, { name: 'static', runtime: 'general', model: MODEL });
    const sessionId = await client.createSession(TENANT, 'sbx');
    const staticSession = await client.createSession(TENANT, 'static');
    // before its first run a session has no worker
    await expect(client.workerLease(TENANT, sessionId)).rejects.toThrow(/no sandbox worker/);
    expect(await client.workerLeases(TENANT)).toEqual([]);

    const first = await collect(await client.run(TENANT, { id: 'run-1', profile: 'sbx', sessionId, prompt: 'remember the word kumquat' }));
    expect(resultOf(first)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: remember the word kumquat' });
    const lease = (await client.workerLease(TENANT, sessionId)) as Lease;
    expect(lease).toEqual({ sessionId, substrate: 'process', workerId: expect.stringMatching(/^process-\d+-/), runtime: 'general', state: 'running', startedAt: expect.any(String) });
    expect(await client.workerLeases(TENANT)).toEqual([lease]);
    expect(await client.workerLeases('globex')).toEqual([]);
    await expect(client.workerLease('globex', sessionId)).rejects.toThrow(/no sandbox worker/);
    await expect(client.workerLease(TENANT, staticSession)).rejects.toThrow(/no sandbox worker/);
    // no tenant header: the internal fan-out sees every lease
    const all = await runner.app.request('/runner/worker/leases', { headers: { 'X-Svc-Internal-Token': 'Bearer internal-secret' } });
    expect(await all.json()).toEqual([lease]);

    process.kill(Number(/^process-(\d+)-/.exec(lease.workerId)![1]), 'SIGKILL');
    await until(() => client.workerLease(TENANT, sessionId) as Promise<Lease>, (l) => l.state === 'gone', 'the lease to turn gone');

    const second = await collect(await client.run(TENANT, { id: 'run-2', profile: 'sbx', sessionId, prompt: 'which word?' }));
    expect(resultOf(second)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: which word?' });
    // the replacement restored the state its predecessor wrote after its run, before its first poll
    expect(promptsSeen()).toEqual(['remember the word kumquat', 'which word?']);
    const replaced = (await client.workerLease(TENANT, sessionId)) as Lease;
    expect(replaced).toMatchObject({ state: 'running' });
    expect(replaced.workerId).not.toBe(lease.workerId);

    // a substrate event invalidates the lease: the worker stops, and the next run gets a replacement
    const invalidate = (body: unknown) => runner.app.request('/runner/sandbox-events/invalidate', { method: 'POST', headers: { 'X-Svc-Internal-Token': 'Bearer internal-secret', 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(await (await invalidate({ provider: 'process', sandboxId: 'no-such-worker' })).json()).toEqual({ invalidated: 0 });
    expect(await (await invalidate({ provider: 'process', sandboxId: replaced.workerId })).json()).toEqual({ invalidated: 1 });
    expect(await client.workerLease(TENANT, sessionId)).toMatchObject({ state: 'gone' });
    const bad = await invalidate({ provider: 'process' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/sandboxId/);
    expect(http.url).toBeTruthy();
  }, 60_000);

  it('pauses an idle worker and resumes the conversation on the next run', async () => {
    const { client } = await setup({ workerIdleMs: 300 });
    const sessionId = await client.createSession(TENANT, 'sbx');
    const first = await collect(await client.run(TENANT, { id: 'run-1', profile: 'sbx', sessionId, prompt: 'my name is Ada' }));
    expect(resultOf(first)).toMatchObject({ type: 'result' });
    const paused = await until(() => client.workerLease(TENANT, sessionId) as Promise<Lease>, (l) => l.state === 'paused', 'the idle worker to pause');
    const pid = Number(/^process-(\d+)-/.exec(paused.workerId)![1]);
    expect(existsSync(`/proc/${pid}`)).toBe(false);

    const second = await collect(await client.run(TENANT, { id: 'run-2', profile: 'sbx', sessionId, prompt: 'what is my name?' }));
    expect(resultOf(second)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: what is my name?' });
    expect(promptsSeen()).toEqual(['my name is Ada', 'what is my name?']);
    const resumed = (await client.workerLease(TENANT, sessionId)) as Lease;
    expect(resumed.state).toBe('running');
    expect(resumed.workerId).not.toBe(paused.workerId);
  }, 60_000);

  it('starts a hydrated session from its bundle, and stops its worker when the session ends', async () => {
    const { client, dataDir } = await setup();
    const history = [
      { role: 'user', content: 'my favourite colour is teal' },
      { role: 'assistant', content: [{ type: 'text', text: 'noted' }] },
    ];
    const sessionId = 'sess-hydrated-elsewhere';
    await client.hydrate(TENANT, sessionId, { profileName: 'sbx', runtimeSessionId: sessionId, stateContentType: 'application/json', stateB64: Buffer.from(JSON.stringify(history)).toString('base64') });
    const events = await collect(await client.run(TENANT, { id: 'run-1', profile: 'sbx', sessionId, prompt: 'which colour?' }));
    expect(resultOf(events)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: which colour?' });
    expect(promptsSeen()).toEqual(['my favourite colour is teal', 'which colour?']);

    // hydrated again while its worker idles: the worker holding the old conversation makes way for one starting from the bundle
    const replaced = [{ role: 'user', content: 'my favourite colour is crimson' }, { role: 'assistant', content: [{ type: 'text', text: 'noted' }] }];
    await client.hydrate(TENANT, sessionId, { profileName: 'sbx', runtimeSessionId: sessionId, stateContentType: 'application/json', stateB64: Buffer.from(JSON.stringify(replaced)).toString('base64') });
    expect(await client.workerLease(TENANT, sessionId)).toMatchObject({ state: 'paused' });
    await collect(await client.run(TENANT, { id: 'run-2', profile: 'sbx', sessionId, prompt: 'which colour now?' }));
    expect(promptsSeen()).toEqual(['my favourite colour is crimson', 'which colour now?']);

    const pid = workerPid((await client.workerLease(TENANT, sessionId)) as Lease);
    await client.deleteSession(TENANT, sessionId);
    await expect(client.workerLease(TENANT, sessionId)).rejects.toThrow(/no sandbox worker/);
    await until(async () => existsSync(`/proc/${pid}`), (alive) => !alive, 'the worker process to end');
    // the session's folder goes last, once its worker has stopped (the release runs after DELETE has answered)
    await until(async () => existsSync(join(dataDir, 'sandboxes', sessionId)), (present) => !present, "the session's sandbox folder to be removed");
  }, 60_000);

  it('runs unisolated worker processes only when the operator opted out of the sandbox', async () => {
    const { client, runner } = await setup({ sandbox: 'off' });
    expect(runner.info()).toMatchObject({ substrates: ['process'], sandbox: { mode: 'off' } });
    const sessionId = await client.createSession(TENANT, 'sbx');
    const events = await collect(await client.run(TENANT, { id: 'run-1', profile: 'sbx', sessionId, prompt: 'hello unisolated' }));
    expect(resultOf(events)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello unisolated' });
  }, 60_000);

  it("places a packaged skill's files where the sandbox worker and its commands see them", async () => {
    const { client } = await setup();
    const sessionId = await client.createSession(TENANT, 'sbx');
    const skills = [{ name: 'greeter', body: 'Run run.sh to greet.', resources: [{ path: 'run.sh', content: Buffer.from('#!/bin/sh\necho hello from the skill\n').toString('base64'), executable: true }] }];
    const events = await collect(await client.run(TENANT, { id: 'run-1', profile: 'sbx', sessionId, prompt: 'CALL_TOOL run_command {"command":"/work/.skills/greeter/run.sh"}' }, undefined, { skills }));
    expect(toolOutput(events).output.structuredContent!.stdout).toBe('hello from the skill\n');
    const pid = workerPid((await client.workerLease(TENANT, sessionId)) as Lease);
    expect(readFileSync(`/proc/${pid}/root/work/.skills/greeter/run.sh`, 'utf8')).toContain('hello from the skill');
  }, 60_000);

  it('reaches a per-run model address through the session socket, and refuses a workerImage the process substrate cannot honour', async () => {
    const { client } = await setup();
    const sessionId = await client.createSession(TENANT, 'sbx');
    const before = fake.requests.length;
    const model = { model: 'openai-compatible:tenant-model', baseUrl: `${fake.url}/v1`, apiKey: 'tenant-own-key' };
    const events = await collect(await client.run(TENANT, { id: 'run-1', profile: 'sbx', sessionId, prompt: 'with my own model' }, undefined, { model }));
    expect(resultOf(events)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: with my own model' });
    const seen = modelRequests(fake).slice(before);
    expect(seen.at(-1)!.body.model).toBe('tenant-model');
    expect(seen.at(-1)!.headers.authorization).toBe('Bearer tenant-own-key');

    // a tenant's own key alone (the profile's model, the runner's relay): the relay forwards it as it came, for that run
    const own = await collect(await client.run(TENANT, { id: 'run-own-key', profile: 'sbx', sessionId, prompt: 'on my own key' }, undefined, { model: { apiKey: 'tenant-key-only' } }));
    expect(resultOf(own)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: on my own key' });
    expect(modelRequests(fake).at(-1)!.headers.authorization).toBe('Bearer tenant-key-only');
    await collect(await client.run(TENANT, { id: 'run-runner-key', profile: 'sbx', sessionId, prompt: 'on the runner key' }));
    expect(modelRequests(fake).at(-1)!.headers.authorization).toBe('Bearer fake-key-of-the-provider');

    await client.putProfile(TENANT, { name: 'imaged', runtime: 'general', model: MODEL, workerMode: 'sandbox', workerImage: 'svc:latest' });
    const imaged = await client.createSession(TENANT, 'imaged');
    const refused = await collect(await client.run(TENANT, { id: 'run-2', profile: 'imaged', sessionId: imaged, prompt: 'hi' }));
    expect(refused).toEqual([expect.objectContaining({ type: 'error', message: expect.stringContaining('workerImage "svc:latest" is not supported by the process substrate') })]);
  }, 60_000);
});

describe('the SDK runtimes in sandbox workers', () => {
  it('runs runtime_a (Claude Code) in a sandbox worker, reaching anthropic through the runner', { timeout: 90_000 }, async () => {
    const dataDir = testDataDir();
    const providerEnv = { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-ant-fake' };
    const r = await startRunner({ dataDir, workerTokenSecret: SECRET, providerEnv });
    await r.client.putProfile(TENANT, { name: 'claude', runtime: 'runtime_a', model: 'claude-sonnet-4-5', workerMode: 'sandbox' });
    const sessionId = await r.client.createSession(TENANT, 'claude');
    const events = await collect(await r.client.run(TENANT, { id: 'run-1', profile: 'claude', sessionId, prompt: 'hello claude' }));
    expect(resultOf(events)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello claude' });
    expect(modelRequests(fake).at(-1)!.headers['x-api-key']).toBe('sk-ant-fake');
  });

  it('runs runtime_b (Codex) in a sandbox worker, reaching openai through the runner', { timeout: 90_000 }, async () => {
    const dataDir = testDataDir();
    const providerEnv = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-fake' };
    const r = await startRunner({ dataDir, workerTokenSecret: SECRET, providerEnv });
    await r.client.putProfile(TENANT, { name: 'codex', runtime: 'runtime_b', model: 'gpt-5.5', workerMode: 'sandbox' });
    const sessionId = await r.client.createSession(TENANT, 'codex');
    const events = await collect(await r.client.run(TENANT, { id: 'run-1', profile: 'codex', sessionId, prompt: 'hello codex' }));
    expect(resultOf(events)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello codex' });
    expect(modelRequests(fake).at(-1)!.headers.authorization).toBe('Bearer sk-fake');
  });
});
