import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { jsonb, migrate, openDatabase, withOperator, withSystem, type Database } from '../../../db/index.ts';
import { createLogger } from '../../../shared/log.ts';
import { backends } from '../../../../test/support/backends.ts';
import type { Hub } from './hub.ts';
import { createJobs, type Jobs } from '../jobs/index.ts';
import { createRunHooks, type RunFinished, type RunHooks } from '../hooks/index.ts';
import { createFleet } from '../runners/fleet.ts';
import { createOwnership, type Adopted } from './ownership.ts';

/**
 * The orphan sweep across replicas: a run is taken over (ended `interrupted`) only when its owner's lease expired and
 * the sweeper is someone else; a live conductor whose own heartbeat ran late never ends the runs it drives. Each run
 * it ends is announced once to the runFinished subscribers. An orphan whose runner the sweeper knows is adopted instead:
 * taken over in the database and handed on to be driven from its last stored event.
 */
describe.each(backends)('run ownership sweep on $name', (backend) => {
  let database: Database;
  let cleanup: () => Promise<void>;
  const hub = { announce: async () => {} } as unknown as Hub;
  const log = createLogger('test');
  let jobs: Jobs;
  let hooks: RunHooks;
  const finished: RunFinished[] = [];
  const RUNNER = 'http://127.0.0.1:9';
  const fleet = createFleet({ urls: [RUNNER], log });
  const adopted: Adopted[] = [];
  const ownership = (ownerId: string) => createOwnership({ db: database.db, hub, jobs, hooks, ownerId, ttlMs: 1500, log, fleet, adopt: (run) => void adopted.push(run) });

  beforeAll(async () => {
    const db = await backend.setup();
    cleanup = db.cleanup;
    database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    await migrate(database);
    jobs = createJobs({ database, log, pollingIntervalSeconds: 0.5 });
    hooks = createRunHooks({ jobs, log });
    await hooks.onRunFinished('test', (e) => void finished.push(e));
    await jobs.start();
    await withOperator(database.db, (tx) => tx.insertInto('tenants').values({ id: 'default', name: 'Default' }).execute());
    await withSystem(database.db, async (tx) => {
      // `late` drives a run but its lease lapsed (a stalled heartbeat); `alive` holds a fresh lease
      await tx.insertInto('conductor_leases').values({ owner_id: 'late', heartbeat_at: sql`now() - interval '1 minute'`, expires_at: sql`now() - interval '30 seconds'` }).execute();
      await tx.insertInto('conductor_leases').values({ owner_id: 'alive', heartbeat_at: sql`now()`, expires_at: sql`now() + interval '1 hour'` }).execute();
      for (const [id, owner] of [['run_of_late', 'late'], ['run_of_alive', 'alive']]) {
        await tx.insertInto('runs').values({ id, tenant_id: 'default', session_id: `sess-${id}`, profile: 'p', sub_task: jsonb({}), status: 'running', owner_id: owner }).execute();
      }
    });
  });
  afterAll(async () => {
    await jobs?.stop();
    await database?.close();
    await cleanup?.();
  });

  const subscriberJobs = async () =>
    (await sql<{ state: string }>`select state::text as state from pgboss.job where name = 'hooks.run-finished.test' order by created_on`.execute(database.db)).rows.map((r) => r.state);
  const statusOf = (id: string) => withSystem(database.db, async (tx) => (await tx.selectFrom('runs').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status);

  it('never ends the sweeper’s own runs while it runs, even with its own lease expired', async () => {
    expect(await ownership('late').sweep(false)).toEqual([]);
    expect(await statusOf('run_of_late')).toBe('running');
  });

  it('ends another replica’s runs once its lease expired, with one terminal event, and leaves live owners alone', async () => {
    expect(await ownership('alive').sweep(false)).toEqual(['run_of_late']);
    expect(await statusOf('run_of_late')).toBe('interrupted');
    expect(await statusOf('run_of_alive')).toBe('running');
    const events = await withSystem(database.db, (tx) => tx.selectFrom('run_events').select(['seq', 'event']).where('run_id', '=', 'run_of_late').execute());
    expect(events).toEqual([{ seq: 1, event: expect.objectContaining({ type: 'error', message: expect.stringContaining('interrupted') }) }]);
    await vi.waitFor(() => expect(finished.map((e) => e.runId)).toContain('run_of_late'), { timeout: 10_000, interval: 50 });
    expect(finished.find((e) => e.runId === 'run_of_late')).toMatchObject({ tenantId: 'default', status: 'interrupted', sessionId: 'sess-run_of_late', usage: { input: 0, output: 0 } });
    // a second sweep finds nothing to end and announces nothing
    expect(await ownership('alive').sweep(false)).toEqual([]);
    await vi.waitFor(async () => expect(await subscriberJobs()).toEqual(['completed']), { timeout: 10_000, interval: 50 });
    expect(finished.filter((e) => e.runId === 'run_of_late')).toHaveLength(1);
  });

  it('adopts an orphan whose runner it knows: the run is its own now, still running, and driven on after its last stored event', async () => {
    await withSystem(database.db, async (tx) => {
      await tx.insertInto('sessions').values({ id: 'sess-run_on_runner', tenant_id: 'default', profile: 'p', runtime: 'general', status: 'running', runner_url: RUNNER, profile_snapshot: jsonb({}) }).execute();
      await tx.insertInto('runs').values({ id: 'run_on_runner', tenant_id: 'default', session_id: 'sess-run_on_runner', profile: 'p', sub_task: jsonb({}), status: 'running', owner_id: 'late' }).execute();
      await tx.insertInto('run_events').values([1, 2, 3].map((seq) => ({ run_id: 'run_on_runner', seq, tenant_id: 'default', event: jsonb({ type: 'text', text: `e${seq}` }) }))).execute();
    });
    expect(await ownership('alive').sweep(false)).toEqual([]);
    expect(adopted).toEqual([{ tenantId: 'default', runId: 'run_on_runner', sessionId: 'sess-run_on_runner', runner: fleet.byUrl(RUNNER), stored: 3, offset: 0 }]);
    const row = await withSystem(database.db, (tx) => tx.selectFrom('runs').select(['status', 'owner_id']).where('id', '=', 'run_on_runner').executeTakeFirstOrThrow());
    expect(row).toEqual({ status: 'running', owner_id: 'alive' });
    // taken once: a second sweep (or another replica's) finds no orphan there
    expect(await ownership('other').sweep(false)).toEqual([]);
    expect(adopted).toHaveLength(1);
    await withSystem(database.db, (tx) => tx.updateTable('runs').set({ status: 'ok' }).where('id', '=', 'run_on_runner').execute());
  });

  it('at boot ends the runs recorded under its own id, whatever its lease says', async () => {
    expect(await ownership('alive').sweep(true)).toEqual(['run_of_alive']);
    expect(await statusOf('run_of_alive')).toBe('interrupted');
  });
});
