import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../support/listen.ts';
import { createTestDatabase } from '../support/pg.ts';
import { startSvcProcess, type SvcProcess } from '../support/process.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/**
 * `/readyz` names what an instance waits on: a conductor needs its database and a reachable runner, a runner a worker
 * that answers (when one is configured), and its job queue, which comes up once the server serves. `/healthz` stays 200
 * throughout: the process is alive, just not ready.
 */
const TOKEN = 'readyz-internal-token-0123';
const WAIT = { timeout: 30_000, interval: 50 };
const QUEUE_UP = { name: 'job queue', ok: true, ms: 0 };

interface Readyz {
  status: string;
  error?: string;
  checks: Array<{ name: string; ok: boolean; error?: string }>;
}

async function readyz(url: string): Promise<{ status: number; body: Readyz }> {
  const res = await fetch(url + '/readyz');
  return { status: res.status, body: (await res.json()) as Readyz };
}

/** /readyz of a conductor once its job queue is up (it says `job queue: starting` until then). */
const queueUp = (url: string) =>
  vi.waitFor(async () => {
    const res = await readyz(url);
    expect(res.body.checks).toContainEqual(QUEUE_UP);
    return res;
  }, WAIT);

describe('/readyz on split processes', () => {
  const procs: SvcProcess[] = [];
  const dirs: string[] = [];
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'svc-readyz-'));
    dirs.push(d);
    return d;
  };
  const start = async (role: string, env: Record<string, string>, port?: number) => {
    const p = await startSvcProcess([`--role=${role}`, ...(port ? [`--port=${port}`] : [])], { SVC_INTERNAL_TOKEN: TOKEN, SVC_DATA_DIR: dir(), SVC_SANDBOX: 'off', ...env });
    procs.push(p);
    return p;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    await db?.drop().catch(() => {});
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('answers 503 naming the runner while a conductor\'s only runner is down, and 200 once it is up', async () => {
    const port = await freePort();
    const runnerUrl = `http://127.0.0.1:${port}`;
    const conductor = await start('conductor', { DATABASE_URL: db.url, SVC_RUNNERS: runnerUrl, SVC_BOOTSTRAP_TOKEN: 'ao_test_readyzreadyzreadyz0001' });

    const down = await queueUp(conductor.url);
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('not ready');
    expect(down.body.error).toMatch(new RegExp(`^runner fleet unreachable: runner ${runnerUrl} \\(.+\\)$`));
    expect(down.body.checks).toEqual([
      { name: 'database', ok: true, ms: expect.any(Number) },
      { name: `runner ${runnerUrl}`, ok: false, ms: expect.any(Number), error: expect.any(String) },
      QUEUE_UP,
    ]);
    expect((await fetch(conductor.url + '/healthz')).status).toBe(200); // alive all along

    const runner = await start('runner', { SVC_RUNNER_PUBLIC_URL: runnerUrl }, port);
    const up = await readyz(conductor.url);
    expect(up).toEqual({ status: 200, body: { status: 'ready', checks: [expect.objectContaining({ name: 'database', ok: true }), expect.objectContaining({ name: `runner ${runnerUrl}`, ok: true }), QUEUE_UP] } });

    // a runner with no worker configured has nothing to wait on but its sandbox limits (best-effort in dev: ready)
    expect(await readyz(runner.url)).toEqual({ status: 200, body: { status: 'ready', checks: [expect.objectContaining({ name: 'sandbox limits', ok: true, detail: expect.any(String) })] } });
  });

  it('answers 503 naming the worker on a runner whose worker does not answer', async () => {
    const deadWorker = `http://127.0.0.1:${await freePort()}`;
    const runner = await start('runner', { SVC_WORKER_URL: deadWorker });
    const res = await readyz(runner.url);
    expect(res.status).toBe(503);
    expect(res.body.error).toMatch(new RegExp(`^workers unreachable: worker ${deadWorker} \\(.+\\)$`));
    expect((await fetch(runner.url + '/healthz')).status).toBe(200);
  });
});

describe('/readyz in role all', () => {
  let svc: TestSvc;
  beforeAll(async () => {
    svc = await startTestSvc({ DATABASE_URL: 'memory' }, 'all');
  });
  afterAll(async () => svc?.stop());

  it('checks the database, the in-process runner and its worker, and turns 503 as soon as the server drains', async () => {
    const res = await queueUp(svc.url);
    expect(res.status).toBe(200);
    expect(res.body.checks.map((c) => [c.name, c.ok])).toEqual([
      ['worker http://worker.in-process', true],
      ['sandbox limits', true],
      ['database', true],
      ['runner http://runner.in-process', true],
      ['job queue', true],
    ]);
    await svc.server.built.drain();
    expect(await readyz(svc.url)).toEqual({ status: 503, body: { status: 'not ready', error: 'stopping: the server is draining', checks: [] } });
  });
});
