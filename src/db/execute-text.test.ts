import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../test/support/backends.ts';
import { openDatabase, type Database } from './index.ts';

/**
 * `executeText`, the path a library's own SQL takes (the job queue): parameterised statements, whole scripts with
 * their own BEGIN…COMMIT, rows per statement, and a script that fails mid-transaction leaves no connection behind in
 * an aborted transaction.
 */
describe.each(backends)('executeText on $name', (backend) => {
  let database: Database;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const db = await backend.setup();
    cleanup = db.cleanup;
    database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    await database.executeText('CREATE TABLE t (n int PRIMARY KEY)');
  }, 60_000);
  afterAll(async () => {
    await database?.close();
    await cleanup?.();
  });

  it('runs one parameterised statement', async () => {
    expect(await database.executeText('SELECT $1::int + 1 AS n', [41])).toEqual([{ n: 42 }]);
  });

  it('runs a script with its own transaction and answers the rows of its statements, one array each', async () => {
    const rows = await database.executeText('BEGIN; INSERT INTO t VALUES (1), (2); SELECT count(*)::int AS c FROM t; COMMIT;');
    expect(rows.every(Array.isArray)).toBe(true);
    expect(rows.flat()).toEqual([{ c: 2 }]);
    expect(await database.executeText('SELECT n FROM t ORDER BY n', [])).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('leaves no connection in an aborted transaction after a script fails between BEGIN and COMMIT', async () => {
    await expect(database.executeText('BEGIN; INSERT INTO t VALUES (3); INSERT INTO t VALUES (3); COMMIT;')).rejects.toThrow(/duplicate key/);
    // every connection of the pool at once: the one that ran the failed script among them
    const answers = await Promise.all(Array.from({ length: 10 }, () => database.executeText('SELECT count(*)::int AS c FROM t')));
    expect(answers).toEqual(Array(10).fill([{ c: 2 }]));
  });

  it('rejects a script whose connection breaks mid-transaction, and the process lives on', async () => {
    // a PostgreSQL restarted under svc: the job queue's script loses its backend between BEGIN and COMMIT
    const running = database.executeText('BEGIN; SELECT pg_sleep(60); COMMIT;');
    running.catch(() => {});
    // parameterised statements, on the queue's other connections
    const sleeper = `SELECT pid FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()`;
    await expect.poll(async () => (await database.executeText(sleeper, ['%pg_sleep(60)%'])).length).toBe(1);
    await database.executeText(`SELECT pg_terminate_backend(pid) FROM (${sleeper}) s`, ['%pg_sleep(60)%']);
    await expect(running).rejects.toThrow();
    // scripts go on over a new connection (the one after the break may still get the old backend's FATAL error); a
    // write on the broken connection would have thrown from a timer, outside any promise, and failed this test run
    await expect.poll(() => database.executeText('SELECT count(*)::int AS c FROM t').catch((err: Error) => err.message)).toEqual([{ c: 2 }]);
  });
});
