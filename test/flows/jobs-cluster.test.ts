import { sql } from 'kysely';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { jsonb, openDatabase, withSystem, type Database } from '../../src/db/index.ts';
import { startCluster, type Cluster, type ClusterNode } from '../support/cluster.ts';

/**
 * Background work on the job queue across real conductor processes on one PostgreSQL database. The orphaned-run
 * sweep is a queued job, one per slot of a third of the lease: both conductors offer every slot's job, and each job
 * runs on exactly one of them. A run whose conductor is gone is interrupted once, by one job, with one terminal
 * event; after one conductor is SIGKILLed the other goes on running every job, once.
 */
const SWEEP = 'runs.orphan-sweep';
const WAIT = { timeout: 15_000, interval: 100 };

describe('the job queue with two conductor processes', () => {
  let cluster: Cluster;
  let A: ClusterNode;
  let B: ClusterNode;
  let database: Database;

  beforeAll(async () => {
    cluster = await startCluster({ conductors: 2, runners: 1, leaseTtlMs: 1500 });
    [A, B] = cluster.conductors;
    database = await openDatabase({ url: cluster.databaseUrl, dataDir: tmpdir() });
  }, 60_000);
  afterAll(async () => {
    await database?.close();
    await cluster?.stop();
  });

  /** How many sweep jobs a conductor has run, from its own /metrics. */
  async function sweepsRunBy(conductor: ClusterNode): Promise<number> {
    const text = await (await fetch(`${conductor.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('svc_jobs_total{') && l.includes(`queue="${SWEEP}"`) && l.includes('outcome="completed"'));
    return line ? Number(line.split(' ').at(-1)) : 0;
  }
  const sweepJobs = async () =>
    (
      await sql<{ state: string; output: { sweptBy?: string; interrupted?: string[] } | null }>`
        select state::text as state, output from pgboss.job where name = ${SWEEP}`.execute(database.db)
    ).rows;

  /** A run left `running` by a conductor whose lease ran out (it crashed long ago). */
  async function orphan(runId: string): Promise<void> {
    await withSystem(database.db, async (tx) => {
      await tx.insertInto('conductor_leases').values({ owner_id: `gone-${runId}`, heartbeat_at: sql`now() - interval '1 minute'`, expires_at: sql`now() - interval '30 seconds'` }).execute();
      await tx.insertInto('runs').values({ id: runId, tenant_id: 'default', session_id: `sess-${runId}`, profile: 'p', sub_task: jsonb({}), status: 'running', owner_id: `gone-${runId}` }).execute();
    });
  }
  async function runOn(conductor: ClusterNode, runId: string) {
    const res = await cluster.api(conductor, `/api/runs/${runId}`);
    expect(res.status).toBe(200);
    return (await res.json()) as { status: string; events: Array<{ type: string; message?: string }> };
  }
  /** The one sweep job that interrupted `runId`, and the conductor that ran it. */
  async function sweptOnceBy(runId: string): Promise<string | undefined> {
    const jobs = (await sweepJobs()).filter((j) => j.output?.interrupted?.includes(runId));
    expect(jobs).toHaveLength(1);
    return jobs[0].output?.sweptBy;
  }

  it('runs each sweep job on exactly one of two live conductors, and again once after one is killed', async () => {
    onTestFailed(() => console.error(cluster.logs()));

    // Both up: the orphan is interrupted by one job, and its stream has one terminal event.
    await orphan('run_orphan_1');
    await vi.waitFor(async () => expect((await runOn(A, 'run_orphan_1')).status).toBe('interrupted'), WAIT);
    const first = await runOn(B, 'run_orphan_1');
    expect(first.events).toEqual([expect.objectContaining({ type: 'error', message: expect.stringContaining('interrupted') })]);
    expect([A.name, B.name]).toContain(await sweptOnceBy('run_orphan_1'));

    // Every slot had one job however many conductors offered it, and no job ran on both: the executions both count in
    // their metrics lie between the jobs completed before and the jobs taken (completed or running) after.
    await vi.waitFor(async () => expect((await sweepJobs()).filter((j) => j.state === 'completed').length).toBeGreaterThanOrEqual(6), WAIT);
    const completedBefore = (await sweepJobs()).filter((j) => j.state === 'completed').length;
    const executions = (await sweepsRunBy(A)) + (await sweepsRunBy(B));
    const takenAfter = (await sweepJobs()).filter((j) => j.state === 'completed' || j.state === 'active').length;
    expect(executions).toBeGreaterThanOrEqual(completedBefore);
    expect(executions).toBeLessThanOrEqual(takenAfter);

    // A crashes. B alone runs the jobs from now on, each once; the next orphan is interrupted by one job, on B.
    await A.kill('SIGKILL');
    const byBBefore = await sweepsRunBy(B);
    const completedAtKill = (await sweepJobs()).filter((j) => j.state === 'completed').length;
    await orphan('run_orphan_2');
    await vi.waitFor(async () => expect((await runOn(B, 'run_orphan_2')).status).toBe('interrupted'), WAIT);
    expect((await runOn(B, 'run_orphan_2')).events).toEqual([expect.objectContaining({ type: 'error', message: expect.stringContaining('interrupted') })]);
    expect(await sweptOnceBy('run_orphan_2')).toBe(B.name);
    const completedNow = (await sweepJobs()).filter((j) => j.state === 'completed').length;
    const byBNow = await sweepsRunBy(B);
    const takenNow = (await sweepJobs()).filter((j) => j.state === 'completed' || j.state === 'active').length;
    // (the bounds allow the one job B may have had in hand between reading its metrics and counting the jobs)
    expect(byBNow - byBBefore).toBeGreaterThanOrEqual(completedNow - completedAtKill - 1);
    expect(byBNow - byBBefore).toBeLessThanOrEqual(takenNow - completedAtKill + 1);
  }, 90_000);
});
