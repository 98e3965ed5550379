import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadMigrations, migrate, openDatabase, type Database, type DatabaseSchema } from '../index.ts';
import { clusterUser, ensureTemplate } from './index.ts';

/**
 * A new embedded cluster is a copy of a template that already holds svc's schema, baked once per sql/ state: a first
 * boot has nothing left to migrate, and a changed sql/ gets a template of its own (a cluster made before the change is
 * migrated at boot, as always).
 */
const osUser = process.env.SVC_PG_OS_USER || 'nobody';
const tag = randomBytes(4).toString('hex'); // fresh keys, so this run bakes its own templates
const dirs: string[] = [];
const keys = new Set<string>();

function sqlFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-template-sql-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** The schema of a sql/ folder, counting how often it is installed. */
function schemaOf(dir: string, installs: { n: number }): () => Promise<DatabaseSchema> {
  return async () => {
    const migrations = loadMigrations(dir);
    const schema: DatabaseSchema = {
      key: migrations.map((m) => `${m.name}\0${m.text}`).join('\0'),
      async install(database) {
        installs.n++;
        await migrate(database, migrations);
      },
    };
    keys.add(schema.key);
    return schema;
  };
}

const tables = async (database: Database) =>
  (await database.executeText(`SELECT tablename FROM pg_tables WHERE tablename LIKE 'tpl_%' ORDER BY 1`)).map((r) => (r as { tablename: string }).tablename);

afterAll(async () => {
  // this run's templates (about 40 MB each): found by their keys (already baked, so nothing is installed here)
  for (const key of keys) dirs.push(await ensureTemplate(clusterUser(osUser), { key, install: async () => {} }));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the template a new embedded cluster is copied from', { timeout: 60_000 }, () => {
  const first = `CREATE TABLE tpl_first_${tag} (id int);`;
  const second = `CREATE TABLE tpl_second_${tag} (id int);`;

  it('holds the migrations already, baked once for all the clusters made from the same sql/', async () => {
    const installs = { n: 0 };
    const dir = sqlFolder({ '0001_first.sql': first });
    for (let i = 0; i < 2; i++) {
      const database = await openDatabase({ url: 'memory', dataDir: '', embedded: { osUser, settings: [] }, schema: schemaOf(dir, installs) });
      try {
        expect(await migrate(database, loadMigrations(dir))).toEqual([]);
        expect(await tables(database)).toEqual([`tpl_first_${tag}`]);
      } finally {
        await database.close();
      }
    }
    expect(installs.n).toBe(1);
  });

  it('gets a template of its own when sql/ changed, and a cluster made before the change is migrated at boot', async () => {
    const installs = { n: 0 };
    const before = sqlFolder({ '0001_first.sql': `${first}\n-- as it was` });
    const after = sqlFolder({ '0001_first.sql': `${first}\n-- as it was`, '0002_second.sql': second });
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-template-data-'));
    chmodSync(dataDir, 0o711); // as root, the cluster's OS user walks through it
    dirs.push(dataDir);
    const open = (url: string | undefined, dir: string) => openDatabase({ url, dataDir, embedded: { osUser, settings: [] }, schema: schemaOf(dir, installs) });

    let database = await open(undefined, before);
    await database.close();
    database = await open(undefined, after); // a restart: the cluster exists, no template is asked for
    try {
      expect(await migrate(database, loadMigrations(after))).toEqual(['0002_second.sql']);
    } finally {
      await database.close();
    }
    database = await open('memory', after); // a new cluster after the change
    try {
      expect(await migrate(database, loadMigrations(after))).toEqual([]);
      expect(await tables(database)).toEqual([`tpl_first_${tag}`, `tpl_second_${tag}`]);
    } finally {
      await database.close();
    }
    expect(installs.n).toBe(2);
  });
});
