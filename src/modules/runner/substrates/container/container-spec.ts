import { readlinkSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { ContainerConfig } from '../../../../config/config.ts';
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

export type ContainerLimits = ContainerConfig['limits'];

/**
 * The seam between the sandbox limits and the engine's: a session's limits (a subset, from its profile once the limits
 * model reaches the substrate) over the operator's defaults (SVC_WORKER_MEMORY_MIB, SVC_WORKER_CPUS, SVC_WORKER_PIDS),
 * as HostConfig fields. Memory-swap equals memory: no swap beyond the memory limit.
 */
export function hostConfigLimits(limits: Partial<ContainerLimits> | undefined, defaults: ContainerLimits) {
  const l = { ...defaults, ...limits };
  return { Memory: l.memoryMiB * MiB, MemorySwap: l.memoryMiB * MiB, NanoCpus: Math.round(l.cpus * 1e9), PidsLimit: l.pids };
}

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
}

export function containerBody({ launch: l, image, volume, runnerId, config }: SpecInput): Record<string, unknown> {
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
      Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=256m' },
      Mounts: [
        ...engineMounts(program?.mounts ?? []),
        { Type: 'volume', Source: volume, Target: WORKER_HOME },
        { Type: 'bind', Source: dirname(l.callbackSocket), Target: SOCKET_DIR, ReadOnly: true },
        ...engineMounts(l.files),
      ],
      RestartPolicy: { Name: 'no' },
      ...hostConfigLimits(undefined, config.limits),
    },
  };
}
