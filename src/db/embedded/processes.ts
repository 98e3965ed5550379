import { execFileSync } from 'node:child_process';
import { readFileSync, unlinkSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../../shared/log.ts';

/**
 * Leftovers of a cluster whose svc died: a postmaster.pid naming a process that is gone (PostgreSQL replaces such a
 * lock itself), an unrelated process or an unreaped zombie under that pid (the lock is removed), or an orphaned
 * postmaster still running (stopped, then the cluster starts normally and replays its WAL if it has to).
 */
interface ProcInfo {
  ppid: number;
  comm: string;
  /** Exited, not yet reaped (a container's pid 1 may never reap it): as good as gone. */
  zombie: boolean;
}

function procInfo(pid: number): ProcInfo | undefined {
  try {
    if (process.platform === 'linux') {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(close + 2).split(' ');
      return { comm: stat.slice(stat.indexOf('(') + 1, close), ppid: Number(ppid), zombie: state === 'Z' };
    }
    const [ppid, state, ...comm] = execFileSync('ps', ['-o', 'ppid=,state=,comm=', '-p', String(pid)], { encoding: 'utf8' }).trim().split(/\s+/);
    return ppid ? { ppid: Number(ppid), comm: comm.join(' ').split('/').pop()!, zombie: state.startsWith('Z') } : undefined;
  } catch {
    return undefined;
  }
}

export function isPostgres(pid: number): boolean {
  const info = procInfo(pid);
  return info?.comm === 'postgres' && !info.zombie;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return procInfo(pid)?.zombie !== true;
}

/** Waits (bounded) for a process that is not our child to exit; true when it did. */
export async function waitGone(pid: number, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; alive(pid); ) {
    if (Date.now() > deadline) return false;
    await delay(25);
  }
  return true;
}

export function lockPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Makes a lock file (postmaster.pid or the socket's lock) safe to start over; throws when a live svc uses it. */
export async function clearStaleLock(file: string, log: Logger): Promise<void> {
  const pid = lockPid(file);
  if (pid === undefined || pid === process.pid) return;
  const pm = procInfo(pid);
  if (!pm) return;
  if (pm.comm !== 'postgres' || pm.zombie) {
    unlinkSync(file); // PostgreSQL would take that pid for a live owner and refuse to start
    return;
  }
  // Its watchdog's parent is the svc that started it; alive, the cluster is in use (or being stopped by that watchdog).
  const watchdog = pm.ppid > 1 ? procInfo(pm.ppid) : undefined;
  const owner = watchdog && watchdog.ppid > 1 ? watchdog.ppid : undefined;
  if (owner !== undefined && owner !== process.pid && alive(owner)) {
    if (await waitGone(pid, 5000)) return;
    throw new Error(`the embedded PostgreSQL cluster of ${file.replace(/\/[^/]+$/, '')} is in use by another process (pid ${owner}); stop it first, or use another SVC_DATA_DIR`);
  }
  log.warn('stopping an orphaned embedded PostgreSQL', { pid });
  for (const [signal, ms] of [['SIGINT', 15_000], ['SIGQUIT', 5_000], ['SIGKILL', 5_000]] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
    if (await waitGone(pid, ms)) return;
  }
  throw new Error(`an orphaned PostgreSQL (pid ${pid}) does not stop`);
}
