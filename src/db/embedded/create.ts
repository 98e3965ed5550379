import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { open, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../../shared/log.ts';
import { handOver, runAs, type OsUser } from './os-user.ts';
import { clearStaleLock } from './processes.ts';
import { ensureTemplate, type TemplateSchema } from './template.ts';

/** In a new cluster until it is flushed to disk: a cluster that still has it was never served from (see below). */
const UNFLUSHED = '.svc-unflushed';

/**
 * The first boot of a data folder: the cluster is a copy of the template, made in a staging folder and renamed into
 * place, so a boot killed half-way leaves no half-made cluster. A later boot finds PG_VERSION and checks that the
 * cluster was made by the same major version of PostgreSQL as the one svc ships. `schema` (asked for only here, on a
 * first boot) names what to bake into the template, so the new cluster has it already.
 *
 * The copy is flushed to disk while PostgreSQL and svc start (`flushed`; the server serves nothing before it settles):
 * until then the cluster holds a marker, made durable before the rename, and a boot that finds it (the machine went
 * down during a first boot) makes the cluster again, which loses nothing anyone was answered about.
 */
export async function createPersistentCluster(
  dir: string,
  user: OsUser,
  packageVersion: string,
  log: Logger,
  schema?: () => Promise<TemplateSchema>,
): Promise<{ flushed: Promise<void> }> {
  const major = packageVersion.split('.')[0];
  if (existsSync(join(dir, UNFLUSHED))) {
    log.warn('the first boot of the embedded cluster ended before it was on disk; making it again', { dir });
    await clearStaleLock(join(dir, 'postmaster.pid'), log);
    rmSync(dir, { recursive: true, force: true });
  }
  if (existsSync(join(dir, 'PG_VERSION'))) {
    const made = readFileSync(join(dir, 'PG_VERSION'), 'utf8').trim();
    if (made !== major) {
      throw new Error(`the embedded cluster in ${dir} was made by PostgreSQL ${made} and svc ships PostgreSQL ${major}: dump it with pg_dump (svc db url) and restore it into a new data folder`);
    }
    return { flushed: Promise.resolve() };
  }
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} is not empty and holds no PostgreSQL cluster; move it away`);
  for (const name of readdirSync(dirname(dir)).filter((n) => n.startsWith('.pg-new-'))) rmSync(join(dirname(dir), name), { recursive: true, force: true }); // a first boot killed half-way
  const template = await ensureTemplate(user, await schema?.());
  const staging = mkdtempSync(join(dirname(dir), '.pg-new-'));
  try {
    handOver(user, staging);
    await runAs(user, 'cp', ['-R', '-p', `${template}/.`, staging]);
    writeFileSync(join(staging, UNFLUSHED), '');
    await syncPaths([join(staging, UNFLUSHED), staging]);
    rmSync(dir, { recursive: true, force: true }); // an empty folder made by hand
    renameSync(staging, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  log.info('created the embedded PostgreSQL cluster', { dir });
  const flushed = (async () => {
    await syncTree(dir);
    unlinkSync(join(dir, UNFLUSHED));
    await syncPaths([dir]);
  })();
  flushed.catch(() => {}); // awaited by the server before it serves
  return { flushed };
}

/**
 * The template is made without fsync (it is a cache); a cluster that keeps data is flushed to disk once: on Linux by
 * one syncfs(2) of its file system (`sync --file-system`, as PostgreSQL's recovery_init_sync_method=syncfs does), which
 * spares svc's event loop the ~5,000 file operations of flushing it file by file (the way taken elsewhere).
 */
async function syncTree(dir: string): Promise<void> {
  if (process.platform === 'linux' && (await syncFileSystem(dir))) return;
  const list = () => readdir(dir, { withFileTypes: true, recursive: true });
  const entries = await list().catch(list); // a folder PostgreSQL removed while it was read: read again
  await syncPaths([dir, ...entries.map((e) => join(e.parentPath, e.name))]);
}

function syncFileSystem(dir: string): Promise<boolean> {
  return new Promise((resolve) => execFile('sync', ['--file-system', dir], { timeout: 120_000 }, (err) => resolve(!err)));
}

/** fsync, 64 at a time; a file removed meanwhile (PostgreSQL runs in the cluster by then, and flushes its own) is skipped. */
async function syncPaths(paths: string[]): Promise<void> {
  for (let i = 0; i < paths.length; i += 64) {
    await Promise.all(
      paths.slice(i, i + 64).map(async (p) => {
        const fh = await open(p, 'r').catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT' || err.code === 'ENXIO') return undefined; // removed meanwhile, or PostgreSQL's socket
          throw err;
        });
        if (!fh) return;
        try {
          await fh.sync();
        } finally {
          await fh.close();
        }
      }),
    );
  }
}
