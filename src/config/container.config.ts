import { ConfigError, pick } from './parse.ts';

/**
 * The `container` substrate: one container per sandbox session through the Docker Engine API (Podman's compatible
 * socket too). See docs/sandboxes.md, "Sandbox workers".
 */
export interface ContainerConfig {
  /** DOCKER_HOST: `unix:///path` (default unix:///var/run/docker.sock) or a plain `tcp://host:port`. */
  dockerHost: string | undefined;
  /** SVC_WORKER_IMAGE: the image of sessions whose profile names no `workerImage` (default `svc:slim`). */
  image: string;
  /** SVC_WORKER_IMAGE_PULL: `never`, `missing` (default: pull an image that is not present) or `always`. */
  pull: 'never' | 'missing' | 'always';
  /**
   * SVC_WORKER_PROGRAM: `image` (default) runs the image's own svc (its entrypoint with `--role=worker`: the svc images
   * and images built from them); `mount` mounts this runner's program and Node read-only under /opt, as the process
   * substrate does, so any glibc image works and the worker runs exactly the runner's code.
   */
  program: 'image' | 'mount';
  /** SVC_WORKER_USER: `uid:gid` of the worker (default 1000:1000); `run_command` runs as uid+1:gid+1. */
  uid: number;
  gid: number;
  // each container's limits are its session's: SVC_SANDBOX_* (sandboxLimits) and the profile's `limits`
}

export function containerConfig(env: Record<string, string | undefined>): ContainerConfig | undefined {
  if (env.SVC_WORKER_SUBSTRATE !== 'container' && !env.SVC_WORKER_IMAGE) return undefined;
  const user = env.SVC_WORKER_USER || '1000:1000';
  const m = /^(\d{1,9}):(\d{1,9})$/.exec(user);
  if (!m || Number(m[1]) === 0 || Number(m[2]) === 0) throw new ConfigError('SVC_WORKER_USER', `got "${user}"; allowed: a non-root numeric uid:gid, e.g. 1000:1000`);
  for (const gone of ['SVC_WORKER_MEMORY_MIB', 'SVC_WORKER_CPUS', 'SVC_WORKER_PIDS']) {
    if (env[gone]) throw new ConfigError(gone, `no longer read; a container's limits are its session's: ${gone.replace('SVC_WORKER_', 'SVC_SANDBOX_')} (and a profile's \`limits\`)`);
  }
  return {
    dockerHost: env.DOCKER_HOST || undefined,
    image: env.SVC_WORKER_IMAGE || 'svc:slim',
    pull: pick('SVC_WORKER_IMAGE_PULL', env.SVC_WORKER_IMAGE_PULL, ['never', 'missing', 'always'] as const, 'missing'),
    program: pick('SVC_WORKER_PROGRAM', env.SVC_WORKER_PROGRAM, ['image', 'mount'] as const, 'image'),
    uid: Number(m[1]),
    gid: Number(m[2]),
  };
}
