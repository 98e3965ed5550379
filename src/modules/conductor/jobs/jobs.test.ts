import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeValue, openDatabase, withSystem, type Database } from '../../../db/index.ts';
import { createLogger } from '../../../shared/log.ts';
import { backends } from '../../../../test/support/backends.ts';
import { connect, createTestDatabase } from '../../../../test/support/pg.ts';
import { createJobs, JOBS_SCHEMA, type Jobs } from './index.ts';
import { SUBSCRIBED_MS } from './jobs.ts';

/**
 * The job queue on our one driver and our unprivileged app role, on the embedded cluster and on a server: it installs
 * its own schema, two instances on one database each take a job exactly once, failures retry, throttled singletons
 * collapse, a job sent inside a transaction exists only if it commits, and stop waits for a running handler.
 */
const WAIT = { timeout: 15_000, interval: 50 };

describe.each(backends)('job queue on $name', (backend) => {
  let database: Database;
  let cleanup: () => Promise<void>;
  const instances: Jobs[] = [];
  const log = createLogger('test');
  const jobs = () => {
    const j = createJobs({ database, log, pollingIntervalSeconds: 0.5 });
    instances.push(j);
    return j;
  };

  beforeAll(async () => {
    const db = await backend.setup();
    cleanup = db.cleanup;
    database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
  }, 60_000);
  afterAll(async () => {
    for (const j of instances) await j.stop().catch(() => {});
    await database?.close();
    await cleanup?.();
  });

  const jobStates = async (queue: string) =>
    (await sql<{ state: string; output: unknown }>`select state::text as state, output from pgboss.job where name = ${queue} order by created_on`.execute(database.db)).rows;

  it('installs its schema as the unprivileged app role, with two instances starting at once', async () => {
    const [a, b] = [jobs(), jobs()];
    await Promise.all([a.start(), b.start()]);
    const owner = await sql<{ owner: string; me: string; superuser: boolean }>`
      select n.nspowner::regrole::text as owner, current_user as me, r.rolsuper as superuser
      from pg_namespace n, pg_roles r where n.nspname = ${JOBS_SCHEMA} and r.rolname = current_user`.execute(database.db);
    expect(owner.rows).toEqual([{ owner: owner.rows[0].me, me: owner.rows[0].me, superuser: false }]);
  });

  it('runs each job exactly once across two instances', async () => {
    const [a, b] = instances;
    const ran: Array<{ by: string; n: number }> = [];
    await a.define<{ n: number }>('test.once', ({ n }) => void ran.push({ by: 'a', n }), { pollingIntervalSeconds: 0.5 });
    await b.define<{ n: number }>('test.once', ({ n }) => void ran.push({ by: 'b', n }), { pollingIntervalSeconds: 0.5 });
    for (let n = 0; n < 20; n++) await (n % 2 ? a : b).send('test.once', { n });
    await vi.waitFor(async () => expect((await jobStates('test.once')).map((j) => j.state)).toEqual(Array(20).fill('completed')), WAIT);
    expect(ran.map((r) => r.n).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, n) => n));
  });

  it('retries a failing job, keeps the output of the attempt that succeeded, and never runs it again', async () => {
    const [a] = instances;
    const attempts: number[] = [];
    await a.define<{ ok: boolean }>(
      'test.retry',
      (_, job) => {
        attempts.push(job.retryCount);
        if (job.retryCount < 2) throw new Error(`attempt ${job.retryCount} fails`);
        return { succeededOn: job.retryCount };
      },
      { retryLimit: 3, retryDelay: 1, retryBackoff: true },
    );
    await a.send('test.retry', { ok: true });
    await vi.waitFor(async () => expect(await jobStates('test.retry')).toEqual([{ state: 'completed', output: { succeededOn: 2 } }]), WAIT);
    expect(attempts).toEqual([0, 1, 2]);
  });

  it('keeps one job per throttle slot and key, whoever sends it', async () => {
    const [a, b] = instances;
    await a.define('test.slot', () => undefined);
    const ids = await Promise.all([a, b, a, b].map((j) => j.send('test.slot', {}, { singletonKey: 'sweep', singletonSeconds: 60 })));
    expect(ids.filter(Boolean)).toHaveLength(1);
    await vi.waitFor(async () => expect((await jobStates('test.slot')).map((j) => j.state)).toEqual(['completed']), WAIT);
  });

  it('queues a job inside a transaction only when the transaction commits', async () => {
    const [a] = instances;
    const seen: string[] = [];
    await a.define<{ tag: string }>('test.tx', ({ tag }) => void seen.push(tag));
    await expect(
      withSystem(database.db, async (tx) => {
        await a.send('test.tx', { tag: 'rolled back' }, { tx });
        throw new Error('abort the transaction');
      }),
    ).rejects.toThrow('abort the transaction');
    await withSystem(database.db, (tx) => a.send('test.tx', { tag: 'committed' }, { tx }));
    await vi.waitFor(async () => expect((await jobStates('test.tx')).map((j) => j.state)).toEqual(['completed']), WAIT);
    expect(seen).toEqual(['committed']);
  });

  /**
   * Ten transactions take every connection of the app's pool (10), then each publishes `event` with `{ n }` inside
   * it: resolves with what became of them, 'published' or `stuckWith` if they still wait after `patienceMs`.
   */
  async function publishHoldingEveryConnection(j: Jobs, event: string, stuckWith: string, patienceMs: number): Promise<string> {
    let holding = 0;
    let allHeld!: () => void;
    const held = new Promise<void>((resolve) => (allHeld = resolve));
    const publishing = Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        withSystem(database.db, async (tx) => {
          await sql`select 1`.execute(tx);
          if (++holding === 10) allHeld();
          await held;
          await j.publish(event, { n }, { tx });
        }),
      ),
    );
    let timer!: NodeJS.Timeout;
    const stuck = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(stuckWith), patienceMs)));
    try {
      return await Promise.race([publishing.then(() => 'published'), stuck]);
    } finally {
      clearTimeout(timer);
    }
  }
  const zeroToNine = Array.from({ length: 10 }, (_, n) => n);

  it('hands a handler the data it was sent, NUL and lone surrogates included, sent alone or inside a transaction', async () => {
    const [a] = instances;
    const text = 'last error: a\u0000b \ud800 \uffff0000 \\u0000';
    const seen: unknown[] = [];
    await a.define<{ text: string; nested: { [key: string]: string[] } }>('test.text', (data) => {
      seen.push(data);
      throw new Error(`refused: ${data.text}`); // the failure's output holds the text too
    }, { retryLimit: 0 });
    const data = { text, nested: { [text]: [text] } };
    await a.send('test.text', data);
    await withSystem(database.db, (tx) => a.send('test.text', data, { tx }));
    await vi.waitFor(async () => expect((await jobStates('test.text')).map((j) => j.state)).toEqual(['failed', 'failed']), WAIT);
    expect(seen).toEqual([data, data]);
    // read back through the driver, the output is the message as thrown (pg-boss keeps it in the storage encoding)
    expect((await jobStates('test.text')).map((j) => decodeValue(j.output))).toEqual([{ message: `refused: ${text}` }, { message: `refused: ${text}` }]);
  });

  it('publishes inside transactions that hold every pooled connection (an outbox under load never waits on the pool)', async () => {
    const [a] = instances;
    const seen: number[] = [];
    await a.define<{ n: number }>('test.published', ({ n }) => void seen.push(n));
    await a.subscribe('test.event', 'test.published');
    expect(await publishHoldingEveryConnection(a, 'test.event', 'stuck waiting for a pooled connection', 10_000)).toBe('published');
    await vi.waitFor(() => expect([...seen].sort((x, y) => x - y)).toEqual(zeroToNine), WAIT);
  });

  it("delivers an event to a queue subscribed after earlier events were published: at once on the subscribing instance, within SUBSCRIBED_MS on another", async () => {
    const [a, b] = instances;
    const first: number[] = [];
    const late: number[] = [];
    await a.define<{ n: number }>('test.sub-first', ({ n }) => void first.push(n));
    await a.define<{ n: number }>('test.sub-late', ({ n }) => void late.push(n));
    await a.subscribe('test.sub-event', 'test.sub-first');
    await a.publish('test.sub-event', { n: 1 });
    await b.publish('test.sub-event', { n: 2 }); // both now know the event's queues
    await a.subscribe('test.sub-event', 'test.sub-late');
    await a.publish('test.sub-event', { n: 3 });
    await vi.waitFor(() => expect(late).toEqual([3]), WAIT);
    // b learns of the new queue once its copy lapses: an event it publishes then reaches it
    await vi.waitFor(async () => {
      await b.publish('test.sub-event', { n: 4 });
      expect(late).toContain(4);
    }, { timeout: SUBSCRIBED_MS + 10_000, interval: 500 });
    await vi.waitFor(() => expect(first).toEqual(expect.arrayContaining([1, 2, 3, 4])), WAIT);
  });

  it('runs a cron schedule in its timezone, one job per occurrence however many instances schedule it', async () => {
    const [d, e] = [createJobs({ database, log, pollingIntervalSeconds: 0.5, scheduleCheckSeconds: 1 }), createJobs({ database, log, pollingIntervalSeconds: 0.5, scheduleCheckSeconds: 1 })];
    instances.push(d, e);
    await Promise.all([d.start(), e.start()]);
    // every minute of this hour and the next in New York: due now only if the hours are read in New York's time
    // (UTC is 4 or 5 hours apart, so read in UTC it is never due during the test)
    const hour = Number(new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', hour: 'numeric', hourCycle: 'h23' }).format(new Date()));
    const cron = `* ${hour},${(hour + 1) % 24} * * *`;
    const ran: string[] = [];
    for (const [name, j] of [['d', d], ['e', e]] as const) {
      await j.define<{ report: string }>('test.cron', ({ report }) => void ran.push(`${name}:${report}`));
      await j.schedule('test.cron', cron, { report: 'daily' }, { tz: 'America/New_York' });
    }
    await vi.waitFor(() => expect(ran.length).toBeGreaterThanOrEqual(1), WAIT);
    expect(ran[0]).toMatch(/^[de]:daily$/);
    // Three more passes over the schedules (each claimed by one instance, every second) find the occurrence already
    // queued: still one job per minute's occurrence (the test spans one minute boundary at most).
    const passAt = async () => (await sql<{ at: Date }>`select cron_on as at from pgboss.version`.execute(database.db)).rows[0].at.getTime();
    const firstPass = await passAt();
    await vi.waitFor(async () => expect(await passAt()).toBeGreaterThanOrEqual(firstPass + 3000), WAIT);
    const jobs = await sql<{ n: number }>`select count(*)::int as n from pgboss.job where name = 'test.cron'`.execute(database.db);
    expect(jobs.rows[0].n).toBeLessThanOrEqual(2);
    const schedules = await sql<{ cron: string; timezone: string }>`select cron, timezone from pgboss.schedule where name = 'test.cron'`.execute(database.db);
    expect(schedules.rows).toEqual([{ cron, timezone: 'America/New_York' }]);
  });

  it('comes up later: calls made before then begin it and wait, and nothing is lost', async () => {
    const c = jobs();
    await c.start({ later: true });
    const ran: number[] = [];
    await c.define<{ n: number }>('test.boot', ({ n }) => void ran.push(n), { pollingIntervalSeconds: 0.5 });
    await c.subscribe('test.boot-event', 'test.boot');
    await c.schedule('test.boot', '0 0 1 1 *');
    expect(c.state()).toEqual({ up: false, why: 'starting' });
    // before the queue is up: the send begins it and waits for its queue, the publish for the subscription
    await Promise.all([c.send('test.boot', { n: 1 }), c.publish('test.boot-event', { n: 2 })]);
    expect(c.state()).toEqual({ up: true });
    await vi.waitFor(() => expect([...ran].sort()).toEqual([1, 2]), WAIT);
    const schedules = await sql<{ cron: string }>`select cron from pgboss.schedule where name = 'test.boot'`.execute(database.db);
    expect(schedules.rows).toEqual([{ cron: '0 0 1 1 *' }]);
  });

  it('comes up while transactions holding every pooled connection wait on it to publish (runs ending during a boot)', async () => {
    const c = jobs();
    await c.start({ later: true });
    const seen: number[] = [];
    await c.define<{ n: number }>('test.boot-tx', ({ n }) => void seen.push(n), { pollingIntervalSeconds: 0.5 });
    await c.subscribe('test.boot-tx-event', 'test.boot-tx');
    // each publish brings the queue up and waits for it: the queue's start must not need one of those connections
    expect(await publishHoldingEveryConnection(c, 'test.boot-tx-event', 'stuck: the queue start waits for a pooled connection', 20_000)).toBe('published');
    expect(c.state()).toEqual({ up: true });
    await vi.waitFor(() => expect([...seen].sort((x, y) => x - y)).toEqual(zeroToNine), WAIT);
  });

  it('a setup that fails fails the start: begin() and the calls waiting on it throw, and state() says why', async () => {
    const c = jobs();
    await c.start({ later: true });
    await c.define('test.boot-ok', () => undefined);
    await c.schedule('test.boot-undefined', '* * * * *'); // no such queue
    const waiting = c.send('test.boot-ok', {});
    await expect(c.begin()).rejects.toThrow(/test\.boot-undefined/);
    await expect(waiting).rejects.toThrow(/test\.boot-undefined/);
    expect(c.state()).toEqual({ up: false, why: expect.stringMatching(/^failed to start: .*test\.boot-undefined/) });
  });

  it('stops gracefully: a running handler finishes and its job completes', async () => {
    const c = jobs();
    await c.start();
    let release!: () => void;
    let began!: () => void;
    const started = new Promise<void>((resolve) => (began = resolve));
    await c.define('test.graceful', async () => {
      began();
      await new Promise<void>((r) => (release = r));
      return { finished: true };
    });
    await c.send('test.graceful', {});
    await started;
    const stopping = c.stop();
    release();
    await stopping;
    expect(await jobStates('test.graceful')).toEqual([{ state: 'completed', output: { finished: true } }]);
  });
});

describe('job queue on a database the app role may not create schemas in', () => {
  it('refuses to start with what to do instead of a bare permission error', async () => {
    const db = await createTestDatabase();
    const admin = connect(db.adminUrl, { max: 1 });
    let database: Database | undefined;
    try {
      // the database belongs to the administrator; the app role may connect and nothing more
      await admin.unsafe(`ALTER DATABASE ${db.name} OWNER TO CURRENT_USER`);
      database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
      const jobs = createJobs({ database, log: createLogger('test') });
      await expect(jobs.start()).rejects.toThrow(/cannot install its schema "pgboss".*GRANT CREATE ON DATABASE/s);
    } finally {
      await database?.close();
      await admin.end({ timeout: 1 });
      await db.drop();
    }
  });
});
