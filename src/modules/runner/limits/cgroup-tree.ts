import { readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CgroupMount } from './cgroups.ts';

/**
 * What both cgroup drivers (cgroup-v1.ts, cgroup-v2.ts) do the same way: CPU limits in the kernel's units, reading a
 * group's files, killing its processes, removing a subtree bottom-up, and sweeping the subtrees of runners that died.
 */
export const CPU_PERIOD_US = 100_000;
export const quotaUs = (cpus: number) => Math.max(1000, Math.round(cpus * CPU_PERIOD_US));
/** cgroup v2's cpu.weight (1-10000) as v1's cpu.shares (2-262144): the defaults 100 and 1024 match. */
export const shares = (weight: number) => Math.min(262144, Math.max(2, Math.round((weight * 1024) / 100)));
export const weightOf = (weight: number) => Math.min(10000, Math.max(1, Math.round(weight)));

/** The host folder of `own` (a path in the hierarchy) under a mount whose root is `mount.root`. */
export function under(mount: CgroupMount, own: string): string {
  const rel = mount.root !== '/' && own.startsWith(mount.root) ? own.slice(mount.root.length) : own;
  return join(mount.dir, rel);
}

export const readNum = (file: string): number | undefined => {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
};

/** `key value` lines (memory.events, pids.events, memory.oom_control, cpu.stat). */
export const readKeyed = (file: string): Record<string, number> => {
  const out: Record<string, number> = {};
  try {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const [k, v] = line.trim().split(/\s+/);
      if (k && v !== undefined) out[k] = Number(v);
    }
  } catch {
    // gone or absent
  }
  return out;
};

export const readPids = (file: string): number[] => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

export const settle = () => new Promise((r) => setTimeout(r, 10));

/** Kills every process listed until none is left: new ones forked meanwhile are caught by the next round. */
export async function killListed(procs: string): Promise<void> {
  for (let round = 0; round < 200; round++) {
    const pids = readPids(procs);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await settle();
  }
}

/** rmdir, retried while the group's last processes are still exiting. */
async function removeDir(dir: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      rmdirSync(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY') throw err;
      await settle();
    }
  }
}

/** Removes a subtree bottom-up (cgroup folders hold only the kernel's files, which rmdir takes with them). */
export async function removeTree(dir: string, kill: (dir: string) => Promise<void>): Promise<void> {
  let children: string[] = [];
  try {
    children = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    return;
  }
  for (const c of children) await removeTree(join(dir, c), kill);
  await kill(dir);
  await removeDir(dir);
}

/** Subtrees a runner that died without closing left beside `name` (`svc-<hash>-<pid>-<n>`, the pid gone): removed. */
export async function sweepStale(parents: string[]): Promise<void> {
  for (const parent of new Set(parents)) {
    let names: string[] = [];
    try {
      names = readdirSync(parent);
    } catch {
      continue;
    }
    for (const n of names) {
      const pid = Number(/^svc-[0-9a-f]+-(\d+)-\d+(-self)?$/.exec(n)?.[1]);
      if (!pid || pid === process.pid) continue;
      try {
        process.kill(pid, 0);
        continue; // its runner lives
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') continue;
      }
      await removeTree(join(parent, n), async (dir) => killListed(join(dir, 'cgroup.procs'))).catch(() => undefined);
    }
  }
}
