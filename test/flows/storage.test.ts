import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { backends } from '../support/backends.ts';
import { adminUrl, connect, createTestDatabase } from '../support/pg.ts';
import { runSvc } from '../support/process.ts';
import { openDatabase, migrate, loadMigrations, withTenant, assertUnprivilegedRole, type Database } from '../../src/db/index.ts';

describe.each(backends)('row-level security on $name', (backend) => {
  let database: Database;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const db = await backend.setup();
    cleanup = db.cleanup;
    database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    await assertUnprivilegedRole(database.db);
    await migrate(database);
    for (const id of ['acme', 'globex']) {
      await withTenant(database.db, id, async (tx) => {
        await tx.insertInto('tenants').values({ id, name: id }).execute();
        await tx
          .insertInto('api_keys')
          .values({ id: `key_${id}`, tenant_id: id, name: id, role: 'owner', key_hash: `hash_${id}`, key_prefix: 'ao_x' })
          .execute();
      });
    }
  });
  afterAll(async () => {
    await database?.close();
    await cleanup?.();
  });

  it('shows a query without a tenant filter only the rows of the transaction tenant', async () => {
    const rows = await withTenant(database.db, 'acme', (tx) => tx.selectFrom('api_keys').select(['id', 'tenant_id']).execute());
    expect(rows).toEqual([{ id: 'key_acme', tenant_id: 'acme' }]);
    const tenants = await withTenant(database.db, 'acme', (tx) => tx.selectFrom('tenants').select('id').execute());
    expect(tenants).toEqual([{ id: 'acme' }]);
  });

  it('shows nothing at all outside a tenant transaction', async () => {
    expect(await database.db.selectFrom('api_keys').selectAll().execute()).toEqual([]);
    expect(await database.db.selectFrom('tenants').selectAll().execute()).toEqual([]);
  });

  it('refuses to write a row into another tenant', async () => {
    await expect(
      withTenant(database.db, 'acme', (tx) =>
        tx.insertInto('api_keys').values({ id: 'key_evil', tenant_id: 'globex', name: 'evil', role: 'owner', key_hash: 'hash_evil', key_prefix: 'ao_x' }).execute(),
      ),
    ).rejects.toThrow(/row-level security/);
  });

  it('cannot update or delete another tenant\'s rows with a hand-written statement', async () => {
    const updated = await withTenant(database.db, 'acme', (tx) => sql`update api_keys set name = 'pwned'`.execute(tx));
    expect(Number(updated.numAffectedRows ?? 0)).toBe(1); // only acme's own row
    const deleted = await withTenant(database.db, 'acme', (tx) => sql`delete from api_keys where tenant_id = 'globex'`.execute(tx));
    expect(Number(deleted.numAffectedRows ?? 0)).toBe(0);
    const globex = await withTenant(database.db, 'globex', (tx) => tx.selectFrom('api_keys').select('name').execute());
    expect(globex).toEqual([{ name: 'globex' }]);
  });

  it('guards every table that has a tenant_id with forced row-level security and a policy', async () => {
    const { rows } = await sql<{ table: string; forced: boolean; policies: number }>`
      select c.relname as table, c.relforcerowsecurity as forced,
             (select count(*)::int from pg_policy p where p.polrelid = c.oid) as policies
      from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped
      where c.relkind = 'r' and c.relnamespace = 'public'::regnamespace order by 1`.execute(database.db);
    expect(rows.length).toBeGreaterThan(20);
    expect(rows.filter((r) => !r.forced || r.policies === 0)).toEqual([]);
  });

  it('applies migrations once: a second run applies nothing', async () => {
    expect(await migrate(database)).toEqual([]);
    const applied = await sql<{ name: string }>`select name from svc_migrations order by name`.execute(database.db);
    expect(applied.rows.map((r) => r.name)).toEqual(loadMigrations().map((m) => m.name));
  });

  it('applies a migration the database lacks though every other one is recorded (a restart checks by one read)', async () => {
    // one whose effect can be taken back: the platform skills' fingerprint column
    const last = loadMigrations().find((m) => m.name === '0023_platform_skills_seeded.sql')!;
    await sql`alter table tenants drop column platform_skills`.execute(database.db);
    await sql`delete from svc_migrations where name = ${last.name}`.execute(database.db);
    expect(await migrate(database)).toEqual([last.name]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from information_schema.columns where table_name = 'tenants' and column_name = 'platform_skills'`.execute(database.db);
    expect(rows).toEqual([{ n: 1 }]);
    expect(await migrate(database)).toEqual([]);
  });
});

describe('migrations and roles on the PostgreSQL server', () => {
  it('runs migrations from two connections at once without harm', async () => {
    const db = await createTestDatabase();
    const a = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    const b = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    try {
      const [x, y] = await Promise.all([migrate(a), migrate(b)]);
      expect([...x, ...y].sort()).toEqual(loadMigrations().map((m) => m.name));
      expect(await migrate(a)).toEqual([]);
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  });

  it('runs `svc migrate` from two processes at once, then again, without harm', async () => {
    const db = await createTestDatabase();
    try {
      const env = { DATABASE_URL: db.url };
      const [p, q] = await Promise.all([runSvc(['migrate'], env), runSvc(['migrate'], env)]);
      expect([p.code, q.code]).toEqual([0, 0]);
      expect([p.stdout, q.stdout].join('')).toMatch(/applied: 0001_identity\.sql/);
      const again = await runSvc(['migrate'], env);
      expect(again).toMatchObject({ code: 0, stdout: 'up to date\n' });
    } finally {
      await db.drop();
    }
  });

  it('refuses to boot as a superuser, saying how to fix it', async () => {
    const db = await createTestDatabase();
    try {
      const res = await runSvc(['serve', '--role=conductor', '--port=0'], { DATABASE_URL: db.adminUrl });
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/has SUPERUSER, which bypasses row-level security; refusing to start/);
      expect(res.stderr).toMatch(/svc db init --admin-url/);
    } finally {
      await db.drop();
    }
  });

  it('creates a suitable role and database with `svc db init`, and the server boots on it', async () => {
    const name = `svc_init_${Date.now().toString(36)}`;
    const ADMIN_URL = adminUrl();
    const init = await runSvc(['db', 'init', '--admin-url', ADMIN_URL, '--role', name, '--database', name], {});
    expect(init.code).toBe(0);
    const url = /^DATABASE_URL=(\S+)$/m.exec(init.stdout)![1];
    const again = await runSvc(['db', 'init', '--admin-url', ADMIN_URL, '--role', name, '--database', name], {});
    expect(again.code).toBe(0);
    const secondUrl = /^DATABASE_URL=(\S+)$/m.exec(again.stdout)![1];
    const database = await openDatabase({ url: secondUrl, dataDir: '/nonexistent' });
    try {
      await assertUnprivilegedRole(database.db);
      expect((await sql<{ who: string }>`select current_user as who`.execute(database.db)).rows).toEqual([{ who: name }]);
      expect((await migrate(database)).length).toBeGreaterThan(0);
    } finally {
      await database.close();
      const admin = connect(ADMIN_URL, { max: 1 });
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.unsafe(`DROP ROLE IF EXISTS ${name}`);
      await admin.end();
    }
    expect(url).toContain(name);
  });
});
