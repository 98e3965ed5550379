import type { RunnerSandbox } from '../../../contracts/runner.wire.ts';

/**
 * What a sandboxed process is given, independent of who asks: `run_command` builds one per command, and a sandboxed
 * worker process (later) one per session. The helper turns it into a bubblewrap invocation (bwrap.ts) and spawns it
 * (sandbox.ts). Everything not listed here is absent inside: host folders, the data folder, other sessions, the
 * server's environment and processes.
 */
export interface SandboxSpec {
  /** The program and its arguments; the program is looked up on `env.PATH` inside the sandbox. */
  argv: readonly [string, ...string[]];
  /** Working directory inside the sandbox. */
  cwd: string;
  /** The complete environment inside the sandbox (nothing of the server's is added). */
  env: Readonly<Record<string, string>>;
  /** Mounts in order; a later mount may cover part of an earlier one (a read-only folder inside a writable one). */
  mounts: readonly SandboxMount[];
  /** false: a network namespace of its own with only a loopback device. */
  network: boolean;
}

/**
 * A host path, or an open descriptor of one (`O_NOFOLLOW`, checked to lie inside its mount): a descriptor pins the
 * folder, so a symbolic link swapped in between the check and the mount cannot redirect it.
 */
export type MountSource = { path: string } | { fd: number };

export type SandboxMount =
  | { type: 'bind'; source: MountSource; target: string; writable: boolean }
  /** An empty folder; `readOnly` is applied once everything below it is mounted. */
  | { type: 'tmpfs'; target: string; readOnly: boolean };

/** What the runner reports about its sandbox (runner info `sandbox`). */
export type SandboxStatus = RunnerSandbox;
