import { spawn, type ChildProcess } from 'node:child_process';
import type { LimitExceeded, LimitScope, SandboxLimits } from '../../../../contracts/sandbox-limits.ts';
import type { Jail, Limiter, Usage } from '../../limits/index.ts';
import type { Sandbox } from '../../sandbox/index.ts';
import type { VfsView } from '../../vfs/index.ts';

/**
 * The `process` substrate for `run_command`: one command per call, in the session's `/work`, with a minimal
 * environment, a timeout and capped output. By default the command runs inside the runner's sandbox (bubblewrap:
 * only the session's VirtualFS mounts, no network unless the profile allows it, its own process tree); the process
 * group of the sandbox is killed on timeout or cancel, and the sandbox's PID namespace ends with its first process,
 * so nothing the command started outlives it. With SVC_SANDBOX=off the command runs unsandboxed as the runner's
 * user (the operator's explicit opt-out).
 *
 * Sandboxed or not, a command runs in a jail of its session's limits (limits/): a cgroup of its own (memory with swap,
 * processes, CPU quota), rlimits (CPU time, file size, open files), the session's disk as `/work`, its wall time on a
 * timer that kills the whole group at once, and `outputBytes` kept. What tripped is the result's `limit`.
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

/** Whose command it is and what holds it: the session's effective limits, and where it was started from. */
export interface CommandSession {
  vfs: VfsView;
  network: boolean;
  /** A container session's commands run in its container. */
  sessionId?: string;
  /** The session's tenant: its commands are held in the tenant's cgroup, which weighs as much as any other tenant's. */
  tenant?: string;
  limits?: SandboxLimits;
  /** `command` (run_command, the default), `setup` (a /v1 environment's setup command). */
  scope?: LimitScope;
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
  /** What became of it: `memory limit 512 MiB reached: killed`, `pids limit 64 processes reached: fork refused`. */
  limitMessage?: string;
  /** What the command's group consumed, read from its cgroup (where limits are enforced). */
  usage?: Usage;
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
  run(spec: CommandSpec, session: CommandSession): Promise<CommandResult>;
}

const PATH = '/usr/local/bin:/usr/bin:/bin';

/** Runs commands in the sandbox, or unsandboxed when the operator opted out (SVC_SANDBOX=off); in a jail of their limits. */
export function createCommandRunner(sandbox: Sandbox, limiter?: Limiter): CommandRunner {
  return {
    async run(spec, session) {
      const status = await sandbox.ready();
      if (status.mode !== 'off' && !status.available) throw new Error(`run_command is unavailable on this runner: ${status.detail}`);
      await limiter?.ready();
      const refused = limiter?.refusal();
      if (refused) throw new Error(`run_command is refused on this runner: ${refused}`);
      const jail = limiter && session.limits ? limiter.jail({ sessionId: session.sessionId ?? 'unnamed', tenant: session.tenant ?? 'unnamed', scope: session.scope ?? 'command', limits: session.limits }) : undefined;
      try {
        if (status.mode === 'off') {
          const cwd = await session.vfs.workDir();
          const env = { PATH, HOME: cwd, TMPDIR: cwd, LANG: 'C.UTF-8', ...spec.env };
          return await runCommand(spec, (argv) => {
            const [file, ...args] = jail ? jail.enter(jail.rlimit(argv, { nproc: false })) : argv;
            return spawn(file, args, { cwd, env, shell: false, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
          }, undefined, jail);
        }
        const plan = await session.vfs.sandboxMounts();
        try {
          const env = { PATH, HOME: plan.home, TMPDIR: '/tmp', LANG: 'C.UTF-8', ...spec.env };
          return await runCommand(spec, (argv) => sandbox.spawn({ argv, cwd: plan.cwd, env, mounts: plan.mounts, network: session.network }, { jail }), plan.close, jail);
        } finally {
          plan.close();
        }
      } finally {
        await jail?.close();
      }
    },
  };
}

/**
 * `started` runs once the process exists (the sandbox's descriptors can be closed then). With a `jail`, its wall
 * time bounds the command too (the shorter of it and `timeoutMs` wins; only the wall time is a limit), its whole
 * group is killed at once, and its verdict (what tripped, what it used) joins the result.
 */
export function runCommand(spec: CommandSpec, launch: Launch, started?: () => void, jail?: Jail): Promise<CommandResult> {
  const t0 = performance.now();
  const argv: [string, ...string[]] = spec.args ? [spec.command, ...spec.args] : ['/bin/sh', '-c', spec.command];
  const maxOutput = jail ? jail.limits.outputBytes : spec.maxOutputBytes;
  const wallMs = jail ? jail.limits.wallSeconds * 1000 : Infinity;
  return new Promise((resolve) => {
    const child = launch(argv);
    started?.();
    const out = collector(maxOutput);
    const err = collector(maxOutput);
    let timedOut = false;
    let wallTripped = false;
    let cancelled = false;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is already gone
      }
      // and everything in its cgroup, wherever in the tree it went
      void jail?.kill();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      wallTripped = wallMs < spec.timeoutMs;
      killGroup();
    }, Math.min(spec.timeoutMs, wallMs));
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
        if (!spec.onOutput || sent >= maxOutput) return;
        const take = c.subarray(0, maxOutput - sent);
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
      const stderr = spawnError ? `${err.text()}${spawnError.message}` : err.text();
      const result: CommandResult = {
        exitCode,
        signal,
        stdout: out.text(),
        stderr,
        timedOut,
        cancelled,
        truncated: out.dropped || err.dropped,
        durationMs: Math.round(performance.now() - t0),
      };
      if (!jail) return resolve(result);
      void jail
        .verdict({ code: exitCode, signal, wallTripped, truncated: result.truncated, stderr })
        .catch(() => ({}) as Awaited<ReturnType<Jail['verdict']>>)
        .then((v) => resolve({ ...result, ...(v.limit ? { limit: v.limit, limitMessage: v.message } : {}), ...(v.usage ? { usage: v.usage } : {}) }));
    };
    // background children holding the pipes would keep `close` from firing: the command's lifetime ends with it
    child.once('exit', killGroup);
    child.once('error', (e) => finish(null, null, e));
    child.once('close', (code, sig) => finish(code, sig));
  });
}
