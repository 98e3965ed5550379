import postgres from 'postgres';
import { connectionOf } from './database.ts';

/**
 * `svc db init` on a server, as a superuser: the app role (LOGIN, no SUPERUSER, no BYPASSRLS: row-level security must
 * hold for it) with this password, and a database it owns. Safe to run again: an existing role gets the password and
 * the attributes, an existing database is left as it is. `role` and `database` are checked identifiers.
 */
export async function provisionAppRole(adminUrl: string, opts: { role: string; database: string; password: string }): Promise<void> {
  const admin = connectionOf(adminUrl);
  const sql = typeof admin === 'string' ? postgres(admin, { max: 1, onnotice: () => {} }) : postgres({ ...admin, max: 1, onnotice: () => {} });
  const password = opts.password.replace(/'/g, "''");
  try {
    const [role] = await sql`select 1 from pg_roles where rolname = ${opts.role}`;
    if (role) await sql.unsafe(`ALTER ROLE ${opts.role} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD '${password}'`);
    else await sql.unsafe(`CREATE ROLE ${opts.role} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE NOCREATEDB PASSWORD '${password}'`);
    const [db] = await sql`select 1 from pg_database where datname = ${opts.database}`;
    if (!db) await sql.unsafe(`CREATE DATABASE ${opts.database} OWNER ${opts.role}`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
