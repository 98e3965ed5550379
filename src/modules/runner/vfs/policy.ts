import * as v from 'valibot';
import type { PoolSpec, ProfileSpec } from '../../../contracts/runner.wire.ts';
import { ProfileFsPolicy, VFS_MOUNTS, type VfsMount } from '../../../contracts/toolkit.ts';
import { describeIssues } from '../../../shared/http.ts';
import { anyGlobCovers } from './glob.ts';
import { VfsError, type VirtualPath } from './paths.ts';

/**
 * Who may read and write what inside a session's VirtualFS:
 * - profile `fs` (ProfileFsPolicy): `allowedMounts` hides mounts, `readOnly` patterns refuse writes;
 * - `/pool/<name>` exists for each pool the profile is a member of; the pool's `fs.read` / `fs.write` patterns (with
 *   `{pool}` replaced by the pool's name, relative patterns taken under `/pool/{pool}/`) decide access there. A pool
 *   without patterns gives its members read and write on its own area. Pool patterns govern `/pool` paths only.
 */
export type Access = 'read' | 'write';

export interface FsRules {
  profile: string;
  mounts: VfsMount[];
  readOnly: string[];
  /** Pools the profile is a member of, with their patterns already expanded. */
  pools: Array<{ name: string; read: string[]; write: string[] }>;
}

const OWN_AREA = ['/pool/{pool}/**'];

function expand(patterns: readonly string[] | undefined, pool: string): string[] {
  return (patterns ?? OWN_AREA).map((p) => (p.startsWith('/') ? p : `/pool/{pool}/${p}`).replaceAll('{pool}', pool));
}

/** Reads the profile's policy strictly: a malformed `fs` fails every file tool rather than being half-applied. */
export function rulesFor(profile: ProfileSpec, pools: readonly PoolSpec[]): FsRules {
  const parsed = v.safeParse(ProfileFsPolicy, profile.fs ?? {});
  if (!parsed.success) throw new VfsError(`profile ${profile.name} has an invalid fs policy: ${describeIssues(parsed.issues)}`);
  const member = pools.filter((p) => p.members?.some((m) => m.profile === profile.name));
  return {
    profile: profile.name,
    mounts: parsed.output.allowedMounts ?? [...VFS_MOUNTS],
    readOnly: parsed.output.readOnly ?? [],
    pools: member.map((p) => ({ name: p.name, read: expand(p.fs?.read, p.name), write: expand(p.fs?.write, p.name) })),
  };
}

/** The lease's `allowedMounts`: [] when the profile sets no restriction (the seed's "unrestricted"). */
export function leaseMounts(profile: ProfileSpec): string[] {
  const parsed = v.safeParse(ProfileFsPolicy, profile.fs ?? {});
  return parsed.success ? [...(parsed.output.allowedMounts ?? [])] : [];
}

/** Throws VfsError naming why `path` may not be accessed for `access`. The root and `/pool` are virtual, read-only listings. */
export function checkAccess(rules: FsRules, path: VirtualPath, access: Access): void {
  const refuse = (why: string): never => {
    throw new VfsError(`${access} of ${path.virtual} refused: ${why}`);
  };
  if (!path.mount) {
    if (access === 'write') refuse('the VirtualFS root is not writable');
    return;
  }
  if (!rules.mounts.includes(path.mount)) refuse(`mount ${path.mount} is not allowed for profile ${rules.profile}`);
  if (access === 'write' && anyGlobCovers(rules.readOnly, path.virtual)) refuse(`read-only by the fs policy of profile ${rules.profile}`);
  if (path.mount !== '/pool') return;
  if (path.rest.length === 0) {
    if (access === 'write') refuse('/pool itself is not writable; write inside /pool/<pool>');
    return;
  }
  const grants = rules.pools.flatMap((p) => (access === 'write' ? p.write : [...p.read, ...p.write]));
  if (!anyGlobCovers(grants, path.virtual)) {
    refuse(rules.pools.length ? `not granted by the fs policy of pool ${rules.pools.map((p) => p.name).join(', ')}` : `profile ${rules.profile} is in no pool`);
  }
}
