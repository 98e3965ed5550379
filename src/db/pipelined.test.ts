import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../test/support/backends.ts';
import { commitWithNext, openDatabase, readWithNext, sendWithNext, withTenant, withTenantStatement, type Database } from './index.ts';

/**
 * Scoped transactions with their begin and scope pipelined behind the first statement (pipelined.ts): the statement
 * still runs inside the transaction with the tenant set, a failure anywhere rolls the whole transaction back and
 * leaves the connection clean, and a transaction that sends nothing leaves nothing open.
 */
describe.each(backends)('pipelined scoped transactions on $name', (backend) => {
  let database: Database;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const db = await backend.setup();
    cleanup = db.cleanup;
    database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    await database.executeText('CREATE TABLE p (n int PRIMARY KEY, tenant text)');
  }, 60_000);
  afterAll(async () => {
    await database?.close();
    await cleanup?.();
  });

  it('runs the first statement inside the transaction, with the tenant set', async () => {
    const row = await withTenant(database.db, 'acme', async (tx) => {
      const { rows } = await sql<{ tenant: string; xact: boolean }>`
        select current_setting('app.tenant_id', true) as tenant, now() = statement_timestamp() as xact`.execute(tx);
      return rows[0];
    });
    // inside a transaction begun earlier, now() (its start) is before the statement's own timestamp
    expect(row).toEqual({ tenant: 'acme', xact: false });
    // the setting was local to that transaction
    const { rows } = await sql<{ tenant: string | null }>`select nullif(current_setting('app.tenant_id', true), '') as tenant`.execute(database.db);
    expect(rows[0].tenant).toBeNull();
  });

  it('rolls back everything when a later statement fails, and every connection is clean afterwards', async () => {
    await expect(
      withTenant(database.db, 'acme', async (tx) => {
        await sql`insert into p values (1, current_setting('app.tenant_id'))`.execute(tx);
        await sql`insert into p values (1, 'again')`.execute(tx);
      }),
    ).rejects.toThrow(/duplicate key/);
    await expect(withTenant(database.db, 'acme', (tx) => sql`insert into p values (2, 'x'), (2, 'y')`.execute(tx))).rejects.toThrow(/duplicate key/);
    const counts = await Promise.all(Array.from({ length: 12 }, () => withTenant(database.db, 'acme', async (tx) => (await sql<{ c: number }>`select count(*)::int as c from p`.execute(tx)).rows[0].c)));
    expect(counts).toEqual(Array(12).fill(0));
  });

  it('commits what a transaction wrote, and a transaction that sent nothing leaves no transaction open', async () => {
    await withTenant(database.db, 'acme', async () => {});
    await withTenant(database.db, 'acme', (tx) => sql`insert into p values (3, current_setting('app.tenant_id'))`.execute(tx));
    const states = await Promise.all(Array.from({ length: 12 }, () => sql<{ s: string }>`select coalesce(string_agg(tenant, ','), '') as s from p`.execute(database.db)));
    expect(states.map((r) => r.rows[0].s)).toEqual(Array(12).fill('acme'));
  });

  it('sends a one-statement transaction with its commit: it runs scoped inside the transaction, lands, and a failure lands nothing', async () => {
    const row = await withTenantStatement(database.db, 'solo', async (tx) => {
      const { rows } = await sql<{ tenant: string; xact: boolean }>`
        insert into p values (10, current_setting('app.tenant_id')) returning tenant, now() = statement_timestamp() as xact`.execute(tx);
      return rows[0];
    });
    expect(row).toEqual({ tenant: 'solo', xact: false });
    await expect(withTenantStatement(database.db, 'solo', (tx) => sql`insert into p values (11, 'a'), (11, 'b')`.execute(tx))).rejects.toThrow(/duplicate key/);
    // a second statement would run outside the transaction: it is refused (the first one has landed)
    await expect(
      withTenantStatement(database.db, 'solo', async (tx) => {
        await sql`insert into p values (12, current_setting('app.tenant_id'))`.execute(tx);
        await sql`insert into p values (13, 'unscoped')`.execute(tx);
      }),
    ).rejects.toThrow(/commit went out with/);
    const states = await Promise.all(Array.from({ length: 12 }, () => sql<{ s: string; scope: string | null }>`
      select coalesce(string_agg(n || ':' || tenant, ',' order by n) filter (where n >= 10), '') as s, nullif(current_setting('app.tenant_id', true), '') as scope from p`.execute(database.db)));
    expect(states.map((r) => r.rows[0])).toEqual(Array(12).fill({ s: '10:solo,12:solo', scope: null }));
  });

  it('sends the commit of a longer transaction with its last statement: all of it lands, or none of it when that one fails', async () => {
    await withTenant(database.db, 'multi', async (tx) => {
      await sql`insert into p values (20, current_setting('app.tenant_id'))`.execute(tx);
      await commitWithNext(tx);
      await sql`insert into p values (21, current_setting('app.tenant_id'))`.execute(tx);
    });
    await expect(
      withTenant(database.db, 'multi', async (tx) => {
        await sql`insert into p values (22, current_setting('app.tenant_id'))`.execute(tx);
        await commitWithNext(tx);
        await sql`insert into p values (20, 'again')`.execute(tx);
      }),
    ).rejects.toThrow(/duplicate key/);
    const states = await Promise.all(Array.from({ length: 12 }, () => sql<{ s: string; scope: string | null }>`
      select coalesce(string_agg(n || ':' || tenant, ',' order by n) filter (where n >= 20), '') as s, nullif(current_setting('app.tenant_id', true), '') as scope from p`.execute(database.db)));
    expect(states.map((r) => r.rows[0])).toEqual(Array(12).fill({ s: '20:multi,21:multi', scope: null }));
  });

  it('sends a held statement with the next one: it lands scoped, in order, or fails the transaction with its own error', async () => {
    const seen = await withTenant(database.db, 'held', async (tx) => {
      await sendWithNext(tx);
      await sql`insert into p values (30, current_setting('app.tenant_id'))`.execute(tx);
      // the statement after it sees what it wrote: it ran first, in the same transaction
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from p where n = 30`.execute(tx);
      await sendWithNext(tx);
      await sql`insert into p values (31, current_setting('app.tenant_id'))`.execute(tx); // held to the commit
      return rows[0].n;
    });
    expect(seen).toBe(1);
    await expect(
      withTenant(database.db, 'held', async (tx) => {
        await sql`insert into p values (32, 'x')`.execute(tx);
        await sendWithNext(tx);
        await sql`insert into p values (30, 'again')`.execute(tx);
        await sql`insert into p values (33, 'x')`.execute(tx);
      }),
    ).rejects.toThrow(/duplicate key/);
    await expect(
      withTenant(database.db, 'held', async (tx) => {
        await sql`insert into p values (34, 'x')`.execute(tx);
        await sendWithNext(tx);
        await sql`insert into p values (31, 'again')`.execute(tx); // fails with the commit it went with
      }),
    ).rejects.toThrow(/duplicate key/);
    const states = await Promise.all(Array.from({ length: 12 }, () => sql<{ s: string; scope: string | null }>`
      select coalesce(string_agg(n || ':' || tenant, ',' order by n) filter (where n >= 30), '') as s, nullif(current_setting('app.tenant_id', true), '') as scope from p`.execute(database.db)));
    expect(states.map((r) => r.rows[0])).toEqual(Array(12).fill({ s: '30:held,31:held', scope: null }));
  });

  it('answers a held read with the write of the next statement, scoped, and rejects it when its transaction fails', async () => {
    const [ahead, count] = await withTenant(database.db, 'reads', async (tx) => {
      const ahead = await readWithNext(tx, sql<{ tenant: string }>`select current_setting('app.tenant_id') as tenant`);
      await commitWithNext(tx);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from p where n < 0`.execute(tx);
      return [await ahead.rows, rows[0].n] as const;
    });
    expect(ahead).toEqual([{ tenant: 'reads' }]);
    expect(count).toBe(0);
    // a read held to the commit is answered with it
    const last = await withTenant(database.db, 'reads', async (tx) => readWithNext(tx, sql<{ one: number }>`select 1 as one`));
    await expect(last.rows).resolves.toEqual([{ one: 1 }]);
    let failed: Promise<unknown> | undefined;
    await expect(
      withTenant(database.db, 'reads', async (tx) => {
        failed = (await readWithNext(tx, sql`select 1/0 as boom`)).rows;
        await sql`select 1`.execute(tx);
      }),
    ).rejects.toThrow(/division by zero/);
    await expect(failed).rejects.toThrow(/division by zero/);
  });
});
