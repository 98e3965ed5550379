import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CgroupDriver, CgroupMount, Group, GroupLimits } from './cgroups.ts';
import { CPU_PERIOD_US, killListed, quotaUs, readKeyed, readNum, readPids, removeTree, shares, sweepStale, under } from './cgroup-tree.ts';

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
