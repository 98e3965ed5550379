import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../../contracts/run-event.ts';
import { RUN_ID_HEADER, WORKER_PROTOCOL_HEADER, type WorkerCommand } from '../../../../contracts/sandbox-worker.ts';
import { call, makeRunner, ndjsonLines, newSession, putProfile } from '../../runner.fixture.ts';
import type { Runner } from '../../runner.ts';
import type { LaunchedWorker, WorkerLaunch, WorkerSubstrate } from '../../substrates/substrate.ts';
import { createWorkerTokens, mcpTokenTtlMs } from './worker-token.ts';

/**
 * The callback protocol as a worker sees it, over the runner's HTTP surface. A substrate that starts nothing stands
 * in for the infrastructure (as a Kubernetes API would for a container substrate): the test plays the worker, with
 * the token the runner minted for it, so every protocol error can be provoked on purpose.
 */
const SECRET = 'callback-test-secret-0123456789abcdefghij';
const TENANT = 'acme';
let runner: Runner | undefined;
afterEach(async () => {
  await runner?.close();
  runner = undefined;
});

function manualSubstrate() {
  const launched: Array<{ spec: WorkerLaunch; worker: LaunchedWorker; exit: () => void; gone: boolean }> = [];
  const waiting: Array<() => void> = [];
  /** Resolves once the runner has launched its `n`th worker. */
  const launchedCount = (n: number) => (launched.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(() => launched.length >= n && resolve())));
  const start = (spec: WorkerLaunch): LaunchedWorker => {
    let exit!: () => void;
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => (exit = () => resolve({ code: 0, signal: null })));
    const worker: LaunchedWorker = { workerId: `manual-${launched.length + 1}`, pid: undefined, startedAt: new Date().toISOString(), exited, stderrTail: () => '' };
    const rec = { spec, worker, gone: false, exit: () => ((rec.gone = true), exit()) };
    launched.push(rec);
    waiting.forEach((w) => w());
    return worker;
  };
  const find = (w: LaunchedWorker) => launched.find((l) => l.worker === w)!;
  /** Set to make the substrate unreachable: it cannot tell whether a worker is there. */
  const control = { unreachable: false };
  const substrate: WorkerSubstrate = {
    id: 'manual',
    ready: async () => ({ offered: true, detail: 'the test plays the worker' }),
    status: () => ({ offered: true, detail: 'the test plays the worker' }),
    runnerUrlFor: async () => 'http://runner.test',
    launch: start,
    resume: start,
    pause: async (w) => find(w).exit(),
    stop: async (w) => find(w).exit(),
    state: (w) => (control.unreachable ? 'unknown' : find(w).gone ? 'gone' : 'running'),
  };
  return { substrate, launched, launchedCount, control };
}

async function setup(over: { secret?: string | null; limits?: Record<string, number>; pollMs?: number; startTimeoutMs?: number } = {}) {
  const manual = manualSubstrate();
  runner = makeRunner({
    config: { workerTokenSecret: over.secret === null ? undefined : (over.secret ?? SECRET), workerSubstrate: 'manual', workerPollMs: over.pollMs ?? 60_000, workerStartTimeoutMs: over.startTimeoutMs, stateCapBytes: 1024 },
    substrates: [manual.substrate],
    uploadLimits: over.limits,
  });
  await putProfile(runner, { name: 'sbx', model: 'demo:echo', workerMode: 'sandbox' }, TENANT);
  const sessionId = await newSession(runner, 'sbx', TENANT);
  return { runner, sessionId, manual };
}

/** Starts a run and reads its stream to the end in the background. */
function startRun(r: Runner, sessionId: string, id: string): Promise<RunEvent[]> {
  return call(r, 'POST', '/runner/run', { tenant: TENANT, body: { subTask: { id, profile: 'sbx', sessionId, prompt: 'hi' } } }).then((res) => ndjsonLines<RunEvent>(res));
}

function worker(r: Runner, sessionId: string, token: string | undefined) {
  const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const base = `/worker/sessions/${sessionId}`;
  return {
    poll: (headers: Record<string, string> = { [WORKER_PROTOCOL_HEADER]: '1' }) => Promise.resolve(r.app.request(`${base}/next-run`, { headers: { ...auth, ...headers } })),
    async next(): Promise<WorkerCommand> {
      const res = await this.poll();
      expect(res.status).toBe(200);
      return (await res.json()) as WorkerCommand;
    },
    events: (runId: string | undefined, body: BodyInit) =>
      Promise.resolve(r.app.request(`${base}/events`, { method: 'POST', headers: { ...auth, ...(runId ? { [RUN_ID_HEADER]: runId } : {}), 'content-type': 'application/x-ndjson' }, body, duplex: 'half' } as RequestInit)),
    state: (body: BodyInit) => Promise.resolve(r.app.request(`${base}/state`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'X-Runtime-Session-Id': sessionId }, body })),
  };
}

const line = (event: Partial<RunEvent>) => JSON.stringify({ ts: new Date().toISOString(), ...event }) + '\n';

/** A run started and its command taken by the test's worker. */
async function activeRun(runId = 'run-1', over: Parameters<typeof setup>[0] = {}) {
  const s = await setup(over);
  const events = startRun(s.runner, s.sessionId, runId);
  await s.manual.launchedCount(1);
  const token = s.manual.launched[0].spec.env.SVC_WORKER_TOKEN;
  const w = worker(s.runner, s.sessionId, token);
  const cmd = await w.next();
  expect(cmd).toMatchObject({ protocol: 1, command: 'run', runId });
  return { ...s, events, token, w, cmd };
}

describe('the callback protocol', () => {
  it('hands the run to the worker and streams its events into the run', async () => {
    const { w, events, cmd, manual } = await activeRun();
    if (cmd.command !== 'run') throw new Error('not a run');
    expect(cmd.run).toMatchObject({ sessionId: expect.any(String), profile: { name: 'sbx', runtime: 'general' }, subtask: { prompt: 'hi' } });
    // the MCP URL the worker gets is on its runner URL, with a worker token rather than a session token
    expect(cmd.run.sessionMcpUrl).toMatch(/^http:\/\/runner\.test\/runner\/sessions\/.+\/mcp\?svc_worker_token=ey/);
    expect(manual.launched[0].spec.env).toMatchObject({ SVC_RUNNER_URL: 'http://runner.test', SVC_WORKER_PROTOCOL: '1', MODE: 'general' });
    const res = await w.events('run-1', line({ type: 'assistant', message: 'hello' }) + line({ type: 'result', message: 'hello' }));
    expect(res.status).toBe(204);
    expect((await events).map((e) => e.type)).toEqual(['assistant', 'result']);
  });

  it('answers 204 after an idle poll and 400 without the protocol header', async () => {
    const { runner: r, sessionId, manual } = await setup({ pollMs: 100 });
    const events = startRun(r, sessionId, 'run-1');
    await manual.launchedCount(1);
    const w = worker(r, sessionId, manual.launched[0].spec.env.SVC_WORKER_TOKEN);
    await w.next();
    await w.events('run-1', line({ type: 'result', message: 'done' }));
    await events;
    expect((await w.poll()).status).toBe(204);
    for (const headers of [{}, { [WORKER_PROTOCOL_HEADER]: '2' }] as Array<Record<string, string>>) {
      const res = await w.poll(headers);
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(/^X-Svc-Worker-Protocol: unsupported worker protocol/);
    }
  });

  it('refuses an upload for a stale, a wrong or a cancelled run id with 409', async () => {
    const { runner: r, sessionId, w, events } = await activeRun('run-1');
    const wrong = await w.events('run-other', line({ type: 'result', message: 'x' }));
    expect(wrong.status).toBe(409);
    expect((await wrong.json()).error).toMatch(/^stale or cancelled run: run-other/);
    expect((await w.events(undefined, line({ type: 'result' }))).status).toBe(409);
    await w.events('run-1', line({ type: 'result', message: 'ok' }));
    expect((await events).at(-1)).toMatchObject({ type: 'result' });
    // the run is over: its id is stale now
    const stale = await w.events('run-1', line({ type: 'result', message: 'again' }));
    expect(stale.status).toBe(409);

    // a cancelled run: the conductor hangs up, then the worker's upload is refused
    const ac = new AbortController();
    const res = await call(r, 'POST', '/runner/run', { tenant: TENANT, body: { subTask: { id: 'run-2', profile: 'sbx', sessionId, prompt: 'x' } }, signal: ac.signal });
    const reader = res.body!.getReader();
    const first = reader.read();
    expect(await w.next()).toMatchObject({ command: 'run', runId: 'run-2' });
    await reader.cancel();
    await first.catch(() => {});
    const cancelled = await w.events('run-2', line({ type: 'result', message: 'late' }));
    expect(cancelled.status).toBe(409);
  });

  it('stops an upload in progress with 409 when the run is cancelled', async () => {
    const { runner: r, sessionId, manual } = await setup();
    const res = await call(r, 'POST', '/runner/run', { tenant: TENANT, body: { subTask: { id: 'run-1', profile: 'sbx', sessionId, prompt: 'x' } } });
    const reader = res.body!.getReader();
    const first = reader.read();
    await manual.launchedCount(1);
    const w = worker(r, sessionId, manual.launched[0].spec.env.SVC_WORKER_TOKEN);
    await w.next();
    let push!: (text: string) => void;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (push = (t) => c.enqueue(new TextEncoder().encode(t))) });
    const upload = w.events('run-1', body);
    push(line({ type: 'assistant', message: 'working', delta: true }));
    expect(JSON.parse(new TextDecoder().decode((await first).value!))).toMatchObject({ type: 'assistant' });
    await reader.cancel();
    const answer = await upload;
    expect(answer.status).toBe(409);
    expect((await answer.json()).error).toBe('run run-1 was cancelled');
  });

  it('answers 413 to a line over 4 MiB and ends the run with an error', async () => {
    const { w, events } = await activeRun();
    const big = line({ type: 'assistant', message: 'x'.repeat(4 * 1024 * 1024) });
    const res = await w.events('run-1', big + line({ type: 'result', message: 'never' }));
    expect(res.status).toBe(413);
    expect((await res.json()).error).toBe(`event upload line over ${4 * 1024 * 1024} bytes`);
    const out = await events;
    expect(out.filter((e) => e.type === 'result' || e.type === 'error')).toEqual([expect.objectContaining({ type: 'error', message: expect.stringContaining('event upload line over 4194304 bytes (413)') })]);
  });

  it('answers 413 to an upload over its total and 408 to one open too long, each failing the run', async () => {
    const total = await activeRun('run-1', { limits: { totalBytes: 64 * 1024 } });
    const chunk = line({ type: 'progress', message: 'p'.repeat(8 * 1024) });
    const res = await total.w.events('run-1', chunk.repeat(9));
    expect(res.status).toBe(413);
    expect((await res.json()).error).toBe(`event upload over ${64 * 1024} bytes`);
    expect((await total.events).at(-1)).toMatchObject({ type: 'error', message: expect.stringContaining('(413)') });
    await runner!.close();

    const slow = await activeRun('run-2', { limits: { maxMs: 50 } });
    // an upload that stays open: one event, then nothing
    const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode(line({ type: 'progress', message: 'thinking' }))) });
    const timedOut = await slow.w.events('run-2', body);
    expect(timedOut.status).toBe(408);
    expect((await timedOut.json()).error).toMatch(/^event upload open longer than/);
    const out = await slow.events;
    expect(out.filter((e) => e.type === 'result' || e.type === 'error')).toEqual([expect.objectContaining({ type: 'error', message: expect.stringMatching(/\(408\)$/) })]);
  });

  it('fails the run when the worker polls again without uploading it (the run command was lost)', async () => {
    const { w, events } = await activeRun();
    const again = w.poll();
    expect((await events).at(-1)).toMatchObject({ type: 'error', message: 'the sandbox worker lost run run-1 (it polled again without uploading its events)' });
    expect((await w.events('run-1', line({ type: 'result' }))).status).toBe(409);
    void again;
  });

  it('cancels the run when the worker closes its upload before a result', async () => {
    const { w, events } = await activeRun();
    expect((await w.events('run-1', line({ type: 'assistant', message: 'half' }))).status).toBe(204);
    expect((await events).at(-1)).toMatchObject({ type: 'error', message: 'run cancelled: the worker closed its event upload before a result' });
  });

  it('keeps the latest state bundle for the conductor, and refuses one over the cap', async () => {
    const { runner: r, sessionId, w, events } = await activeRun();
    await w.events('run-1', line({ type: 'result', message: 'ok' }));
    await events;
    expect((await w.state('[{"role":"user","content":"hi"}]')).status).toBe(204);
    const got = await call(r, 'GET', `/runner/sessions/${sessionId}/state`, { tenant: TENANT });
    expect(got.status).toBe(200);
    expect(got.headers.get('x-runtime-session-id')).toBe(sessionId);
    expect(await got.text()).toBe('[{"role":"user","content":"hi"}]');
    const over = await w.state('x'.repeat(2048));
    expect(over.status).toBe(413);
  });
});

describe('a worker that never starts', () => {
  it('fails the run waiting for it and is stopped', async () => {
    const { runner: r, sessionId, manual } = await setup({ startTimeoutMs: 100 });
    const events = await startRun(r, sessionId, 'run-1');
    expect(events).toEqual([expect.objectContaining({ type: 'error', message: 'sandbox worker did not start within 100 ms' })]);
    expect(manual.launched[0].gone).toBe(true);
    expect(await (await call(r, 'GET', `/runner/sessions/${sessionId}/worker`, { tenant: TENANT })).json()).toMatchObject({ state: 'gone' });
  });
});

describe('leases over the protocol', () => {
  it('reads starting until the worker polls, running after, unknown while the substrate cannot tell, gone once invalidated', async () => {
    const { runner: r, sessionId, manual } = await setup();
    const lease = async () => (await call(r, 'GET', `/runner/sessions/${sessionId}/worker`, { tenant: TENANT })).json();
    expect((await call(r, 'GET', `/runner/sessions/${sessionId}/worker`, { tenant: TENANT })).status).toBe(404);
    const events = startRun(r, sessionId, 'run-1');
    await manual.launchedCount(1);
    expect(await lease()).toMatchObject({ sessionId, substrate: 'manual', workerId: 'manual-1', runtime: 'general', state: 'starting' });
    const w = worker(r, sessionId, manual.launched[0].spec.env.SVC_WORKER_TOKEN);
    await w.next();
    expect(await lease()).toMatchObject({ state: 'running' });
    manual.control.unreachable = true;
    expect(await lease()).toMatchObject({ state: 'unknown' });
    manual.control.unreachable = false;
    await w.events('run-1', line({ type: 'result', message: 'ok' }));
    await events;
    const res = await call(r, 'POST', '/runner/sandbox-events/invalidate', { body: { provider: 'manual', sandboxId: 'manual-1' } });
    expect(await res.json()).toEqual({ invalidated: 1 });
    expect(await lease()).toMatchObject({ state: 'gone' });
    // another tenant does not see it
    expect((await call(r, 'GET', `/runner/sessions/${sessionId}/worker`, { tenant: 'globex' })).status).toBe(404);
    expect(await (await call(r, 'GET', '/runner/worker/leases', { tenant: 'globex' })).json()).toEqual([]);
  });
});

describe('worker tokens', () => {
  it('answers 401 to a missing, malformed, foreign, expired, other-session or other-tenant token on every callback', async () => {
    const { runner: r, sessionId, events, w: good } = await activeRun();
    const other = await newSession(r, 'sbx', TENANT);
    const tokens = createWorkerTokens(SECRET);
    const past = createWorkerTokens(SECRET, () => Date.now() - 25 * 3_600_000);
    const bad: Record<string, string | undefined> = {
      missing: undefined,
      malformed: 'not-a-jwt',
      'signed by another key': await createWorkerTokens('another-secret-0123456789abcdefghijklmnop').mint('svc-worker', { tenant: TENANT, sessionId }),
      expired: await past.mint('svc-worker', { tenant: TENANT, sessionId }),
      'another session': await tokens.mint('svc-worker', { tenant: TENANT, sessionId: other }),
      'another tenant': await tokens.mint('svc-worker', { tenant: 'globex', sessionId }),
      'an MCP token': await tokens.mint('svc-mcp', { tenant: TENANT, sessionId }),
    };
    for (const [label, token] of Object.entries(bad)) {
      const w = worker(r, sessionId, token);
      for (const res of [await w.poll(), await w.events('run-1', line({ type: 'result' })), await w.state('[]')]) {
        expect({ label, status: res.status }).toEqual({ label, status: 401 });
        expect((await res.json()).error).toMatch(/^invalid or missing worker token/);
      }
    }
    // the real worker's run was untouched by all that
    await good.events('run-1', line({ type: 'result', message: 'still fine' }));
    expect((await events).at(-1)).toMatchObject({ type: 'result', message: 'still fine' });
  });

  it("requires the worker token on a sandbox session's MCP endpoint", async () => {
    const { runner: r, sessionId, cmd, w, events } = await activeRun();
    if (cmd.command !== 'run') throw new Error('not a run');
    const mcpPath = new URL(cmd.run.sessionMcpUrl).pathname + new URL(cmd.run.sessionMcpUrl).search;
    const list = (path: string) =>
      Promise.resolve(r.mcpApp.request(path, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) }));
    const ok = await list(mcpPath);
    expect(ok.status).toBe(200);
    expect((await ok.json()).result.tools.map((t: { name: string }) => t.name)).toContain('fs_read');
    // the sidecar kind of token (what runner.sessionMcpUrl mints) does not open a sandbox session
    const sidecarUrl = new URL(r.sessionMcpUrl(sessionId));
    const refused = await list(sidecarUrl.pathname + sidecarUrl.search);
    expect(refused.status).toBe(401);
    expect((await refused.json()).error).toMatch(/^invalid or missing worker token/);
    const callbackToken = await createWorkerTokens(SECRET).mint('svc-worker', { tenant: TENANT, sessionId });
    expect((await list(`/runner/sessions/${sessionId}/mcp?svc_worker_token=${callbackToken}`)).status).toBe(401);
    await w.events('run-1', line({ type: 'result' }));
    await events;
  });

  it('refuses a run, naming the signing configuration, when no key is configured', async () => {
    const { runner: r, sessionId, manual } = await setup({ secret: null });
    const events = await startRun(r, sessionId, 'run-1');
    expect(events).toEqual([expect.objectContaining({ type: 'error', message: expect.stringContaining('SVC_WORKER_TOKEN_SECRET is not set') })]);
    expect(manual.launched).toHaveLength(0);
    await r.close();
    const short = await setup({ secret: 'short' });
    expect(await startRun(short.runner, short.sessionId, 'run-1')).toEqual([expect.objectContaining({ type: 'error', message: expect.stringContaining('SVC_WORKER_TOKEN_SECRET is too short') })]);
  });

  it('gives a sandbox run\'s MCP token the seed\'s lifetime', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const min = 60_000;
    expect(mcpTokenTtlMs(undefined, now)).toBe(120 * min);
    expect(mcpTokenTtlMs(now + 30 * min, now)).toBe(35 * min);
    expect(mcpTokenTtlMs(now - 60 * min, now)).toBe(5 * min);
    expect(mcpTokenTtlMs(now + 48 * 60 * min, now)).toBe(24 * 60 * min);
  });
});
