import { readlinkSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { ContainerConfig } from '../../../../config/config.ts';
import type { SandboxLimits } from '../../../../contracts/sandbox-limits.ts';
import type { SandboxMount } from '../../sandbox/index.ts';
import { codeEnv, programMounts } from '../program.ts';
import type { WorkerLaunch } from '../substrate.ts';

/**
 * What a sandbox session's container is made of (the body of the engine's container create): the worker in outbound
 * mode, exactly as the process substrate runs it, with nothing of the host but what is listed here. No network
 * (`none`: a loopback device only, where the worker's relay listens), a read-only root filesystem with a fresh /tmp,
 * every capability dropped, no-new-privileges, the engine's default seccomp profile (never overridden here), a
 * non-root user, the session's state volume at /var/svc, the runner's callback socket folder at /run/svc and the
 * session's files where run_command sees them (/work, /home, pools).
 */
export const WORKER_HOME = '/var/svc';
export const SOCKET_DIR = '/run/svc';
/** The relay's port on the container's own loopback (its network namespace has nothing else). */
export const RELAY_PORT = 7070;
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const MiB = 1024 * 1024;

/** The labels on everything the substrate creates: how a restarted runner finds its containers and volumes. */
export const LABEL = { tenant: 'svc.tenant', session: 'svc.session', runner: 'svc.runner' } as const;

/**
 * Whether the engine can cap a container's writable layer (`StorageOpt.size`): overlay2 only on xfs mounted with
 * `pquota` (devicemapper, btrfs and zfs too, not used here). The root filesystem is read-only, so that layer holds
 * nothing a command writes; what the session writes lands on its folder (`/work`, `/home`, the state volume), held
 * by the session folder's own disk limit where the runner has one, and in `/tmp`, a tmpfs sized below (its pages count
 * against the memory limit).
 */
export interface EngineDisk {
  storageOpt: boolean;
  /** `overlay2 on extfs: the writable layer cannot be capped` */
  detail: string;
}

export const NO_STORAGE_OPT: EngineDisk = { storageOpt: false, detail: 'the storage driver is not known yet' };

/** `/tmp` inside the container: at most this, and never above the session's disk limit. */
export const TMP_MiB = 256;

/**
 * The session's limits (contracts/sandbox-limits.ts) as the engine's HostConfig fields: the container's cgroup holds
 * memory (swap: none beyond it), the CPU quota and the process count for the worker and every command it runs;
 * rlimits hold each process to its open files and file size, with no core files. CPU time is a command's own
 * (container-exec.ts sets it per command): the worker lives for many runs, and a lifetime cap would end it after
 * enough of them. No RLIMIT_NPROC: it counts a uid's processes across the whole host, and every container's command
 * user is the same uid; the pids cgroup is the per-session count.
 */
export function hostConfigLimits(limits: SandboxLimits, disk: EngineDisk = NO_STORAGE_OPT) {
  const rlimit = (Name: string, value: number) => ({ Name, Soft: value, Hard: value });
  return {
    Memory: limits.memoryMiB * MiB,
    MemorySwap: limits.memoryMiB * MiB,
    NanoCpus: Math.round(limits.cpus * 1e9),
    PidsLimit: limits.pids,
    Ulimits: [rlimit('nofile', limits.openFiles), rlimit('fsize', limits.fileMiB * MiB), rlimit('core', 0)],
    ...(disk.storageOpt ? { StorageOpt: { size: `${limits.diskMiB}M` } } : {}),
  };
}

/** What the engine's storage driver allows (`GET /info`: Driver and its Backing Filesystem). */
export function engineDisk(info: { Driver?: string; DriverStatus?: Array<[string, string]> | null }): EngineDisk {
  const driver = info.Driver ?? 'unknown';
  const backing = info.DriverStatus?.find(([k]) => k === 'Backing Filesystem')?.[1];
  const on = backing ? `${driver} on ${backing}` : driver;
  // overlay2 caps a layer only on xfs with project quotas: the engine says which at the first create (see withoutStorageOpt)
  if (driver === 'overlay2' && backing === 'xfs') return { storageOpt: true, detail: `${on}: the writable layer is capped at the disk limit` };
  if (driver === 'btrfs' || driver === 'zfs' || driver === 'devicemapper') return { storageOpt: true, detail: `${on}: the writable layer is capped at the disk limit` };
  return { storageOpt: false, detail: `${on}: the writable layer cannot be capped (overlay2 needs xfs with pquota); it is read-only anyway` };
}

/** An engine's refusal of `StorageOpt` (xfs without pquota, a driver without quotas): retried without it. */
export const refusesStorageOpt = (message: string) => /storage-?opt|pquota|quota/i.test(message);

/** A mount's host path: descriptors (the VFS pins folders with them) are read back through /proc. */
function hostPath(m: Extract<SandboxMount, { type: 'bind' }>): string {
  return 'path' in m.source ? m.source.path : readlinkSync(`/proc/self/fd/${m.source.fd}`);
}

/**
 * The mounts with host paths in place of descriptors, read while the descriptors are open (the caller closes them
 * once the launch call returns; the engine, another process, is handed paths).
 */
export function byPath(mounts: readonly SandboxMount[]): SandboxMount[] {
  return mounts.map((m) => (m.type === 'bind' ? { ...m, source: { path: hostPath(m) } } : m));
}

export function engineMounts(mounts: readonly SandboxMount[]): Array<Record<string, unknown>> {
  return mounts.map((m) =>
    m.type === 'bind'
      ? { Type: 'bind', Source: hostPath(m), Target: m.target, ReadOnly: !m.writable, BindOptions: { Propagation: 'rprivate' } }
      : { Type: 'tmpfs', Target: m.target, ReadOnly: m.readOnly, TmpfsOptions: { SizeBytes: MiB, Mode: 0o755 } },
  );
}

export interface SpecInput {
  launch: WorkerLaunch;
  image: string;
  volume: string;
  runnerId: string;
  config: ContainerConfig;
  disk?: EngineDisk;
}

export function containerBody({ launch: l, image, volume, runnerId, config, disk }: SpecInput): Record<string, unknown> {
  const socketInside = `${SOCKET_DIR}/${basename(l.callbackSocket)}`;
  const mountProgram = config.program === 'mount';
  const program = mountProgram ? programMounts() : undefined;
  const env = {
    ...l.env,
    ...(mountProgram ? codeEnv() : {}),
    PATH,
    LANG: 'C.UTF-8',
    HOME: `${WORKER_HOME}/home`,
    SVC_STATE_DIR: `${WORKER_HOME}/state`,
    TMPDIR: '/tmp',
    SVC_WORKER_RELAY: `${RELAY_PORT}:${socketInside}`,
  };
  const labels = { [LABEL.tenant]: l.tenant, [LABEL.session]: l.sessionId, [LABEL.runner]: runnerId };
  return {
    Image: image,
    // the svc images' entrypoint is `svc serve`; a mounted program names its own
    ...(program ? { Entrypoint: program.argv, Cmd: [] } : { Cmd: ['--role=worker'] }),
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    User: `${config.uid}:${config.gid}`,
    // the image's own working folder when it runs its own program (the svc images start `bin/svc.js` relative to /app)
    ...(program ? { WorkingDir: l.files.some((m) => m.target === '/work') ? '/work' : `${WORKER_HOME}/home` } : {}),
    Labels: labels,
    HostConfig: {
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      // an init as PID 1 reaps what commands leave behind; the svc images bring tini themselves
      Init: mountProgram,
      Tmpfs: { '/tmp': `rw,nosuid,nodev,size=${Math.min(TMP_MiB, l.limits.diskMiB)}m` },
      Mounts: [
        ...engineMounts(program?.mounts ?? []),
        { Type: 'volume', Source: volume, Target: WORKER_HOME },
        { Type: 'bind', Source: dirname(l.callbackSocket), Target: SOCKET_DIR, ReadOnly: true },
        ...engineMounts(l.files),
      ],
      RestartPolicy: { Name: 'no' },
      ...hostConfigLimits(l.limits, disk),
    },
  };
}
