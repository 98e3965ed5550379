import { spawn, type ChildProcess } from 'node:child_process';
import type { LimitExceeded } from '../../../../contracts/sandbox-limits.ts';
import type { Sandbox } from '../../sandbox/index.ts';
import type { VfsView } from '../../vfs/index.ts';

/**
 * The `process` substrate for `run_command`: one command per call, in the session's `/work`, with a minimal
 * environment, a timeout and capped output. By default the command runs inside the runner's sandbox (bubblewrap:
 * only the session's VirtualFS mounts, no network unless the profile allows it, its own process tree); the process
 * group of the sandbox is killed on timeout or cancel, and the sandbox's PID namespace ends with its first process,
 * so nothing the command started outlives it. With SVC_SANDBOX=off the command runs unsandboxed as the runner's
 * user (the operator's explicit opt-out).
 */
export interface CommandSpec {
  /** With `args`: the program, run without a shell. Without: a `/bin/sh -c` command line. */
  command: string;
  args?: string[];
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  /** Variables added to the minimal environment (a /v1 environment's `env`). */
  env?: Record<string, string>;
  /** Called with the output (stdout and stderr, UTF-8) as it arrives, while the command runs. */
  onOutput?: (text: string) => void;
}

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
  truncated: boolean;
  durationMs: number;
  /** The limit that ended or cut the command (memory, pids, wall time, CPU time, file size, disk, output), when one did. */
  limit?: LimitExceeded;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;

/** Bounded collector: keeps reading (a full pipe would stall the child) but keeps only the first `max` bytes. */
export function collector(max: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = false;
  return {
    push(chunk: Buffer) {
      if (kept >= max) return void (dropped = true);
      const take = chunk.subarray(0, max - kept);
      if (take.byteLength < chunk.byteLength) dropped = true;
      chunks.push(take);
      kept += take.byteLength;
    },
    text: () => Buffer.concat(chunks).toString('utf8') + (dropped ? `\n[output truncated at ${max} bytes]` : ''),
    get dropped() {
      return dropped;
    },
  };
}

/** Where and how a command starts; stdio must be ['ignore', 'pipe', 'pipe'] and the child leads its own process group. */
export type Launch = (argv: [string, ...string[]]) => ChildProcess;

export interface CommandRunner {
  /** `sessionId`: whose command it is (a container session's commands run in its container). */
  run(spec: CommandSpec, session: { vfs: VfsView; network: boolean; sessionId?: string }): Promise<CommandResult>;
}

const PATH = '/usr/local/bin:/usr/bin:/bin';

/** Runs commands in the sandbox, or unsandboxed when the operator opted out (SVC_SANDBOX=off). */
export function createCommandRunner(sandbox: Sandbox): CommandRunner {
  return {
    async run(spec, session) {
      const status = await sandbox.ready();
      if (status.mode === 'off') {
        const cwd = await session.vfs.workDir();
        const env = { PATH, HOME: cwd, TMPDIR: cwd, LANG: 'C.UTF-8', ...spec.env };
        return runCommand(spec, ([file, ...argv]) => spawn(file, argv, { cwd, env, shell: false, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }));
      }
      if (!status.available) throw new Error(`run_command is unavailable on this runner: ${status.detail}`);
      const plan = await session.vfs.sandboxMounts();
      try {
        const env = { PATH, HOME: plan.home, TMPDIR: '/tmp', LANG: 'C.UTF-8', ...spec.env };
        return await runCommand(spec, (argv) => sandbox.spawn({ argv, cwd: plan.cwd, env, mounts: plan.mounts, network: session.network }), plan.close);
      } finally {
        plan.close();
      }
    },
  };
}

/** `started` runs once the process exists (the sandbox's descriptors can be closed then). */
export function runCommand(spec: CommandSpec, launch: Launch, started?: () => void): Promise<CommandResult> {
  const t0 = performance.now();
  const argv: [string, ...string[]] = spec.args ? [spec.command, ...spec.args] : ['/bin/sh', '-c', spec.command];
  return new Promise((resolve) => {
    const child = launch(argv);
    started?.();
    const out = collector(spec.maxOutputBytes);
    const err = collector(spec.maxOutputBytes);
    let timedOut = false;
    let cancelled = false;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, spec.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      killGroup();
    };
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    if (spec.signal?.aborted) onAbort();
    // live output stops where the kept output stops (the cap), so a flood of output is not a flood of events
    // Bytes become text here, once: what is not UTF-8 becomes U+FFFD (the same decoding as the result's), so the live
    // output, the result and every replay of them hold the same string; a sequence cut by a chunk waits for the next.
    const live = (decoder: TextDecoder) => {
      let sent = 0;
      const push = (c: Buffer) => {
        if (!spec.onOutput || sent >= spec.maxOutputBytes) return;
        const take = c.subarray(0, spec.maxOutputBytes - sent);
        sent += take.byteLength;
        const text = decoder.decode(take, { stream: true });
        if (text) spec.onOutput(text);
      };
      /** A sequence the output ended inside of (or that the cap cut) is shown as the result shows it: U+FFFD. */
      const end = () => {
        const text = decoder.decode();
        if (text && spec.onOutput) spec.onOutput(text);
      };
      return Object.assign(push, { end });
    };
    const liveOut = live(new TextDecoder());
    const liveErr = live(new TextDecoder());
    child.stdout!.on('data', (c: Buffer) => {
      out.push(c);
      liveOut(c);
    });
    child.stderr!.on('data', (c: Buffer) => {
      err.push(c);
      liveErr(c);
    });
    let done = false;
    const finish = (exitCode: number | null, signal: string | null, spawnError?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      liveOut.end();
      liveErr.end();
      spec.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode,
        signal,
        stdout: out.text(),
        stderr: spawnError ? `${err.text()}${spawnError.message}` : err.text(),
        timedOut,
        cancelled,
        truncated: out.dropped || err.dropped,
        durationMs: Math.round(performance.now() - t0),
      });
    };
    // background children holding the pipes would keep `close` from firing: the command's lifetime ends with it
    child.once('exit', killGroup);
    child.once('error', (e) => finish(null, null, e));
    child.once('close', (code, sig) => finish(code, sig));
  });
}
