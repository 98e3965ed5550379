import { existsSync, lstatSync, mkdirSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { constants } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../../shared/log.ts';
import { binariesFor } from './binaries.ts';
import { createPersistentCluster } from './create.ts';
import { clusterDir, PORT, socketDirFor, socketUrl } from './layout.ts';
import { assertReachable, clusterUser, handOver, runAs, type OsUser } from './os-user.ts';
import { startPostmaster, type Postmaster } from './postmaster.ts';
import { clearStaleLock, lockPid } from './processes.ts';
import { APP_DATABASE, APP_ROLE, ensureTemplate, type TemplateSchema } from './template.ts';
import { createThrowawayRoot, sweepThrowaways } from './throwaway.ts';

/**
 * Real PostgreSQL as svc's embedded database: a child process (under a watchdog) on a cluster in
 * `<SVC_DATA_DIR>/pg`, or on a throwaway copy of the template for `DATABASE_URL=memory`. Stopped with svc. When it
 * dies under a running svc, a cluster on disk is restarted (it flushes every commit, so crash recovery finds all of
 * them); a throwaway one is not (see `lost`).
 */
export interface EmbeddedOptions {
  /** The data folder (cluster in `<dataDir>/pg`); undefined for a throwaway cluster. */
  dataDir: string | undefined;
  /** The OS user to run PostgreSQL as when svc is root (SVC_PG_OS_USER). */
  osUser: string;
  /** `name=value` settings that override the cluster's postgresql.conf (SVC_PG_SETTINGS). */
  settings: readonly string[];
  /**
   * The schema a new cluster should start with (baked into the template it is copied from); asked for only when a
   * cluster is created, never on a restart.
   */
  schema?: () => Promise<TemplateSchema>;
  /**
   * Called once the first postmaster is spawned, or as soon as a new cluster must be made first (longer than loading
   * svc's modules): `svc serve` waits for it, then loads its modules while PostgreSQL boots.
   */
  onLaunch?(): void;
  log: Logger;
}

export interface EmbeddedCluster {
  dir: string;
  /** postgres.js connection options for a role and database (default: the app role on the app database). */
  connection(user?: string, database?: string): { host: string; port: number; user: string; database: string };
  url(user?: string, database?: string): string;
  /**
   * Settles once a cluster made by this start is flushed to disk (at once for any other): the server serves nothing
   * before (createPersistentCluster).
   */
  durable: Promise<void>;
  /** The running postmaster's pid (tests and benchmarks look at its processes). */
  pid(): number | undefined;
  /**
   * Aborted, with an Error naming the cause as its reason, when a throwaway cluster's PostgreSQL exits on its own.
   * Such a cluster flushes nothing (THROWAWAY_SETTINGS): crash recovery would come back without commits svc already
   * answered for (runs answered 202, events clients saw), so it is never restarted and whoever opened it must stop.
   * Never aborted for a cluster on disk.
   */
  lost: AbortSignal;
  stop(): Promise<void>;
}

// A throwaway cluster keeps nothing across a crash, so it skips every flush to disk. With synchronous_commit off a
// commit returns before its WAL leaves PostgreSQL's shared memory: a killed postmaster (not only a crashed machine)
// takes the last commits with it, which is why such a cluster is never restarted (`lost`).
const THROWAWAY_SETTINGS = ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off'];
const RETRYABLE = /pre-existing shared memory block|lock file .* already exists|could not bind|could not create lock file/;

export async function startCluster(opts: EmbeddedOptions): Promise<EmbeddedCluster> {
  const { log } = opts;
  // Made first, before anything awaits: other parts of svc create the data folder 0700, which the cluster user
  // could not walk through.
  if (opts.dataDir !== undefined) mkdirSync(opts.dataDir, { recursive: true });
  const user = clusterUser(opts.osUser);
  const bin = await binariesFor(user);
  let root: string | undefined;
  let dir: string;
  let durable = Promise.resolve();
  let launched = false;
  const onLaunch = () => {
    if (!launched) opts.onLaunch?.();
    launched = true;
  };
  if (opts.dataDir === undefined) {
    onLaunch(); // a copy of the template is made first
    sweepThrowaways(log);
    root = createThrowawayRoot();
    dir = join(root, 'data');
    try {
      handOver(user, root);
      await runAs(user, 'cp', ['-R', '-p', await ensureTemplate(user, await opts.schema?.()), dir]);
    } catch (err) {
      rmSync(root, { recursive: true, force: true });
      throw err;
    }
  } else {
    dir = clusterDir(opts.dataDir);
    assertReachable(user, dir, 'the cluster folder', 'set SVC_DATA_DIR to a folder it can reach, such as /var/lib/svc');
    if (!existsSync(join(dir, 'PG_VERSION'))) onLaunch(); // a first boot: the cluster is made first
    ({ flushed: durable } = await createPersistentCluster(dir, user, bin.version, log, opts.schema));
  }
  const socketDir = socketDirFor(dir);
  if (socketDir !== dir) prepareSocketDir(socketDir, user);
  const args = [
    '-D', dir,
    '-c', 'listen_addresses=',
    '-c', `unix_socket_directories="${socketDir.replace(/"/g, '""')}"`,
    '-c', 'unix_socket_permissions=0700',
    '-c', `port=${PORT}`,
    '-c', 'cluster_name=svc',
    '-c', 'log_min_messages=warning',
    '-c', 'log_checkpoints=off',
    // Crash recovery (after a kill -9 of the postmaster) first flushes the whole cluster: one syncfs, not a fsync per file.
    ...(process.platform === 'linux' ? ['-c', 'recovery_init_sync_method=syncfs'] : []),
    ...(root ? THROWAWAY_SETTINGS : []).flatMap((s) => ['-c', s]),
    ...opts.settings.flatMap((s) => ['-c', s]),
  ];

  async function launch(): Promise<Postmaster> {
    for (let attempt = 1; ; attempt++) {
      await clearStaleLock(join(dir, 'postmaster.pid'), log);
      await clearStaleLock(join(socketDir, `.s.PGSQL.${PORT}.lock`), log);
      const pm = startPostmaster({ postgres: bin.postgres, args, user, removeOnStop: root, onLog: (line) => log.debug(line) });
      onLaunch();
      try {
        await pm.ready;
        return pm;
      } catch (err) {
        // Backends of a postmaster killed a moment ago still hold its shared memory for a few milliseconds.
        if (attempt >= 50 || !RETRYABLE.test(String(err))) throw err;
        await delay(100);
      }
    }
  }

  let stopping = false;
  let current = await launch().catch((err) => {
    if (root) rmSync(root, { recursive: true, force: true });
    throw err;
  });
  let restarting: Promise<void> | undefined;
  const lost = new AbortController();
  const supervise = (pm: Postmaster) =>
    void pm.exited.then(({ code, signal }) => {
      if (stopping) return;
      if (root) {
        lost.abort(new Error(`the throwaway database (DATABASE_URL=memory) stopped unexpectedly (${exitCause(code, signal, pm.tail())}): memory mode keeps nothing across a database crash`));
        // nothing will use its files again: they go now, not only once svc's stop reaches them (stop() removes what a
        // backend still exiting may have left)
        void rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }).catch(() => {});
        return;
      }
      log.error('embedded PostgreSQL exited unexpectedly; restarting it', { code, signal, log: pm.tail() });
      restarting = (async () => {
        for (let attempt = 1; !stopping; attempt++) {
          try {
            current = await launch();
            supervise(current);
            log.warn('embedded PostgreSQL restarted', { attempt });
            return;
          } catch (err) {
            log.error('restarting embedded PostgreSQL failed', { attempt, error: String(err) });
            if (attempt >= 5) return;
            await delay(1000 * attempt, undefined, { ref: false });
          }
        }
      })();
    });
  supervise(current);
  if (root) log.debug('embedded PostgreSQL ready', { dir });
  else log.info('embedded PostgreSQL ready', { dir });

  const connection = (u = APP_ROLE, database = APP_DATABASE) => ({ host: socketDir, port: PORT, user: u, database });
  return {
    dir,
    connection,
    url: (u, database) => socketUrl(socketDir, u, database),
    durable,
    pid: () => lockPid(join(dir, 'postmaster.pid')),
    lost: lost.signal,
    async stop() {
      stopping = true;
      await durable.catch(() => {}); // a first boot stopped at once still leaves its cluster on disk
      await restarting;
      current.requestStop();
      const stopped = await Promise.race([current.exited.then(() => true), delay(20_000, false, { ref: false })]);
      if (!stopped) {
        log.warn('embedded PostgreSQL did not stop in 20 s; killing it');
        const pid = lockPid(join(dir, 'postmaster.pid'));
        if (pid) process.kill(pid, 'SIGQUIT');
        current.child.kill('SIGKILL');
        await current.exited;
      }
      // a backend of a killed postmaster may still be writing as it exits: retry while the folder refills (ENOTEMPTY)
      if (root) rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}

/**
 * Why a postmaster exited, in a few words: the signal that killed it (the watchdog's shell reports a child killed by
 * signal N as status 128+N) and PostgreSQL's own last PANIC, if it logged one (a full disk, say).
 */
function exitCause(code: number | null, signal: NodeJS.Signals | null, tail: string): string {
  const killedBy = signal ?? (code !== null && code > 128 ? Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0] : undefined);
  const how = killedBy ? `PostgreSQL was killed by ${killedBy}` : `PostgreSQL exited with status ${code}`;
  const panic = tail.split('\n').reverse().find((line) => /\bPANIC:/.test(line));
  return panic ? `${how}; ${panic.replace(/^.*?PANIC:\s*/, 'PANIC: ')}` : how;
}

/** A socket folder outside the cluster (long paths): the cluster user's own, never another user's look-alike. */
function prepareSocketDir(path: string, user: OsUser): void {
  if (!existsSync(path)) {
    mkdirSync(path, { mode: 0o700 });
    handOver(user, path);
  }
  const st = lstatSync(path);
  if (!st.isDirectory() || st.uid !== (user.uid ?? process.getuid?.()) || (st.mode & 0o077) !== 0) {
    throw new Error(`the socket folder ${path} of the embedded PostgreSQL is not a private folder of its OS user; remove it`);
  }
}
