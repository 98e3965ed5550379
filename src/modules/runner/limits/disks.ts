import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';

/**
 * The disk of a session's scratch folder (`/work`): a filesystem of its own, `diskMiB` in size, so writing past it
 * fails with ENOSPC inside the sandbox and can never fill the host. It is an ext4 image (mkfs.ext4 from e2fsprogs)
 * loop-mounted (mount from util-linux) as root; the image is a sparse file in the runner's data folder
 * (`disks/<hash>.img`), so the host's free space drops by at most its size. It outlives the runner's process: a runner
 * that restarts on the same data folder mounts a session's image again, files and all (as it finds a session folder
 * again without limits); it is deleted when the session is released.
 *
 * Mount points live in a folder of their own outside the data folder, so a runner that dies without unmounting (a
 * SIGKILL) leaves no mount inside a folder someone removes; a small watcher process (it waits on a pipe from the
 * runner, so it sees the runner's end however it comes) unmounts them lazily then.
 */
export interface SessionDisks {
  /** The folder where the session's disk is mounted, once `prepare` made it; the session's `/work` is below it. */
  root: string;
  mountOf(sessionId: string): string | undefined;
  /** Makes and mounts the session's disk (once; later calls wait for the first). */
  prepare(sessionId: string, diskMiB: number): Promise<string>;
  /** True when the session's disk is (nearly) full: a failed write there was the disk limit. */
  full(sessionId: string): Promise<boolean>;
  release(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

const run = (file: string, args: string[]) =>
  new Promise<void>((resolve, reject) => {
    execFile(file, args, { env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C' } }, (err, _out, stderr) => (err ? reject(new Error(`${file} ${args[0]}: ${stderr.trim() || err.message}`)) : resolve()));
  });

const key = (sessionId: string) => createHash('sha256').update(sessionId).digest('hex').slice(0, 24);

/** Unmounts every mount below `root` when the runner's end of stdin closes, then removes `root`. */
const WATCH = 'cat >/dev/null; awk -v r="$1/" \'index($2, r) == 1 { print $2 }\' /proc/self/mounts | sort -r | while read -r m; do umount -l "$m"; done; rm -rf "$1"';

export function createSessionDisks(o: { dataDir: string; mkfs: string; mount: string; umount: string }): SessionDisks {
  const root = mkdtempSync(join(tmpdir(), 'svc-disks-'));
  const imageDir = join(o.dataDir, 'disks');
  const made = new Map<string, Promise<string>>();
  const mounted = new Map<string, string>();
  const images = new Map<string, string>();
  let watcher: ChildProcess | undefined = spawn('/bin/sh', ['-c', WATCH, 'svc-disk-watch', root], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  watcher.unref();
  (watcher.stdin as unknown as Socket).unref();

  async function make(sessionId: string, diskMiB: number): Promise<string> {
    const k = key(sessionId);
    const mountPoint = join(root, k);
    const image = join(imageDir, `${k}.img`);
    mkdirSync(imageDir, { recursive: true, mode: 0o700 });
    mkdirSync(mountPoint, { mode: 0o700 });
    // an image left by this runner's previous process (a restart on the same data folder) holds the session's files
    const fresh = !existsSync(image);
    if (fresh) {
      const fd = openSync(image, 'w', 0o600);
      try {
        ftruncateSync(fd, diskMiB * 1024 * 1024);
      } finally {
        closeSync(fd);
      }
    }
    try {
      if (fresh) {
        const owner = `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`;
        await run(o.mkfs, ['-q', '-F', '-m', '0', '-O', '^has_journal', '-E', `lazy_itable_init=1,root_owner=${owner}`, image]);
      }
      await run(o.mount, ['-o', 'loop,nosuid,nodev', image, mountPoint]);
    } catch (err) {
      if (fresh) rmSync(image, { force: true });
      throw err;
    }
    mounted.set(sessionId, mountPoint);
    images.set(sessionId, image);
    return mountPoint;
  }

  /** Unmounts the session's disk; `keep` leaves its image for the next process (the runner stops, the session lives on). */
  async function unmount(sessionId: string, keep: boolean): Promise<void> {
    const pending = made.get(sessionId);
    made.delete(sessionId);
    if (!pending) return;
    await pending.catch(() => undefined);
    const mountPoint = mounted.get(sessionId);
    const image = images.get(sessionId);
    mounted.delete(sessionId);
    images.delete(sessionId);
    if (!mountPoint) return;
    // lazily: a process that still has a file open there (a worker being stopped) keeps it until it lets go; the
    // loop device holds the image open until then, so removing it now frees its space at that moment
    await run(o.umount, ['-l', mountPoint]).catch(() => undefined);
    rmSync(mountPoint, { recursive: true, force: true });
    if (!keep && image) rmSync(image, { force: true });
  }
  const release = (sessionId: string) => unmount(sessionId, false);

  return {
    root,
    mountOf: (sessionId) => mounted.get(sessionId),
    prepare(sessionId, diskMiB) {
      let p = made.get(sessionId);
      if (!p) {
        p = make(sessionId, diskMiB);
        made.set(sessionId, p);
        p.catch(() => made.get(sessionId) === p && made.delete(sessionId));
      }
      return p;
    },
    async full(sessionId) {
      const mountPoint = mounted.get(sessionId);
      if (!mountPoint) return false;
      const s = await statfs(mountPoint);
      return s.bavail * s.bsize < 1024 * 1024;
    },
    release,
    async close() {
      await Promise.all([...made.keys()].map((id) => unmount(id, true)));
      watcher?.stdin?.end();
      watcher = undefined;
      if (existsSync(root)) rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Whether this host can give sessions disks of their own: root, the tools, a loop device; tried once for real. */
export async function probeDisks(o: { mkfs?: string; mount?: string; umount?: string }): Promise<{ ok: true } | { ok: false; why: string }> {
  if (process.getuid?.() !== 0) return { ok: false, why: 'loop-mounted session disks need the runner to run as root' };
  if (!o.mkfs) return { ok: false, why: 'mkfs.ext4 is not installed (Debian: e2fsprogs)' };
  if (!o.mount || !o.umount) return { ok: false, why: 'mount/umount are not installed (util-linux)' };
  if (!existsSync('/dev/loop-control')) return { ok: false, why: 'no loop devices (/dev/loop-control is absent)' };
  const scratch = mkdtempSync(join(tmpdir(), 'svc-disk-probe-'));
  const disks = createSessionDisks({ dataDir: scratch, mkfs: o.mkfs, mount: o.mount, umount: o.umount });
  try {
    await disks.prepare('probe', 16);
    return { ok: true };
  } catch (err) {
    return { ok: false, why: `a loop-mounted ext4 image could not be made here: ${(err as Error).message}` };
  } finally {
    await disks.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
