import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

export function loadMigrations(dir = SQL_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, text: readFileSync(join(dir, name), 'utf8') }));
}

/** Applies pending migrations; returns the names applied by this call. */
export async function migrate(database: Database, migrations = loadMigrations()): Promise<string[]> {
  const applied: string[] = [];
  await database.execLocked(LOCK_KEY, async (exec, query) => {
    await exec(`CREATE TABLE IF NOT EXISTS svc_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await query<{ name: string }>('SELECT name FROM svc_migrations')).map((r) => r.name));
    for (const m of migrations) {
      if (done.has(m.name)) continue;
      await exec(m.text);
      await query('INSERT INTO svc_migrations (name) VALUES ($1)', [m.name]);
      applied.push(m.name);
    }
  });
  return applied;
}
