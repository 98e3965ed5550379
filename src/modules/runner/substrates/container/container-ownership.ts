import { chownSync, lstatSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ContainerConfig } from '../../../../config/config.ts';
import type { WorkerLaunch } from '../substrate.ts';
import { engineMounts } from './container-spec.ts';

/**
 * Who owns what a container session is given. The container's users are not root (the worker's, and uid+1:gid+1 for
 * its commands), and bind mounts keep the host's owners, so a root runner hands the worker its folder and callback
 * socket, and the command user the session's files, before each start. A runner that is not root leaves them as
 * they are (run it with SVC_WORKER_USER matching the owner of its data folder, or as root).
 */
const CHOWN_MAX = 10_000;

/** Gives `path` and what lies below it to uid:gid (a root runner: the container's users are not root). */
function chownTree(path: string, uid: number, gid: number, budget = { left: CHOWN_MAX }): void {
  if (budget.left-- <= 0) return;
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  if (st.isSymbolicLink()) return;
  if (st.uid !== uid || st.gid !== gid) chownSync(path, uid, gid);
  if (st.isDirectory()) for (const name of readdirSync(path)) chownTree(join(path, name), uid, gid, budget);
}

export function giveOwnership(l: WorkerLaunch, config: ContainerConfig): void {
  if (process.getuid?.() !== 0) return;
  chownTree(l.sessionDir, config.uid, config.gid);
  chownSync(dirname(l.callbackSocket), config.uid, config.gid);
  chownSync(l.callbackSocket, config.uid, config.gid);
  for (const m of engineMounts(l.files)) if (m.Type === 'bind') chownTree(m.Source as string, config.uid + 1, config.gid + 1);
}
