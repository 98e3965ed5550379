import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonb, loadMigrations, migrate, openDatabase, withTenant, type Database } from '../../src/db/index.ts';
import { purgeOldVersions } from '../../src/modules/conductor/memory/index.ts';
import { createTestDatabase } from '../support/pg.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/**
 * The automations' memory notes move into memory stores (sql/0026): a database with notes written before the
 * migration keeps every one of them, readable through `GET /api/automations/{id}/memory` and the memory-store API
 * alike. Then the retention of versions, on the same database.
 */
let database: Database;
let drop: () => Promise<void>;
let url: string;
let svc: TestSvc | undefined;

beforeAll(async () => {
  const db = await createTestDatabase();
  url = db.url;
  drop = db.drop;
  database = await openDatabase({ url, dataDir: '/nonexistent' });
  await migrate(database, loadMigrations().filter((m) => m.name < '0026'));
  await withTenant(database.db, 'default', async (tx) => {
    await tx.insertInto('tenants').values({ id: 'default', name: 'Default' }).execute();
    await tx.insertInto('profiles').values({ tenant_id: 'default', name: 'demo', id: 'prof_demo', spec: jsonb({ name: 'demo', id: 'prof_demo', runtime: 'general', model: 'demo:echo' }) }).execute();
    await sql`insert into automations (id, tenant_id, name, profile, cron, memory, memory_updated_at)
      values ('aut_noted', 'default', 'noted', 'demo', '0 9 * * *', 'seen the queue at 7', '2026-01-02T03:04:05Z'),
             ('aut_cleared', 'default', 'cleared', 'demo', '0 9 * * *', '', '2026-01-03T00:00:00Z'),
             ('aut_never', 'default', 'never', 'demo', '0 9 * * *', '', null)`.execute(tx);
  });
});
afterAll(async () => {
  await svc?.stop();
  await database?.close();
  await drop?.();
});

describe('the automations memory migration', () => {
  it('copies each note into a store of its own with one entry and its first version, then drops the columns', async () => {
    expect(await migrate(database)).toContain('0026_memory_stores.sql');
    const stores = await withTenant(database.db, 'default', (tx) => tx.selectFrom('memory_stores').select(['name', 'scope', 'automation_id', 'max_entries', 'max_entry_bytes']).orderBy('name').execute());
    expect(stores).toEqual([
      { name: 'automation-aut_cleared', scope: 'shared', automation_id: 'aut_cleared', max_entries: 1, max_entry_bytes: 8192 },
      { name: 'automation-aut_noted', scope: 'shared', automation_id: 'aut_noted', max_entries: 1, max_entry_bytes: 8192 },
    ]);
    const entries = await withTenant(database.db, 'default', (tx) => tx.selectFrom('memory_entries').select(['path', 'content', 'bytes', 'version', 'updated_at']).orderBy('content').execute());
    expect(entries).toEqual([
      { path: '/note.md', content: '', bytes: 0, version: 1, updated_at: new Date('2026-01-03T00:00:00Z') },
      { path: '/note.md', content: 'seen the queue at 7', bytes: 19, version: 1, updated_at: new Date('2026-01-02T03:04:05Z') },
    ]);
    const versions = await withTenant(database.db, 'default', (tx) => tx.selectFrom('memory_versions').select(['operation', 'content', 'actor']).orderBy('content').execute());
    expect(versions).toEqual([
      { operation: 'created', content: '', actor: 'migration' },
      { operation: 'created', content: 'seen the queue at 7', actor: 'migration' },
    ]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from information_schema.columns where table_name = 'automations' and column_name like 'memory%'`.execute(database.db);
    expect(rows).toEqual([{ n: 0 }]);
  });

  it('serves the migrated notes as before, and the next write is version 2 of the same entry', async () => {
    svc = await startTestSvc({ DATABASE_URL: url }, 'conductor');
    const get = async (id: string) => (await svc!.api(`/api/automations/${id}/memory`)).json();
    expect(await get('aut_noted')).toEqual({ body: 'seen the queue at 7', updatedAt: '2026-01-02T03:04:05.000Z' });
    expect(await get('aut_cleared')).toEqual({ body: '', updatedAt: '2026-01-03T00:00:00.000Z' });
    expect(await get('aut_never')).toEqual({ body: '' });
    expect((await svc.api('/api/automations/aut_noted/memory', { method: 'PUT', json: { body: 'seen it at 8' } })).status).toBe(200);
    const history = await (await svc.api('/api/memory-stores/automation-aut_noted/versions')).json();
    expect(history.map((v: any) => [v.version, v.operation, v.path])).toEqual([[2, 'modified', '/note.md'], [1, 'created', '/note.md']]);
    // a note written for the first time makes its store then
    expect((await svc.api('/api/automations/aut_never/memory', { method: 'PUT', json: { body: 'first' } })).status).toBe(200);
    expect(await (await svc.api('/api/memory-stores/automation-aut_never/entries/note.md')).json()).toMatchObject({ content: 'first', version: 1 });
  });
});

describe('version retention', () => {
  it('keeps a replaced version for the retention after it was replaced, and a deleted entry restorable as long', async () => {
    const put = (content: string) => svc!.api('/api/automations/aut_noted/memory', { method: 'PUT', json: { body: content } });
    expect((await put('seen it at 9')).status).toBe(200);
    const days = (n: number) => new Date(Date.now() + n * 86_400_000);
    const deps = { db: database.db, config: { maxEntries: 1000, maxEntryBytes: 102400, maxTotalBytes: 10485760, versionDays: 30 } };
    const versionsNow = async () => (await (await svc!.api('/api/memory-stores/automation-aut_noted/versions')).json()).map((v: any) => v.version);
    expect(await versionsNow()).toEqual([3, 2, 1]);
    // 29 days on, the replaced versions are still within their retention
    expect(await purgeOldVersions(deps, days(29))).toBe(0);
    // 31 days on, what was replaced more than 30 days before goes; the head stays
    expect(await purgeOldVersions(deps, days(31))).toBe(2);
    expect(await versionsNow()).toEqual([3]);

    // a deleted entry stays restorable for the retention, then its history goes
    await svc!.api('/api/memory-stores/automation-aut_noted/entries/note.md', { method: 'DELETE' });
    expect(await versionsNow()).toEqual([4, 3]);
    expect(await purgeOldVersions(deps, days(29))).toBe(0);
    expect(await purgeOldVersions(deps, days(31))).toBe(2);
    expect(await versionsNow()).toEqual([]);
  });
});
