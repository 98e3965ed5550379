import { lstat, mkdir, realpath } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { VfsMount } from '../../../contracts/toolkit.ts';
import { checkAccess, type Access, type FsRules } from './policy.ts';
import { parseVirtualPath, VfsError, type VirtualPath } from './paths.ts';
import { planSandboxMounts, type MountPlan } from './sandbox-mounts.ts';

/**
 * One session's filesystem as its tools see it: a virtual path in, a host path out, or a VfsError saying why not.
 * After the spelling check (paths.ts) and the policy check (policy.ts) comes the host check: the deepest existing
 * ancestor of the target, with every symbolic link resolved, must still be inside the mount's real directory, and
 * the target itself must not be a symbolic link. Links can only appear through `run_command` (no file tool creates
 * them), and following none at the last step is what O_NOFOLLOW does when the file is opened (fs-ops.ts).
 */
export interface Resolved {
  path: VirtualPath;
  /** undefined for the virtual directories `/` and `/pool`, which exist only as listings. */
  host: string | undefined;
}

export interface VfsView {
  rules: FsRules;
  resolve(raw: unknown, access: Access): Promise<Resolved>;
  resolvePath(path: VirtualPath, access: Access): Promise<Resolved>;
  /** The host directory of `/work` (created): the cwd of `run_command` when commands run unsandboxed. */
  workDir(): Promise<string>;
  /** The mounts a sandboxed command of this session gets (mount folders are created); close the plan after spawning. */
  sandboxMounts(): Promise<MountPlan>;
}

export interface MountRoots {
  '/home': () => string;
  '/work': () => string;
  /** undefined when the tenant has no such pool. */
  '/pool': (pool: string) => string | undefined;
}

const inside = (root: string, p: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

async function existingAncestor(host: string): Promise<{ probe: string; isLink: boolean }> {
  for (let probe = host; ; probe = dirname(probe)) {
    try {
      const st = await lstat(probe);
      return { probe, isLink: st.isSymbolicLink() };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(probe) === probe) throw err;
    }
  }
}

/**
 * Creates the mount directory one level at a time below `base`, refusing a level that is a link: `mkdir -p` would
 * follow a swapped-in link and create directories outside the data dir before any check could refuse.
 */
async function ensureMountDir(base: string, root: string, virtual: string): Promise<void> {
  await mkdir(base, { recursive: true, mode: 0o700 });
  let dir = base;
  for (const part of relative(base, root).split(sep)) {
    dir = join(dir, part);
    await mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    const st = await lstat(dir);
    if (st.isSymbolicLink() || !st.isDirectory()) throw new VfsError(`path ${virtual} refused: the mount directory is reached through a symbolic link`);
  }
}

/**
 * The host path of `rest` under `root` (a directory below `base`, the runner data dir), refused when a symbolic link
 * would take it outside. The mount directory itself must be reached without links from `base`: a command that
 * replaced `/work` by a link to `/` must not turn the file tools loose on the host.
 */
export async function containedPath(base: string, root: string, rest: readonly string[], virtual: string): Promise<string> {
  await ensureMountDir(base, root, virtual);
  const realRoot = await realpath(root);
  if (realRoot !== join(await realpath(base), relative(base, root))) {
    throw new VfsError(`path ${virtual} refused: the mount directory is reached through a symbolic link`);
  }
  const host = join(realRoot, ...rest);
  if (!inside(realRoot, host)) throw new VfsError(`path ${virtual} refused: it leaves its mount`);
  const { probe, isLink } = await existingAncestor(host);
  if (probe === host && isLink && rest.length > 0) throw new VfsError(`path ${virtual} refused: it is a symbolic link`);
  if (!inside(realRoot, await realpath(probe))) throw new VfsError(`path ${virtual} refused: a symbolic link on the way leads outside its mount`);
  return host;
}

/**
 * `work`: where `/work` lives when it is not under `base` (a session disk of its own, limits/disks.ts): `prepare`
 * makes it (once) before the first path in it is resolved, `base` is then where the session disks are mounted.
 */
export interface WorkPlacement {
  prepare(): Promise<void>;
  base(): string | undefined;
}

export function createVfsView(opts: { base: string; rules: FsRules; roots: MountRoots; work?: WorkPlacement }): VfsView {
  const { rules, roots } = opts;
  const baseOf = (mount: VfsMount) => (mount === '/work' && opts.work?.base()) || opts.base;

  async function resolvePath(path: VirtualPath, access: Access): Promise<Resolved> {
    checkAccess(rules, path, access);
    if (!path.mount) return { path, host: undefined };
    if (path.mount === '/work') await opts.work?.prepare();
    const base = baseOf(path.mount);
    if (path.mount === '/pool') {
      if (path.rest.length === 0) return { path, host: undefined };
      const root = roots['/pool'](path.rest[0]);
      if (!root) throw new VfsError(`path ${path.virtual} refused: unknown pool ${path.rest[0]}`);
      return { path, host: await containedPath(base, root, path.rest.slice(1), path.virtual) };
    }
    const mount: Exclude<VfsMount, '/pool'> = path.mount;
    return { path, host: await containedPath(base, roots[mount](), path.rest, path.virtual) };
  }

  return {
    rules,
    resolvePath,
    resolve: (raw, access) => resolvePath(parseVirtualPath(raw), access),
    async workDir() {
      await opts.work?.prepare();
      return containedPath(baseOf('/work'), roots['/work'](), [], '/work');
    },
    async sandboxMounts() {
      const visible: Array<{ path: VirtualPath; host: string }> = [];
      for (const mount of ['/home', '/work'] as const) {
        if (!rules.mounts.includes(mount)) continue;
        if (mount === '/work') await opts.work?.prepare();
        visible.push({ path: parseVirtualPath(mount), host: await containedPath(baseOf(mount), roots[mount](), [], mount) });
      }
      const base = opts.base;
      if (rules.mounts.includes('/pool')) {
        for (const pool of rules.pools) {
          const root = roots['/pool'](pool.name);
          const path = parseVirtualPath(`/pool/${pool.name}`);
          if (root) visible.push({ path, host: await containedPath(base, root, [], path.virtual) });
        }
      }
      return planSandboxMounts({ rules, roots: visible });
    },
  };
}
