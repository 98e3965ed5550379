import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CgroupDriver, CgroupMount, Group, GroupLimits } from './cgroups.ts';
import { CPU_PERIOD_US, killListed, quotaUs, readKeyed, readNum, readPids, removeTree, settle, sweepStale, under, weightOf } from './cgroup-tree.ts';

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
