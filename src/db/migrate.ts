import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { SQL_DIR } from '../shared/package-root.ts';
import type { Database } from './database.ts';

/**
 * Forward-only SQL migrations from sql/NNNN_name.sql. Each run takes a transaction-scoped advisory lock, so two
 * processes migrating at once serialize; every applied file is recorded in the same transaction, so a second run
 * applies nothing.
 */
const LOCK_KEY = 727_001;

export interface Migration {
  name: string;
  text: string;
}

function migrationNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
}

export function loadMigrations(dir = SQL_DIR): Migration[] {
  return migrationNames(dir).map((name) => ({ name, text: readFileSync(join(dir, name), 'utf8') }));
}

/** The migrations recorded as applied; undefined on a database never migrated. */
async function appliedNames(database: Database): Promise<Set<string> | undefined> {
  try {
    const { rows } = await sql<{ name: string }>`SELECT name FROM svc_migrations`.execute(database.db);
    return new Set(rows.map((r) => r.name));
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') return undefined; // undefined_table
    throw err;
  }
}

/**
 * Applies pending migrations; returns the names applied by this call. Without `migrations` (those of sql/), a database
 * that has every one of them is found by one read, without the lock or reading a file (a restart).
 */
export async function migrate(database: Database, migrations?: Migration[]): Promise<string[]> {
  if (!migrations) {
    const names = migrationNames(SQL_DIR);
    const done = await appliedNames(database);
    if (done && names.every((n) => done.has(n))) return [];
    migrations = loadMigrations();
  }
  const pending = migrations;
  const applied: string[] = [];
  await database.execLocked(LOCK_KEY, async (exec, query) => {
    await exec(`CREATE TABLE IF NOT EXISTS svc_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await query<{ name: string }>('SELECT name FROM svc_migrations')).map((r) => r.name));
    for (const m of pending) {
      if (done.has(m.name)) continue;
      await exec(m.text);
      await query('INSERT INTO svc_migrations (name) VALUES ($1)', [m.name]);
      applied.push(m.name);
    }
  });
  return applied;
}
