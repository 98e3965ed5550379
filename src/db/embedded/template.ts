import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binariesFor } from './binaries.ts';
import { handOver, runAs, type OsUser } from './os-user.ts';

/**
 * A freshly initialised cluster, made once per machine, cluster user and PostgreSQL package and kept in the
 * temporary folder: every new cluster (a `DATABASE_URL=memory` instance, or the first boot of a data folder) is a
 * copy of it, which takes a fraction of initdb's time. It already holds the app role and its database.
 */
export const SUPERUSER = 'postgres';
export const APP_ROLE = 'svc_app';
export const APP_DATABASE = 'svc';

/**
 * Laptop-sized defaults, written into the template's postgresql.conf (so an operator edits them there, or overrides
 * them with SVC_PG_SETTINGS). PostgreSQL's own defaults assume a dedicated server.
 */
const LAPTOP_SETTINGS = [
  'shared_buffers=32MB',
  'max_connections=40',
  'max_worker_processes=4',
  'max_parallel_workers=2',
  'autovacuum_max_workers=2',
  'min_wal_size=32MB',
  'max_wal_size=256MB',
  'jit=off',
  'huge_pages=off',
];
const INITDB_ARGS = ['-U', SUPERUSER, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-instructions', '--no-sync', '--wal-segsize=4', ...LAPTOP_SETTINGS.flatMap((s) => ['-c', s])];
// Single-user mode reads one statement per line. Created here, the role and database are in every copy.
const BOOTSTRAP_SQL = [
  `CREATE ROLE ${APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE NOCREATEDB`,
  `CREATE DATABASE ${APP_DATABASE} OWNER ${APP_ROLE}`,
].join('\n');

/** Returns the template's path, building it first when this machine has none yet (two builders race harmlessly). */
export async function ensureTemplate(user: OsUser): Promise<string> {
  const bin = await binariesFor(user);
  const key = createHash('sha256').update([bin.version, ...INITDB_ARGS, BOOTSTRAP_SQL].join('\0')).digest('hex').slice(0, 12);
  const path = join(tmpdir(), `svc-pg-template-${key}-${user.uid ?? process.getuid?.() ?? 0}`);
  if (usable(path, user)) return path;
  const build = mkdtempSync(join(tmpdir(), 'svc-pg-template-build-'));
  try {
    handOver(user, build);
    await runAs(user, bin.initdb, ['-D', build, ...INITDB_ARGS]);
    const out = await runAs(user, bin.postgres, ['--single', '-D', build, '-F', '-c', 'log_min_messages=warning', 'postgres'], BOOTSTRAP_SQL + '\n');
    if (/\bERROR:/.test(out)) throw new Error(`bootstrapping the template cluster failed: ${out.trim()}`);
    try {
      renameSync(build, path);
    } catch {
      if (!usable(path, user)) throw new Error(`cannot create the PostgreSQL template at ${path}`); // else another process won the race
    }
    return path;
  } finally {
    rmSync(build, { recursive: true, force: true });
  }
}

/** The template is trusted only when it is a real folder of the cluster user that nobody else can write. */
function usable(path: string, user: OsUser): boolean {
  try {
    const st = lstatSync(path);
    const owner = user.uid ?? process.getuid?.();
    return st.isDirectory() && (owner === undefined || st.uid === owner) && (st.mode & 0o077) === 0 && lstatSync(join(path, 'PG_VERSION')).isFile();
  } catch {
    return false;
  }
}
