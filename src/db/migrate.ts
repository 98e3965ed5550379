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

/** Whether every migration of sql/ is recorded as applied (false on a database never migrated). */
async function upToDate(database: Database): Promise<boolean> {
  let rows: Array<{ name: string }>;
  try {
    ({ rows } = await sql<{ name: string }>`SELECT name FROM svc_migrations`.execute(database.db));
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') return false; // undefined_table
    throw err;
  }
  const done = new Set(rows.map((r) => r.name));
  return migrationNames(SQL_DIR).every((n) => done.has(n));
}

/**
 * Applies pending migrations; returns the names applied by this call. Without `migrations` (those of sql/), a database
 * that has every one of them is found by one read, without the lock or reading a file (a restart).
 */
export async function migrate(database: Database, migrations?: Migration[]): Promise<string[]> {
  if (!migrations && (await upToDate(database))) return [];
  const pending = migrations ?? loadMigrations();
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
