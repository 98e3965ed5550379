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
 * nothing happened: every run in flight and every stream reading one ends with exactly one error naming the cause, no
 * request answers 500, and the instance stops: `svc serve` exits 1 with one line saying why, and an instance started
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
  fake.release('memory-crash');
  await fake?.close();
});

const env = () => ({ DATABASE_URL: 'memory', SVC_BOOTSTRAP_TOKEN: KEY, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' });
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

/**
 * Three runs held at the model (in flight, each streamed by a client), and a client that keeps starting and reading
 * runs until the server stops answering: what it was answered is what a user saw across the crash.
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
  await fake.when(() => modelRequests(fake).length >= before + 3);

  const statuses: number[] = [];
  let stop = false;
  const client = (async () => {
    for (let i = 0; !stop; i++) {
      try {
        const res = i % 2 === 0 ? await post('/api/runs', { profile: 'held', prompt: `HOLD memory-crash load ${i}` }) : await fetch(`${url}/api/runs`, { headers: auth });
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
    statuses,
    /** Waits for the load client to see the server gone (or stops it, for a server that never goes). */
    clientDone: async () => {
      stop = true;
      await client;
    },
  };
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
    expect(load.statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    // stopped on its own (stop() joins that stop): its port answers nothing and its cluster is gone
    await instance.stop();
    await expect(fetch(instance.url + '/healthz')).rejects.toThrow();
    expect(await waitForNoProcesses(root)).toEqual([]);
    expect(existsSync(root)).toBe(false);
  });
});
