import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { call, makeRunner, ndjsonLines, newSession, putProfile, refusedUrl } from '../runner.fixture.ts';
import type { Runner } from '../runner.ts';

let runner: Runner;
let hole: BlackHole | undefined;
afterEach(async () => {
  await runner?.close();
  await hole?.close();
  hole = undefined;
});

/** A TCP server that accepts connections and never answers: a worker that hangs. Not a worker stand-in. */
interface BlackHole {
  url: string;
  connected: Promise<Socket>;
  closed: Promise<void>;
  close(): Promise<void>;
}
async function blackHole(): Promise<BlackHole> {
  const sockets: Socket[] = [];
  let onConnect!: (s: Socket) => void;
  let onClosed!: () => void;
  const connected = new Promise<Socket>((r) => (onConnect = r));
  const closed = new Promise<void>((r) => (onClosed = r));
  const server: Server = createServer((s) => {
    sockets.push(s);
    s.on('close', onClosed);
    onConnect(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    connected,
    closed,
    close: () => new Promise<void>((r) => {
      sockets.forEach((s) => s.destroy());
      server.close(() => r());
    }),
  };
}

const run = (subTask: Record<string, unknown>, o: { tenant?: string; signal?: AbortSignal } = {}) => call(runner, 'POST', '/runner/run', { body: { subTask }, ...o });
const session = async (id: string) => (await (await call(runner, 'GET', `/runner/sessions/${id}`)).json()).session;

describe('POST /runner/run refusals', () => {
  it('refuses a subTask without a profile with 400 naming the field', async () => {
    runner = makeRunner();
    const res = await run({ prompt: 'hi' });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^subTask\.profile: /);
  });

  it('refuses a malformed session id with 400 naming the field', async () => {
    runner = makeRunner();
    const res = await run({ profile: 'p', sessionId: 'has space' });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^subTask\.sessionId: /);
  });

  it('refuses an unknown profile with 404', async () => {
    runner = makeRunner();
    const res = await run({ profile: 'ghost', prompt: 'hi' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'unknown profile: ghost' });
  });

  it('refuses an unknown session with 404 and creates none', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'p' });
    const res = await run({ profile: 'p', sessionId: 'sess-nope', prompt: 'hi' });
    expect(res.status).toBe(404);
    expect((await (await call(runner, 'GET', '/runner/sessions')).json()).sessions).toEqual([]);
  });
});

describe('POST /runner/run without a working worker', () => {
  it('streams exactly one terminal error when no worker serves the runtime, and marks the session errored', async () => {
    runner = makeRunner();
    await putProfile(runner, { name: 'p' });
    const res = await run({ profile: 'p', prompt: 'hello there' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const events = await ndjsonLines(res);
    expect(events).toEqual([expect.objectContaining({ type: 'error', message: 'no worker configured for runtime general' })]);
    const list = (await (await call(runner, 'GET', '/runner/sessions')).json()).sessions;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ status: 2, runCount: 1, lastRunStatus: 'error', lastPrompt: 'hello there' });
  });

  it('turns a refused connection into a terminal error and marks the sidecar unreachable', async () => {
    const url = await refusedUrl();
    runner = makeRunner({ config: { workerUrl: url } });
    await putProfile(runner, { name: 'p' });
    const events = await ndjsonLines(await run({ profile: 'p', prompt: 'hi' }));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'error' });
    expect(events[0].message).toMatch(/^worker unavailable: worker run: .*ECONNREFUSED/);
    const topology = await (await call(runner, 'GET', '/runner/topology')).json();
    expect(topology.sidecars.find((s: { runtime: string }) => s.runtime === 'general')).toMatchObject({ state: 'unreachable', endpoint: url });
    const metrics = await (await call(runner, 'GET', '/metrics')).text();
    expect(metrics).toContain('svc_runner_runs_started_total 1');
    expect(metrics).toContain('svc_runner_runs_finished_total{status="error"} 1');
    expect(metrics).toContain('svc_runner_events_forwarded_total 1');
  });
});

describe('POST /runner/run on a hanging worker', () => {
  it('refuses a second run on a busy session with 409, and a cancelled run frees the session', async () => {
    hole = await blackHole();
    runner = makeRunner({ config: { workerUrl: hole.url } });
    await putProfile(runner, { name: 'p' });
    const id = await newSession(runner, 'p');
    const first = await run({ profile: 'p', sessionId: id, prompt: 'one' });
    const reader = first.body!.getReader();
    void reader.read();
    await hole.connected;
    expect((await session(id)).status).toBe('running');

    const second = await run({ profile: 'p', sessionId: id, prompt: 'two' });
    expect(second.status).toBe(409);
    expect(await second.json()).toEqual({ error: 'session busy' });

    await reader.cancel();
    await hole.closed;
    expect(await session(id)).toMatchObject({ status: 'idle', lastRunStatus: 'cancelled', runCount: 1, lastPrompt: 'one' });
  });

  it('ends the stream with a cancellation error when the session is deleted mid-run', async () => {
    hole = await blackHole();
    runner = makeRunner({ config: { workerUrl: hole.url } });
    await putProfile(runner, { name: 'p' });
    const id = await newSession(runner, 'p');
    const res = await run({ profile: 'p', sessionId: id, prompt: 'x' });
    const events = ndjsonLines(res);
    await hole.connected;
    expect((await call(runner, 'DELETE', `/runner/sessions/${id}`)).status).toBe(204);
    expect(await events).toEqual([expect.objectContaining({ type: 'error', message: 'run cancelled: session shut down' })]);
    expect(await session(id)).toMatchObject({ status: 'shutdown', lastRunStatus: 'cancelled' });
    await hole.closed;
  });

  it('ends every run in flight with a terminal error when the runner closes', async () => {
    hole = await blackHole();
    runner = makeRunner({ config: { workerUrl: hole.url } });
    await putProfile(runner, { name: 'p' });
    const events = ndjsonLines(await run({ profile: 'p', prompt: 'x' }));
    await hole.connected;
    await runner.close();
    expect(await events).toEqual([expect.objectContaining({ type: 'error', message: 'run cancelled: runner shutting down' })]);
  });
});
