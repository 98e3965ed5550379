import { readFileSync } from 'node:fs';

/**
 * The kernel's control groups as the runner uses them: a subtree of its own (under the cgroup the runner itself runs
 * in, as a delegated subtree would be) with a CPU cap on all of it, a group per tenant inside it (each with the same
 * CPU weight, so one tenant's many sessions together weigh as much as any other tenant), a group per session inside
 * that, and a group per command or sandbox worker inside the session's. One interface, two hierarchies: cgroup v2 (one unified tree: memory.max, pids.max, cpu.max,
 * cgroup.kill) and cgroup v1 (a tree per controller: memory with memsw, pids, cpu's CFS quota, cpuacct for usage).
 * A process joins a group by writing its pid to each `cgroup.procs` before it execs the program (limiter.ts), so
 * nothing it starts runs outside. The drivers: cgroup-v1.ts and cgroup-v2.ts, sharing cgroup-tree.ts.
 */
export type CgroupVersion = 'cgroup-v1' | 'cgroup-v2';

export interface GroupLimits {
  memoryBytes?: number;
  pids?: number;
  cpus?: number;
  /** CPU weight against the group's siblings, on cgroup v2's scale (1-10000, 100 the kernel's default; v1 cpu.shares = weight × 1024 / 100). */
  cpuWeight?: number;
}

export interface GroupStats {
  /** Processes the kernel's OOM killer ended in this group. */
  oomKills: number;
  /** Forks refused at pids.max. */
  pidsRefused: number;
  cpuNs: number | undefined;
  memoryPeakBytes: number | undefined;
  pidsPeak: number | undefined;
}

export interface Group {
  readonly path: string;
  /** The files a process writes its pid to, to join this group (one per hierarchy). */
  readonly procsFiles: string[];
  pids(): number[];
  /** Ends every process of the group at once (v2 cgroup.kill; v1: SIGKILL to each until none is left). */
  kill(): Promise<void>;
  stats(): GroupStats;
  /** Removes the group once its processes are gone (kills what is left first). */
  remove(): Promise<void>;
}

export interface CgroupDriver {
  version: CgroupVersion;
  /** Where the runner's subtree lives, for reports. */
  where: string;
  has: { memory: boolean; swap: boolean; pids: boolean; cpu: boolean; cpuUsage: boolean; kill: boolean };
  /** Why a controller is absent (`memory: …`), one line each. */
  absent: string[];
  /** A group at `rel` below the runner's subtree (created, limits written); parents must exist. */
  group(rel: string[], limits: GroupLimits): Group;
  /** Limits on the runner's whole subtree (`cpus`: all its groups together; `cpuWeight`: against the runner's own processes). */
  limitSubtree(limits: Pick<GroupLimits, 'cpus' | 'cpuWeight'>): void;
  /** The runner's subtree and everything left in it. */
  close(): Promise<void>;
}

export interface CgroupMount {
  version: 1 | 2;
  /** Where it is mounted. */
  dir: string;
  /** The path of the mount's root inside its hierarchy (`/` unless a container mounts part of it). */
  root: string;
  /** v1: the controllers of this hierarchy (`memory`, `cpu`, `cpuacct`…); v2: none listed here. */
  controllers: string[];
}

/** The cgroup mounts of this process's mount namespace (/proc/self/mountinfo). */
export function cgroupMounts(mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')): CgroupMount[] {
  const out: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [pre, post] = line.split(' - ');
    if (!post) continue;
    const f = pre.split(' ');
    const [fstype, , superOpts = ''] = post.split(' ');
    const dir = f[4].replace(/\\040/g, ' ');
    if (fstype === 'cgroup2') out.push({ version: 2, dir, root: f[3], controllers: [] });
    else if (fstype === 'cgroup') out.push({ version: 1, dir, root: f[3], controllers: superOpts.split(',').filter((o) => !['rw', 'ro'].includes(o) && !o.includes('=')) });
  }
  return out;
}

/** This process's cgroup per v1 controller, and its v2 cgroup under key `''` (/proc/self/cgroup). */
export function ownCgroups(text = readFileSync('/proc/self/cgroup', 'utf8')): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === '') out.set('', m[2]);
    else for (const c of m[1].split(',')) out.set(c, m[2]);
  }
  return out;
}

export { cgroupV1 } from './cgroup-v1.ts';
export { cgroupV2 } from './cgroup-v2.ts';
