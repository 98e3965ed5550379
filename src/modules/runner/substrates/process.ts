import { spawn } from 'node:child_process';

/**
 * The `process` substrate for `run_command`: a child process in the session's work directory with a minimal
 * environment (no provider keys, tokens or runner settings leak in), a timeout, and capped output. It runs in its
 * own process group so a timeout or cancel kills everything it started, not just the shell. This is containment by
 * convention, not a sandbox: the command runs as the runner's user.
 */
export interface CommandSpec {
  /** With `args`: the program, run without a shell. Without: a `/bin/sh -c` command line. */
  command: string;
  args?: string[];
  cwd: string;
  timeoutMs: number;
  maxOutputBytes: number;
  /** Extra variables on top of the minimal environment. */
  env?: Record<string, string>;
  signal?: AbortSignal;
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
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;

/** Bounded collector: keeps reading (a full pipe would stall the child) but keeps only the first `max` bytes. */
function collector(max: number) {
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

export function runCommand(spec: CommandSpec): Promise<CommandResult> {
  const started = performance.now();
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: spec.cwd, TMPDIR: spec.cwd, LANG: 'C.UTF-8', ...spec.env };
  const [file, argv] = spec.args ? [spec.command, spec.args] : ['/bin/sh', ['-c', spec.command]];
  return new Promise((resolve) => {
    const child = spawn(file, argv, { cwd: spec.cwd, env, shell: false, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
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
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    let done = false;
    const finish = (exitCode: number | null, signal: string | null, spawnError?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode,
        signal,
        stdout: out.text(),
        stderr: spawnError ? `${err.text()}${spawnError.message}` : err.text(),
        timedOut,
        cancelled,
        truncated: out.dropped || err.dropped,
        durationMs: Math.round(performance.now() - started),
      });
    };
    // background children holding the pipes would keep `close` from firing: the command's lifetime ends with it
    child.once('exit', killGroup);
    child.once('error', (e) => finish(null, null, e));
    child.once('close', (code, sig) => finish(code, sig));
  });
}
