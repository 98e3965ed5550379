import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The kernel's control groups as the runner uses them: a subtree of its own (under the cgroup the runner itself runs
 * in, as a delegated subtree would be) with a CPU cap on all of it, a group per tenant inside it (each with the same
 * CPU weight, so one tenant's many sessions together weigh as much as any other tenant), a group per session inside
 * that, and a group per command or sandbox worker inside the session's. One interface, two hierarchies: cgroup v2 (one unified tree: memory.max, pids.max, cpu.max,
 * cgroup.kill) and cgroup v1 (a tree per controller: memory with memsw, pids, cpu's CFS quota, cpuacct for usage).
 * A process joins a group by writing its pid to each `cgroup.procs` before it execs the program (limiter.ts), so
 * nothing it starts runs outside.
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

const CPU_PERIOD_US = 100_000;
const quotaUs = (cpus: number) => Math.max(1000, Math.round(cpus * CPU_PERIOD_US));
/** cgroup v2's cpu.weight (1-10000) as v1's cpu.shares (2-262144): the defaults 100 and 1024 match. */
const shares = (weight: number) => Math.min(262144, Math.max(2, Math.round((weight * 1024) / 100)));
const weightOf = (weight: number) => Math.min(10000, Math.max(1, Math.round(weight)));

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

/** The host folder of `own` (a path in the hierarchy) under a mount whose root is `mount.root`. */
function under(mount: CgroupMount, own: string): string {
  const rel = mount.root !== '/' && own.startsWith(mount.root) ? own.slice(mount.root.length) : own;
  return join(mount.dir, rel);
}

const readNum = (file: string): number | undefined => {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
};

/** `key value` lines (memory.events, pids.events, memory.oom_control, cpu.stat). */
const readKeyed = (file: string): Record<string, number> => {
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

const readPids = (file: string): number[] => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

const settle = () => new Promise((r) => setTimeout(r, 10));

/** Kills every process listed until none is left: new ones forked meanwhile are caught by the next round. */
async function killListed(procs: string): Promise<void> {
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
async function removeTree(dir: string, kill: (dir: string) => Promise<void>): Promise<void> {
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
async function sweepStale(parents: string[]): Promise<void> {
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

/**
 * cgroup v1: a folder per hierarchy (memory, pids, cpu and cpuacct, which may share one), each under the runner's own
 * cgroup in that hierarchy. Memory and swap together (memory.memsw) where the kernel accounts swap.
 */
export function cgroupV1(mounts: CgroupMount[], own: Map<string, string>, name: string): CgroupDriver | undefined {
  const base = new Map<string, string>();
  for (const c of ['memory', 'pids', 'cpu', 'cpuacct']) {
    const m = mounts.find((x) => x.version === 1 && x.controllers.includes(c));
    if (m) base.set(c, join(under(m, own.get(c) ?? '/'), name));
  }
  const absent: string[] = [];
  for (const c of [...base.keys()]) {
    try {
      mkdirSync(base.get(c)!, { recursive: true });
    } catch (err) {
      absent.push(`${c}: cannot create ${base.get(c)} (${(err as Error).message})`);
      base.delete(c);
    }
  }
  if (base.size === 0) return undefined;
  void sweepStale([...base.values()].map((d) => dirname(d)));
  for (const c of ['memory', 'pids', 'cpu']) if (!base.has(c) && !absent.some((a) => a.startsWith(`${c}:`))) absent.push(`${c}: no cgroup v1 ${c} hierarchy is mounted`);
  const swap = base.has('memory') && existsSync(join(base.get('memory')!, 'memory.memsw.limit_in_bytes'));
  const dirs = () => [...new Set(base.values())];
  const writeCpuV1 = (cpu: string, limits: GroupLimits) => {
    if (limits.cpus !== undefined) {
      writeFileSync(join(cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
      writeFileSync(join(cpu, 'cpu.cfs_quota_us'), String(quotaUs(limits.cpus)));
    }
    if (limits.cpuWeight !== undefined) writeFileSync(join(cpu, 'cpu.shares'), String(shares(limits.cpuWeight)));
  };

  function group(rel: string[], limits: GroupLimits): Group {
    const at = (c: string) => (base.has(c) ? join(base.get(c)!, ...rel) : undefined);
    const folders = [...new Set([...base.keys()].map((c) => at(c)!))];
    for (const d of folders) mkdirSync(d, { recursive: true });
    const mem = at('memory');
    if (mem && limits.memoryBytes !== undefined) {
      writeFileSync(join(mem, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      if (swap) writeFileSync(join(mem, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
    }
    const pids = at('pids');
    if (pids && limits.pids !== undefined) writeFileSync(join(pids, 'pids.max'), String(limits.pids));
    const cpu = at('cpu');
    if (cpu) writeCpuV1(cpu, limits);
    // every process joins every hierarchy, so any one of them lists the whole group
    const procs = join(folders[0], 'cgroup.procs');
    return {
      path: rel.join('/'),
      procsFiles: folders.map((d) => join(d, 'cgroup.procs')),
      pids: () => readPids(procs),
      kill: () => killListed(procs),
      stats() {
        const acct = at('cpuacct');
        return {
          oomKills: mem ? (readKeyed(join(mem, 'memory.oom_control')).oom_kill ?? 0) : 0,
          pidsRefused: pids ? (readKeyed(join(pids, 'pids.events')).max ?? 0) : 0,
          cpuNs: acct ? readNum(join(acct, 'cpuacct.usage')) : undefined,
          memoryPeakBytes: mem ? readNum(join(mem, swap ? 'memory.memsw.max_usage_in_bytes' : 'memory.max_usage_in_bytes')) : undefined,
          pidsPeak: pids ? readNum(join(pids, 'pids.peak')) : undefined,
        };
      },
      async remove() {
        await killListed(procs);
        for (const d of folders) await removeTree(d, async (dir) => killListed(join(dir, 'cgroup.procs')));
      },
    };
  }

  return {
    version: 'cgroup-v1',
    where: dirs().join(', '),
    has: { memory: base.has('memory'), swap, pids: base.has('pids'), cpu: base.has('cpu'), cpuUsage: base.has('cpuacct'), kill: false },
    absent,
    group,
    limitSubtree(limits) {
      const cpu = base.get('cpu');
      if (cpu) writeCpuV1(cpu, limits);
    },
    async close() {
      for (const d of dirs()) await removeTree(d, async (dir) => killListed(join(dir, 'cgroup.procs')));
    },
  };
}

/**
 * cgroup v2: one folder per group in the unified tree. Controllers reach a child only through its parent's
 * cgroup.subtree_control, and a cgroup with processes of its own cannot hand them down (except the root), so when the
 * runner's own cgroup refuses, the runner's processes move into a leaf beside its subtree first (as a container's
 * init does with a delegated cgroup).
 */
export function cgroupV2(mount: CgroupMount, own: Map<string, string>, name: string): CgroupDriver | undefined {
  const ownDir = under(mount, own.get('') ?? '/');
  const root = join(ownDir, name);
  try {
    mkdirSync(root, { recursive: true });
  } catch {
    return undefined;
  }
  void sweepStale([ownDir]);
  const available = new Set(readFileSync(join(ownDir, 'cgroup.controllers'), 'utf8').trim().split(/\s+/).filter(Boolean));
  const wanted = ['memory', 'pids', 'cpu'].filter((c) => available.has(c));
  const enable = (dir: string) => {
    if (wanted.length) writeFileSync(join(dir, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
  };
  const absent: string[] = [];
  try {
    enable(ownDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EBUSY') throw err;
    // processes in the runner's own cgroup keep it from handing controllers down: they move into a leaf
    const leaf = join(ownDir, `${name}-self`);
    mkdirSync(leaf, { recursive: true });
    for (const pid of readPids(join(ownDir, 'cgroup.procs'))) {
      try {
        writeFileSync(join(leaf, 'cgroup.procs'), String(pid));
      } catch {
        // a kernel thread or an exited process
      }
    }
    enable(ownDir);
  }
  const delegated = new Set(readFileSync(join(root, 'cgroup.controllers'), 'utf8').trim().split(/\s+/).filter(Boolean));
  for (const c of ['memory', 'pids', 'cpu']) {
    if (!delegated.has(c)) absent.push(`${c}: the cgroup v2 tree at ${mount.dir} offers no ${c} controller here (controllers: ${[...available].join(' ') || 'none'})`);
  }
  enable(root);
  const has = { memory: delegated.has('memory'), swap: false, pids: delegated.has('pids'), cpu: delegated.has('cpu'), cpuUsage: true, kill: existsSync(join(root, 'cgroup.kill')) };
  has.swap = has.memory && existsSync(join(root, 'memory.swap.max'));

  const writeCpuV2 = (dir: string, limits: GroupLimits) => {
    if (!has.cpu) return;
    if (limits.cpus !== undefined) writeFileSync(join(dir, 'cpu.max'), `${quotaUs(limits.cpus)} ${CPU_PERIOD_US}`);
    if (limits.cpuWeight !== undefined) writeFileSync(join(dir, 'cpu.weight'), String(weightOf(limits.cpuWeight)));
  };

  const killDir = async (dir: string) => {
    if (has.kill) {
      try {
        writeFileSync(join(dir, 'cgroup.kill'), '1');
      } catch {
        // gone
      }
      // the kernel kills them all at once; wait for them to be gone so the group can be removed
      for (let i = 0; i < 200 && readKeyed(join(dir, 'cgroup.events')).populated === 1; i++) await settle();
      return;
    }
    await killListed(join(dir, 'cgroup.procs'));
  };

  function group(rel: string[], limits: GroupLimits): Group {
    const dir = join(root, ...rel);
    mkdirSync(dir, { recursive: true });
    const write = (file: string, value: string) => writeFileSync(join(dir, file), value);
    if (has.memory && limits.memoryBytes !== undefined) {
      write('memory.max', String(limits.memoryBytes));
      if (has.swap) write('memory.swap.max', '0');
      // an OOM kill ends the whole group, not one process of it
      write('memory.oom.group', '1');
    }
    if (has.pids && limits.pids !== undefined) write('pids.max', String(limits.pids));
    writeCpuV2(dir, limits);
    // a group that will hold processes hands nothing down (no internal processes); a parent hands down everything
    return {
      path: rel.join('/'),
      procsFiles: [join(dir, 'cgroup.procs')],
      pids: () => readPids(join(dir, 'cgroup.procs')),
      kill: () => killDir(dir),
      stats() {
        const usage = readKeyed(join(dir, 'cpu.stat')).usage_usec;
        return {
          oomKills: has.memory ? (readKeyed(join(dir, 'memory.events')).oom_kill ?? 0) : 0,
          pidsRefused: has.pids ? (readKeyed(join(dir, 'pids.events')).max ?? 0) : 0,
          cpuNs: usage === undefined ? undefined : usage * 1000,
          memoryPeakBytes: has.memory ? readNum(join(dir, 'memory.peak')) : undefined,
          pidsPeak: has.pids ? readNum(join(dir, 'pids.peak')) : undefined,
        };
      },
      remove: () => removeTree(dir, killDir),
    };
  }

  return {
    version: 'cgroup-v2',
    where: root,
    has,
    absent,
    group: (rel, limits) => {
      // parents of a leaf hand their controllers down
      for (let i = 1; i < rel.length; i++) {
        const parent = join(root, ...rel.slice(0, i));
        if (!existsSync(parent)) mkdirSync(parent);
        enable(parent);
      }
      return group(rel, limits);
    },
    limitSubtree: (limits) => writeCpuV2(root, limits),
    close: () => removeTree(root, killDir),
  };
}
