import { spawn, type ChildProcess, type StdioNull, type StdioPipe } from 'node:child_process';
import { accessSync, closeSync, constants, openSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import type { Jail } from '../limits/index.ts';
import { bwrapInvocation, type BwrapOptions } from './bwrap.ts';
import { hostLayout } from './host.ts';
import type { SandboxSpec, SandboxStatus } from './spec.ts';

/**
 * The runner's sandbox: finds bubblewrap, proves at start that it can build a sandbox (a no-op inside one), and spawns
 * processes inside it. Reused by everything that runs code an agent chose: `run_command` now, sandboxed workers later.
 */
export interface Sandbox {
  /** Settles once the start-up probe is done. */
  ready(): Promise<SandboxStatus>;
  /** The probe's result so far (`available` false while it runs). */
  status(): SandboxStatus;
  /**
   * Spawns `spec` in the sandbox; throws when it is not available. Descriptors in `spec` may be closed after this
   * returns. With a `jail` (limits/), bubblewrap starts inside the jail's cgroups and the program under its rlimits.
   */
  spawn(spec: SandboxSpec, opts?: { stdio?: [StdioNull | StdioPipe, StdioNull | StdioPipe, StdioNull | StdioPipe]; detached?: boolean; jail?: Jail }): ChildProcess;
}

export interface SandboxOptions {
  mode: 'bwrap' | 'off';
  /** Where to look for `bwrap` (the server's PATH). */
  searchPath: string;
}

/** What a user needs to do when the sandbox cannot run. */
export const SANDBOX_FIX =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow it to create namespaces (in a container: ' +
  'unprivileged user namespaces or CAP_SYS_ADMIN, a seccomp profile that permits them; see docs/sandboxes.md, "Command sandbox"), ' +
  'or set SVC_SANDBOX=off on the runner to run commands unsandboxed at your own risk';

/** The environment of the bwrap process itself: it is PID 1 inside the sandbox, so its environ is readable there. */
const BWRAP_ENV = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' };

/** The first executable `name` on `searchPath` (a PATH-style list), or undefined. */
export function findOnPath(name: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(':').filter(Boolean)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function run(file: string, args: string[], stdin?: { options: string[]; data: string[]; fds: number[] }): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const extra = stdin ? ['pipe' as const, ...stdin.data.map(() => 'pipe' as const), ...stdin.fds] : [];
    const child = spawn(file, args, { env: BWRAP_ENV, stdio: ['ignore', 'pipe', 'pipe', ...extra] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    if (stdin) feed(child, stdin);
    child.once('error', (err) => resolve({ code: null, out: err.message }));
    child.once('close', (code) => resolve({ code, out: out.trim() }));
  });
}

/** Writes the options and data files into their pipes (each well under a pipe's buffer, so this never blocks). */
function feed(child: ChildProcess, inv: { options: string[]; data: string[] }): void {
  const pipes = child.stdio as unknown as Array<Writable | null>;
  const write = (i: number, text: string) => {
    const pipe = pipes[i];
    pipe?.on('error', () => {}); // a sandbox that failed to start closes its end early; its exit says why
    pipe?.end(text);
  };
  write(3, inv.options.map((o) => `${o}\0`).join(''));
  inv.data.forEach((content, i) => write(4 + i, content));
}

const NOOP: SandboxSpec = { argv: ['true'], cwd: '/', env: { PATH: '/usr/bin:/bin' }, mounts: [], network: false };

export function createSandbox(opts: SandboxOptions): Sandbox {
  let current: SandboxStatus =
    opts.mode === 'off'
      ? { mode: 'off', available: false, detail: 'SVC_SANDBOX=off: the operator opted out; commands run unsandboxed as the runner user' }
      : { mode: 'bwrap', available: false, detail: 'checking bubblewrap' };
  let bwrap: string | undefined;
  let bwrapOpts: BwrapOptions = { userns: true, noNestedUserns: true };

  /** The strongest form that works here, in this order; the last one only as root. */
  const VARIANTS: Array<{ opts: BwrapOptions; label: string; rootOnly?: boolean }> = [
    { opts: { userns: true, noNestedUserns: true }, label: 'with a user namespace, no nested ones' },
    { opts: { userns: true, noNestedUserns: false }, label: 'with a user namespace (this bubblewrap cannot forbid nested ones; 0.8 or later can)' },
    { opts: { userns: false, noNestedUserns: false }, label: 'as root without a user namespace', rootOnly: true },
  ];

  async function probe(): Promise<SandboxStatus> {
    if (opts.mode === 'off') return current;
    bwrap = findOnPath('bwrap', opts.searchPath);
    if (!bwrap) return { mode: 'bwrap', available: false, detail: `bubblewrap (bwrap) is not installed (not found on PATH); fix: ${SANDBOX_FIX}` };
    // asked beside the first sandbox, not before it: at boot each step waits for a turn of a busy event loop
    const version = run(bwrap, ['--version']).then((r) => r.out || 'bubblewrap');
    let firstFailure = '';
    for (const variant of VARIANTS) {
      if (variant.rootOnly && hostLayout().uid !== 0) continue;
      // the no-op gets a descriptor mount too: commands' VirtualFS mounts need one (bubblewrap 0.5 or later)
      const fd = openSync('/usr', constants.O_RDONLY | constants.O_DIRECTORY);
      const spec: SandboxSpec = { ...NOOP, mounts: [{ type: 'bind', source: { fd }, target: '/probe', writable: false }] };
      const inv = bwrapInvocation(spec, hostLayout(), variant.opts);
      const result = await run(bwrap, inv.argv, inv).finally(() => closeSync(fd));
      if (result.code === 0) {
        bwrapOpts = variant.opts;
        return { mode: 'bwrap', available: true, detail: `${await version} at ${bwrap}, ${variant.label}` };
      }
      firstFailure ||= result.out || `exit ${result.code}`;
    }
    await version;
    return { mode: 'bwrap', available: false, detail: `bubblewrap at ${bwrap} cannot create a sandbox here (${firstFailure}); fix: ${SANDBOX_FIX}` };
  }

  const probed = probe().then((s) => (current = s));

  return {
    ready: () => probed,
    status: () => current,
    spawn(spec, o = {}) {
      if (!current.available || !bwrap) throw new Error(`the command sandbox is unavailable: ${current.detail}`);
      // the rlimits are set inside, after bubblewrap made the user namespace (RLIMIT_NPROC then counts the sandbox's own)
      const argv = o.jail ? o.jail.rlimit(spec.argv, { nproc: bwrapOpts.userns }) : spec.argv;
      const inv = bwrapInvocation({ ...spec, argv }, hostLayout(), bwrapOpts);
      const [file, ...args] = o.jail ? o.jail.enter([bwrap, ...inv.argv]) : [bwrap, ...inv.argv];
      const stdio = o.stdio ?? ['ignore', 'pipe', 'pipe'];
      const child = spawn(file, args, {
        env: BWRAP_ENV,
        detached: o.detached ?? true,
        stdio: [...stdio, 'pipe', ...inv.data.map(() => 'pipe' as const), ...inv.fds],
      });
      feed(child, inv);
      return child;
    },
  };
}
