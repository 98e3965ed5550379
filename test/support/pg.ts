import postgres from 'postgres';
import { randomBytes } from 'node:crypto';

/**
 * The real PostgreSQL server for the storage half of the suite (127.0.0.1:5432, trust auth in CI). Each call creates
 * a fresh database owned by an unprivileged role, so RLS applies exactly as in production.
 */
export const ADMIN_URL = process.env.SVC_TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const APP_ROLE = 'svc_test_app';

let available: boolean | undefined;

export async function pgAvailable(): Promise<boolean> {
  if (available !== undefined) return available;
  const sql = postgres(ADMIN_URL, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    available = true;
  } catch {
    available = false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
  return available;
}

/** Creates `svc_t_<random>` owned by the unprivileged test role; returns its URL and a drop function. */
export async function createTestDatabase(): Promise<{ url: string; adminUrl: string; name: string; drop(): Promise<void> }> {
  const sql = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
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
  const base = new URL(ADMIN_URL);
  const url = `postgres://${APP_ROLE}@${base.host}/${name}`;
  const adminUrl = `postgres://${base.username}@${base.host}/${name}`;
  return {
    url,
    adminUrl,
    name,
    async drop() {
      const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.end({ timeout: 1 });
      }
    },
  };
}
