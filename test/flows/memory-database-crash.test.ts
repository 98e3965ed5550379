import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSvc, type SvcInstance } from '../../src/index.ts';
import { modelRequests, startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { processTree, waitForNoProcesses } from '../support/proc-table.ts';
import { startSvcProcess, waitForOutput, type SvcProcess } from '../support/process.ts';
import { followSse, isTerminalEvent, type LiveSse } from '../support/sse.ts';

/**
 * `DATABASE_URL=memory` runs PostgreSQL without flushing anything (fsync and synchronous commit off), so a postmaster
 * that dies may take commits with it that clients were already answered about. Such a server does not carry on as if
 * nothing happened: every run in flight and every stream reading one ends with exactly one error naming the cause (so
 * does a `/v1` session's event stream, its turn held at the model: the `openai` SDK throws it), no request answers
 * 500, and the instance stops: `svc serve` exits 1 with one line saying why, and an instance started
 * in-process with `startSvc()` stops and reports it (`failed`), leaving the process that embeds it alone.
 */
const KEY = 'ao_test_memorycrashmemorycrashmem01';
const CAUSE = /throwaway database \(DATABASE_URL=memory\) stopped unexpectedly/;
// Real processes, PostgreSQL's start and a kill on a loaded machine: well above the suite's default limit.
const SLOW = 120_000;

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  fake.release('memory'); // `HOLD memory-crash …` holds at `memory`
  await fake?.close();
});

const env = () => ({
  DATABASE_URL: 'memory',
  SVC_BOOTSTRAP_TOKEN: KEY,
  OPENAI_COMPATIBLE_BASE_URL: fake.url,
  OPENAI_COMPATIBLE_API_KEY: 'x',
  // /v1 agents on the platform model `svc/fake/fake-model`
  SVC_AGGREGATOR_FAKE_URL: fake.url,
  SVC_AGGREGATOR_FAKE_KEY: 'x',
});
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

/**
 * Three runs held at the model (in flight, each streamed by a client), a `/v1` session whose turn is held there too
 * (its event stream read on the wire and by the SDK), and a client that keeps starting and reading runs and reading the
 * session until the server stops answering: what it was answered is what a user saw across the crash.
 */
async function inFlight(url: string) {
  const post = (path: string, body: unknown) => fetch(url + path, { method: 'POST', headers: auth, body: JSON.stringify(body) });
  expect((await post('/api/profiles', { name: 'held', runtime: 'general', model: 'openai-compatible:fake-model' })).status).toBe(201);
  const before = modelRequests(fake).length;
  const streams: LiveSse[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await post('/api/runs', { profile: 'held', prompt: `HOLD memory-crash ${i}` });
    expect(res.status).toBe(202);
    const { runId } = (await res.json()) as { runId: string };
    streams.push(followSse((signal) => fetch(`${url}/api/runs/${runId}/stream`, { headers: auth, signal })));
  }
  const session = await heldSession(url);
  await fake.when(() => modelRequests(fake).length >= before + 4);
  await expect.poll(() => session.wire.frames.map((f) => f.event.type)).toContain('agent.session.turn.in_progress');

  const statuses: number[] = [];
  let stop = false;
  const client = (async () => {
    for (let i = 0; !stop; i++) {
      try {
        const res =
          i % 3 === 0
            ? await post('/api/runs', { profile: 'held', prompt: `HOLD memory-crash load ${i}` })
            : await fetch(url + (i % 3 === 1 ? '/api/runs' : `/v1/agents/sessions/${session.id}`), { headers: auth });
        statuses.push(res.status);
        await res.body?.cancel();
      } catch {
        return; // the server is gone: nothing answers any more
      }
    }
  })();
  await expect.poll(() => statuses.length).toBeGreaterThan(4);
  return {
    streams,
    session,
    statuses,
    /** Waits for the load client to see the server gone (or stops it, for a server that never goes). */
    clientDone: async () => {
      stop = true;
      await client;
    },
  };
}

interface SessionEventLike {
  type: string;
  error?: { message: string; type: string };
}

/** A /v1 session whose turn waits at the model, its event stream opened (headers in: subscribed) before the input. */
async function heldSession(url: string) {
  const sdk = new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY, maxRetries: 0 });
  const agent = await sdk.beta.agents.create({ model: 'svc/fake/fake-model' });
  const session = await sdk.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
  const opened = fetch(`${url}/v1/agents/sessions/${session.id}/events`, { headers: { ...auth, accept: 'text/event-stream', 'openai-beta': 'agents=v1' } });
  await opened;
  const wire = followSse<SessionEventLike>(() => opened);
  const seen: string[] = [];
  const stream = await sdk.beta.agents.sessions.events.stream(session.id);
  const thrown = (async () => {
    for await (const e of stream) seen.push(e.type);
  })().then(
    () => undefined,
    (err: unknown) => err,
  );
  await sdk.beta.agents.sessions.events.create(session.id, {
    events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'HOLD memory-crash v1' }] }] }],
  });
  return { id: session.id, wire, seen, thrown };
}

/**
 * The session's stream ended with one `error` frame naming the lost database, after the held turn's start and with no
 * end of the turn or the session (none can be recorded); the SDK throws it.
 */
async function expectSessionStreamEndedWithTheCause(session: Awaited<ReturnType<typeof heldSession>>): Promise<void> {
  const frames = await session.wire.ended;
  expect(frames.map((f) => f.event.type)).toContain('agent.session.turn.in_progress');
  const ends = frames.filter((f) => f.event.type === 'error' || /^agent\.session\.(turn\.(completed|failed|cancelled)|idle|failed)$/.test(f.event.type));
  expect(ends.map((f) => f.event.type)).toEqual(['error']);
  expect(ends[0].event.error).toEqual({ code: 'server_error', message: expect.stringMatching(CAUSE), param: null, type: 'server_error' });
  expect(frames.at(-1)).toBe(ends[0]);
  const thrown = await session.thrown;
  expect(thrown).toBeInstanceOf(OpenAI.APIError);
  expect((thrown as Error).message).toMatch(CAUSE);
  expect(session.seen).toContain('agent.session.turn.in_progress');
}

/** Each stream ended (the server closed it) with exactly one terminal event, an error naming the lost database. */
async function expectEachStreamEndedWithTheCause(streams: LiveSse[]): Promise<void> {
  for (const s of streams) {
    const frames = await s.ended;
    const terminals = frames.filter((f) => isTerminalEvent(f.event));
    expect(terminals.map((f) => f.event.type)).toEqual(['error']);
    expect(terminals[0].event.message).toMatch(CAUSE);
    expect(frames.at(-1)).toBe(terminals[0]);
  }
}

describe('a memory-mode server whose PostgreSQL dies', { timeout: SLOW }, () => {
  let svc: SvcProcess | undefined;
  let instance: SvcInstance | undefined;
  afterEach(async () => {
    await svc?.stop('SIGKILL');
    await instance?.stop();
    svc = instance = undefined;
  });

  it('`svc serve` ends every run and stream with one error, answers no 500, and exits 1 with one line naming the cause', async () => {
    svc = await startSvcProcess([], env());
    const p = svc;
    onTestFailed(() => console.error(p.output()));
    const watchdog = processTree(p.child.pid!).find((x) => x.command.includes('svc-pg-watchdog'));
    const root = /-D (\S+)\/data/.exec(watchdog?.command ?? '')?.[1];
    expect(root).toMatch(/svc-pg-mem-/);
    const load = await inFlight(p.url);

    process.kill(Number(readFileSync(join(root!, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGKILL');
    await waitForOutput(p, CAUSE, SLOW - 30_000);
    expect(await p.exited).toBe(1);
    await load.clientDone();

    await expectEachStreamEndedWithTheCause(load.streams);
    await expectSessionStreamEndedWithTheCause(load.session);
    expect(load.statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    const lines = p.output().split('\n');
    expect(lines.filter((l) => CAUSE.test(l) && !/run interrupted/.test(l))).toHaveLength(1);
    expect(p.output()).not.toMatch(/TypeError|unhandled|internal error|restarted/);
    // nothing of the throwaway cluster is left: no PostgreSQL process, no folder
    expect(await waitForNoProcesses(root!)).toEqual([]);
    expect(existsSync(root!)).toBe(false);
  });

  it('an instance started in-process with startSvc() stops and reports the cause, and the process that embeds it lives on', async () => {
    instance = await startSvc({ env: env(), flags: { role: 'all' } });
    const embedded = instance.server.built.database!.embedded!;
    const root = join(embedded.dir, '..');
    const load = await inFlight(instance.url);

    process.kill(embedded.pid()!, 'SIGKILL');
    const failure = await instance.failed;
    expect(String(failure)).toMatch(CAUSE);
    await load.clientDone();

    await expectEachStreamEndedWithTheCause(load.streams);
    await expectSessionStreamEndedWithTheCause(load.session);
    expect(load.statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    // stopped on its own (stop() joins that stop): its port answers nothing and its cluster is gone
    await instance.stop();
    await expect(fetch(instance.url + '/healthz')).rejects.toThrow();
    expect(await waitForNoProcesses(root)).toEqual([]);
    expect(existsSync(root)).toBe(false);
  });
});
