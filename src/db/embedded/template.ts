import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binariesFor } from './binaries.ts';
import { PORT } from './layout.ts';
import { handOver, runAs, type OsUser } from './os-user.ts';
import { startPostmaster } from './postmaster.ts';

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
  // PostgreSQL 18 reads through three I/O worker processes by default: for a laptop's small tables plain synchronous
  // reads do as well, and a start has three processes fewer to fork and fault in
  'io_method=sync',
];
const INITDB_ARGS = ['-U', SUPERUSER, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-instructions', '--no-sync', '--wal-segsize=4', ...LAPTOP_SETTINGS.flatMap((s) => ['-c', s])];
// Single-user mode reads one statement per line. Created here, the role and database are in every copy.
const BOOTSTRAP_SQL = [
  `CREATE ROLE ${APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE NOCREATEDB`,
  `CREATE DATABASE ${APP_DATABASE} OWNER ${APP_ROLE}`,
].join('\n');

/**
 * A schema to bake into a template: what svc installs in a new database (its migrations, the job queue's schema),
 * `key` naming it exactly (a hash of that SQL), `install` putting it in through a connection as the app role. A new
 * cluster copied from such a template starts with nothing left to migrate; a changed sql/ is another key, so another
 * template, and a cluster made before the change is migrated at boot as always.
 */
export interface TemplateSchema {
  key: string;
  install(connection: { host: string; port: number; user: string; database: string }): Promise<void>;
}

/** Baked templates kept per machine and user (one per sql/ state: worktrees and branches at once); older ones go. */
const KEEP_BAKED = 4;

/**
 * Returns the template's path, building it first when this machine has none yet (two builders race harmlessly).
 * With `schema`, a copy of that template with the schema installed, baked once per schema key.
 */
export async function ensureTemplate(user: OsUser, schema?: TemplateSchema): Promise<string> {
  const base = await ensureBaseTemplate(user);
  return schema ? ensureBakedTemplate(user, base, schema) : base;
}

async function ensureBaseTemplate(user: OsUser): Promise<string> {
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

/**
 * The base template copied, started on a socket in its own folder (nothing flushed: it is a cache), the schema
 * installed through it, stopped cleanly and renamed into place.
 */
async function ensureBakedTemplate(user: OsUser, base: string, schema: TemplateSchema): Promise<string> {
  const key = createHash('sha256').update(schema.key).digest('hex').slice(0, 12);
  const path = `${base}-${key}`;
  if (usable(path, user)) return path;
  if (Buffer.byteLength(join(tmpdir(), `svc-pg-template-build-XXXXXX/.s.PGSQL.${PORT}`)) > 100) return base; // no socket path that long: migrated at boot instead
  const bin = await binariesFor(user);
  const build = mkdtempSync(join(tmpdir(), 'svc-pg-template-build-'));
  try {
    handOver(user, build);
    await runAs(user, 'cp', ['-R', '-p', `${base}/.`, build]);
    const args = ['-D', build, '-c', 'listen_addresses=', '-c', `unix_socket_directories=${build}`, '-c', 'unix_socket_permissions=0700', '-c', `port=${PORT}`, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'log_min_messages=warning'];
    const pm = startPostmaster({ postgres: bin.postgres, args, user, onLog: () => {} });
    try {
      await pm.ready;
      await schema.install({ host: build, port: PORT, user: APP_ROLE, database: APP_DATABASE });
    } finally {
      pm.requestStop();
      await pm.exited;
    }
    try {
      renameSync(build, path);
    } catch {
      if (!usable(path, user)) throw new Error(`cannot create the PostgreSQL template at ${path}`); // else another process won the race
    }
    pruneBaked(base);
    return path;
  } finally {
    rmSync(build, { recursive: true, force: true });
  }
}

/** Keeps the newest KEEP_BAKED templates baked from `base` (about 40 MB each). Best effort. */
function pruneBaked(base: string): void {
  try {
    const dir = join(base, '..');
    const prefix = `${base.slice(dir.length + 1)}-`;
    const baked = readdirSync(dir)
      .filter((n) => n.startsWith(prefix))
      .map((n) => ({ path: join(dir, n), mtime: lstatSync(join(dir, n)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime);
    for (const old of baked.slice(KEEP_BAKED)) rmSync(old.path, { recursive: true, force: true });
  } catch {
    // another process pruned meanwhile, or a folder we may not remove
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
