import { closeSync, constants, fstatSync, openSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { SandboxMount } from '../sandbox/index.ts';
import { globCovers } from './glob.ts';
import { checkAccess, type FsRules } from './policy.ts';
import { childOf, VfsError, type VirtualPath } from './paths.ts';

/**
 * The session's VirtualFS as sandbox mounts: each mount the profile may see (`/home`, `/work`, `/pool/<pool>` of its
 * pools) at its virtual path, writable where the fs policy lets it write, read-only where it may only read. Finer
 * patterns (`readOnly: ["/work/inputs"]`, pool grants on sub-folders) become further mounts over the paths they match
 * when the command starts; a path created later by the command itself under such a pattern is not covered (the file
 * tools check every call).
 *
 * Sources are descriptors opened without following links and checked to lie inside their mount's real folder, so a
 * link a command swapped in cannot point a mount at the host.
 */
export interface MountPlan {
  mounts: SandboxMount[];
  /** `/work` when the profile sees it, else `/tmp`. */
  cwd: string;
  /** `/home` when the profile sees it, else `/tmp`. */
  home: string;
  /** Closes the descriptors (once the sandbox has been spawned with them). */
  close(): void;
}

type Mode = 'rw' | 'ro' | 'none';

/** Paths looked at when patterns are finer than a mount; past this the command is refused rather than half-guarded. */
const MAX_WALK = 10_000;
const MAX_SUBMOUNTS = 256;

function modeOf(rules: FsRules, path: VirtualPath): Mode {
  const allowed = (access: 'read' | 'write') => {
    try {
      checkAccess(rules, path, access);
      return true;
    } catch {
      return false;
    }
  };
  return allowed('write') ? 'rw' : allowed('read') ? 'ro' : 'none';
}

/** The part of a pattern before its first wildcard segment, and whether it has one. */
function literalPrefix(pattern: string): { prefix: string; wild: boolean } {
  const segments = pattern.split('/');
  const i = segments.findIndex((s) => /[*?]/.test(s));
  return i < 0 ? { prefix: pattern.replace(/\/+$/, ''), wild: false } : { prefix: segments.slice(0, i).join('/'), wild: true };
}

/** Could `pattern` decide differently for some path strictly below `virtual`? */
function appliesBelow(pattern: string, virtual: string): boolean {
  if (globCovers(pattern, virtual)) return false; // it covers the whole subtree alike
  const { prefix, wild } = literalPrefix(pattern);
  if (prefix.startsWith(`${virtual}/`)) return true;
  return wild && (virtual === prefix || virtual.startsWith(`${prefix}/`) || prefix === '');
}

export function planSandboxMounts(opts: { rules: FsRules; roots: Array<{ path: VirtualPath; host: string }> }): MountPlan {
  const { rules } = opts;
  const patterns = [...rules.readOnly, ...rules.pools.flatMap((p) => [...p.read, ...p.write])];
  const fds: number[] = [];
  const mounts: SandboxMount[] = [];
  let walked = 0;
  const close = () => fds.splice(0).forEach((fd) => closeSync(fd));

  /** A descriptor of `host` (a folder or regular file), refused when it resolves outside `realRoot`. */
  function pin(host: string, realRoot: string, virtual: string): number | undefined {
    let fd: number;
    try {
      fd = openSync(host, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch {
      return undefined; // gone, or a link: nothing to mount
    }
    const st = fstatSync(fd);
    const real = readlinkSync(`/proc/self/fd/${fd}`);
    if ((!st.isDirectory() && !st.isFile()) || (real !== realRoot && !real.startsWith(realRoot + sep))) {
      closeSync(fd);
      if (st.isDirectory() || st.isFile()) throw new VfsError(`path ${virtual} refused: it resolves outside its mount`);
      return undefined;
    }
    fds.push(fd);
    return fd;
  }

  function bind(host: string, realRoot: string, path: VirtualPath, mode: Mode): void {
    if (mode === 'none') return;
    const fd = pin(host, realRoot, path.virtual);
    if (fd === undefined) return;
    if (mounts.length >= MAX_SUBMOUNTS) throw new VfsError(`run_command refused: the fs policy gives more than ${MAX_SUBMOUNTS} paths their own access; narrow its patterns`);
    mounts.push({ type: 'bind', source: { fd }, target: path.virtual, writable: mode === 'rw' });
  }

  function walk(host: string, realRoot: string, dir: VirtualPath, mode: Mode): void {
    for (const entry of readdirSync(host, { withFileTypes: true })) {
      if (++walked > MAX_WALK) throw new VfsError(`run_command refused: the fs policy's patterns need more than ${MAX_WALK} paths checked under ${dir.virtual}; narrow them`);
      if (!entry.isDirectory() && !entry.isFile()) continue; // links are never mounted
      const path = childOf(dir, entry.name);
      const childHost = join(host, entry.name);
      const childMode = modeOf(rules, path);
      if (childMode !== mode) bind(childHost, realRoot, path, childMode);
      if (entry.isDirectory() && patterns.some((p) => appliesBelow(p, path.virtual))) walk(childHost, realRoot, path, childMode);
    }
  }

  try {
    for (const root of opts.roots) {
      const realRoot = realpathSync(root.host);
      const mode = modeOf(rules, root.path);
      if (mode === 'none') mounts.push({ type: 'tmpfs', target: root.path.virtual, readOnly: true });
      else if (pin(root.host, realRoot, root.path.virtual) === undefined) throw new VfsError(`mount ${root.path.virtual} could not be opened`);
      else mounts.push({ type: 'bind', source: { fd: fds.at(-1)! }, target: root.path.virtual, writable: mode === 'rw' });
      if (patterns.some((p) => appliesBelow(p, root.path.virtual))) walk(root.host, realRoot, root.path, mode);
    }
  } catch (err) {
    close();
    throw err;
  }
  const sees = (mount: string) => opts.roots.some((r) => r.path.virtual === mount);
  return { mounts, cwd: sees('/work') ? '/work' : '/tmp', home: sees('/home') ? '/home' : '/tmp', close };
}

