import { sql } from 'kysely';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../test/support/backends.ts';
import { createTestDatabase } from '../../test/support/pg.ts';
import { connectionOf, openDatabase, type Database } from './database.ts';
import { withSystem } from './tenant.ts';

/**
 * Connections that lose their backend (PostgreSQL restarted, a failover, `pg_terminate_backend`): every statement in
 * flight or still to come on them settles with an error, none is left waiting, nothing is thrown outside a promise
 * (which would end the process), and the pool answers again once PostgreSQL does. postgres.js 3.4.9 does not hold to
 * that on its own (porsager/postgres#1208, #1199: a reserved connection or a transaction whose backend died threw a
 * TypeError from a timer, or put the dead connection back in the pool); svc ships it patched (patches/).
 */

/** Rejects when `p` has not settled within `ms`: a statement left waiting fails the test instead of hanging it. */
function settlesWithin<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} had not settled after ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * 16 clients, each running `step(i)` in a loop until stopped: counts what succeeded and what failed, and fails the
 * test on a step left waiting.
 */
function loadOf(step: (i: number) => Promise<unknown>) {
  let stopped = false;
  const counts = { ok: 0, failed: 0 };
  const clients = Array.from({ length: 16 }, async (_, c) => {
    for (let i = c; !stopped; i += 16) {
      await settlesWithin(step(i), 15_000, `statement ${i}`).then(
        () => counts.ok++,
        (err: Error) => {
          if (/had not settled/.test(err.message)) throw err;
          counts.failed++;
        },
      );
    }
  });
  return {
    counts,
    async stop() {
      stopped = true;
      await Promise.all(clients);
    },
  };
}

/** Every other backend of the app's connections to this database. */
const TERMINATE_OTHERS = `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'svc' and pid <> pg_backend_pid() and datname = current_database()`;

describe('postgres.js when a backend dies', () => {
  let url: string;
  let drop: () => Promise<void>;
  let killer: postgres.Sql;
  beforeAll(async () => {
    const db = await createTestDatabase();
    url = db.url;
    drop = db.drop;
    killer = postgres(url, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await killer?.end();
    await drop?.();
  });

  it('fails the statements on a reserved connection whose backend died, and once it is released the pool answers', async () => {
    const client = postgres(url, { max: 2, onnotice: () => {} });
    try {
      const reserved = await client.reserve();
      const [{ pid }] = await reserved<Array<{ pid: number }>>`select pg_backend_pid() as pid`;
      await killer`select pg_terminate_backend(${pid})`;
      await expect(reserved`select 1`).rejects.toThrow();
      // the statement after the first failure used to throw a TypeError from a timer and end the process
      await expect(settlesWithin(reserved`select 2`, 5_000, 'a statement on the dead connection')).rejects.toThrow(/CONNECTION_CLOSED/);
      reserved.release();
      const answers = await settlesWithin(Promise.all([client`select 1 as n`, client`select 2 as n`, client`select 3 as n`]), 10_000, 'the pool after the release');
      expect(answers.map((rows) => rows[0]!.n)).toEqual([1, 2, 3]);
    } finally {
      await client.end({ timeout: 1 });
    }
  });

  it('fails a transaction whose backend died, its rollback and its later statements with it, and the pool answers', async () => {
    const client = postgres(url, { max: 1, onnotice: () => {} });
    try {
      // the transaction may fail as soon as its connection closes, before the callback gets to its next statement:
      // the test waits for the callback to have sent it (wrapped, so the promise is handed over, not adopted)
      let sent!: (later: { statement: Promise<unknown> }) => void;
      const laterSent = new Promise<{ statement: Promise<unknown> }>((resolve) => (sent = resolve));
      const tx = client.begin(async (t) => {
        const [{ pid }] = await t<Array<{ pid: number }>>`select pg_backend_pid() as pid`;
        await killer`select pg_terminate_backend(${pid})`;
        try {
          await t`select 1`;
        } finally {
          // a statement the callback sends after the break: it fails, and reaches no other connection
          const statement = t`select 2`;
          statement.catch(() => {});
          sent({ statement });
        }
      });
      await expect(settlesWithin(tx, 10_000, 'the transaction')).rejects.toThrow();
      const later = await settlesWithin(laterSent, 10_000, 'the callback sending a statement after the break');
      await expect(settlesWithin(later.statement, 5_000, 'a statement after the break')).rejects.toThrow();
      expect(await settlesWithin(client`select 1 as n`, 10_000, 'the pool after the transaction')).toEqual([{ n: 1 }]);
    } finally {
      await client.end({ timeout: 1 });
    }
  });
});

describe.each(backends)('svc database handle when its backends die under load, on $name', (backend) => {
  let database: Database;
  let cleanup: () => Promise<void>;
  let killer: postgres.Sql;
  beforeAll(async () => {
    const db = await backend.setup();
    cleanup = db.cleanup;
    database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    await database.executeText('CREATE TABLE t (n int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 100)');
    const target = database.embedded ? database.embedded.connection() : connectionOf(db.url);
    killer = typeof target === 'string' ? postgres(target, { max: 1, onnotice: () => {} }) : postgres({ ...target, max: 1, onnotice: () => {} });
  }, 60_000);
  afterAll(async () => {
    await killer?.end();
    await database?.close();
    await cleanup?.();
  });

  it('settles every statement and transaction in flight, throws nothing outside them, and serves again', async () => {
    // 16 clients: plain statements and transactions through Kysely (a reserved connection each), statements and
    // scripts through the job queue's path; every backend of the app's pool is terminated three times meanwhile
    const load = loadOf(async (i) => {
      if (i % 4 === 0) await withSystem(database.db, async (tx) => sql`select count(*) from t`.execute(tx).then(() => sql`select n from t where n = ${i}`.execute(tx)));
      else if (i % 4 === 1) await database.executeText('select n from t where n = $1', [i]);
      else if (i % 4 === 2) await database.executeText('BEGIN; SELECT count(*) FROM t; COMMIT;');
      else await sql`select n, pg_sleep(0.001) from t where n <= ${i % 100}`.execute(database.db);
    });
    const { counts } = load;
    for (let round = 0; round < 3; round++) {
      const before = counts.ok + counts.failed;
      await expect.poll(() => counts.ok + counts.failed, { timeout: 10_000 }).toBeGreaterThan(before + 50);
      await killer.unsafe(TERMINATE_OTHERS);
    }
    const settledBefore = counts.ok;
    await expect.poll(() => counts.ok, { timeout: 15_000 }).toBeGreaterThan(settledBefore + 50);
    await load.stop();
    expect(counts.failed).toBeGreaterThan(0); // the terminations did break statements in flight
    const rows = await settlesWithin(withSystem(database.db, async (tx) => (await sql<{ c: number }>`select count(*)::int as c from t`.execute(tx)).rows), 10_000, 'a transaction after the load');
    expect(rows).toEqual([{ c: 100 }]);
  }, 90_000);

  it('settles everything through a second of back-to-back terminations, connections caught mid-handshake included', async () => {
    // terminated while they reconnect: during their start-up and postgres.js's type fetch, whose rejection nobody
    // awaited (an unhandled rejection, which fails this run)
    const load = loadOf((i) => sql`select ${i}::int as n`.execute(database.db));
    for (const t0 = performance.now(); performance.now() - t0 < 1_000; ) await killer.unsafe(TERMINATE_OTHERS);
    await load.stop();
    expect(load.counts.ok + load.counts.failed).toBeGreaterThan(16);
    expect(await settlesWithin(sql<{ n: number }>`select 1 as n`.execute(database.db), 15_000, 'a statement after the storm')).toMatchObject({ rows: [{ n: 1 }] });
  }, 60_000);
});
