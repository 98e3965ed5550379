import { mkdtempSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../shared/log.ts';
import { alive, isPostgres, lockPid } from './processes.ts';

/**
 * Folders of `DATABASE_URL=memory` clusters: `svc-pg-mem-*` in /dev/shm when it is a roomy tmpfs (memory, so a
 * copy of the template is quick), else in the temporary folder; each with an `owner` file (the pid of the svc
 * process) and the cluster in `data/`. The watchdog removes a folder when its svc stops or dies; a
 * folder whose svc and watchdog were killed together is swept by the next throwaway cluster started on the machine.
 */
const PREFIX = 'svc-pg-mem-';

const TMPFS_MAGIC = 0x01021994;

function parents(): string[] {
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= 1024 ** 3) return ['/dev/shm', tmpdir()];
  } catch {
    // no /dev/shm (macOS)
  }
  return [tmpdir()];
}

export function createThrowawayRoot(): string {
  const root = mkdtempSync(join(parents()[0], PREFIX));
  writeFileSync(join(root, 'owner'), String(process.pid));
  return root;
}

/** Removes the folders of dead owners, stopping their orphaned postmasters first. Best effort, never throws. */
export function sweepThrowaways(log: Logger): void {
  const roots = parents().flatMap((parent) => {
    try {
      return readdirSync(parent).filter((n) => n.startsWith(PREFIX)).map((n) => join(parent, n));
    } catch {
      return [];
    }
  });
  for (const root of roots) {
    const owner = lockPid(join(root, 'owner'));
    if (owner === undefined || alive(owner)) continue; // being set up right now, or in use
    const postmaster = lockPid(join(root, 'data', 'postmaster.pid'));
    try {
      if (postmaster !== undefined && isPostgres(postmaster)) process.kill(postmaster, 'SIGQUIT'); // its data is thrown away anyway
      rmSync(root, { recursive: true, force: true });
      log.debug('removed an orphaned throwaway cluster', { root });
    } catch {
      // another user's folder, or removed meanwhile
    }
  }
}
