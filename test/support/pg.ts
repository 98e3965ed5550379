import postgres from 'postgres';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { connectionOf } from '../../src/db/database.ts';

/**
 * The PostgreSQL server of the storage half of the suite: 127.0.0.1:5432 (trust auth in CI), or, when none answers,
 * an embedded cluster that global-setup.ts starts to stand in for it. Each call creates a fresh database owned by an
 * unprivileged role, so RLS applies exactly as in production.
 */
export const DEFAULT_ADMIN_URL = process.env.SVC_TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const APP_ROLE = 'svc_test_app';

/** The superuser URL of the server the suite uses (global setup decides it); outside vitest (benchmarks) the default. */
export function adminUrl(): string {
  try {
    return inject('pgAdminUrl');
  } catch {
    return DEFAULT_ADMIN_URL;
  }
}

/** Connects with a URL in either form: host and port, or libpq's `?host=/socket/folder` (the embedded cluster). */
export function connect(url: string, options: postgres.Options<Record<string, never>> = {}) {
  const c = connectionOf(url);
  return typeof c === 'string' ? postgres(c, { onnotice: () => {}, ...options }) : postgres({ ...c, onnotice: () => {}, ...options });
}

/** The same server as another role and database. */
export function urlAs(url: string, user: string, database: string): string {
  const u = new URL(url);
  if (u.searchParams.has('host')) u.searchParams.set('user', user);
  else u.username = user;
  u.pathname = `/${database}`;
  return u.toString();
}

export async function answers(url: string): Promise<boolean> {
  const sql = connect(url, { max: 1, connect_timeout: 3 });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

/** Creates `svc_t_<random>` owned by the unprivileged test role; returns its URL and a drop function. */
export async function createTestDatabase(): Promise<{ url: string; adminUrl: string; name: string; drop(): Promise<void> }> {
  const admin = adminUrl();
  const sql = connect(admin, { max: 1 });
  const name = `svc_t_${randomBytes(6).toString('hex')}`;
  try {
    await sql.unsafe(`DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${APP_ROLE}') THEN
        CREATE ROLE ${APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS;
      END IF; END $$`).catch((err) => {
      if (!/already exists/.test(String(err))) throw err; // two test files racing to create the role
    });
    await sql.unsafe(`CREATE DATABASE ${name} OWNER ${APP_ROLE}`);
  } finally {
    await sql.end({ timeout: 1 });
  }
  const adminUser = new URL(admin).searchParams.get('user') ?? new URL(admin).username;
  return {
    url: urlAs(admin, APP_ROLE, name),
    adminUrl: urlAs(admin, adminUser, name),
    name,
    async drop() {
      const sql = connect(admin, { max: 1 });
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await sql.end({ timeout: 1 });
      }
    },
  };
}
