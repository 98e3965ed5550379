import { limitExceeded, limitMessage, type LimitExceeded, type SandboxLimits } from '../../../../contracts/sandbox-limits.ts';
import { randomId } from '../../../../shared/ids.ts';
import { collector, type CommandResult, type CommandSpec } from '../process/commands.ts';
import type { Engine } from './engine.ts';

/**
 * `run_command` of a container session: an exec in the session's container, as the command user (not the worker's
 * user, so a command cannot read the worker's token or state), with the same minimal environment, timeout, cancel and
 * output cap as the process substrate's commands.
 *
 * The engine has no "kill this exec": every process of one command carries a marker variable, and ending the command
 * is a second exec that kills the processes carrying it. A command that leaves children behind (holding its output
 * open) is ended the same way once its first process exits, as the process substrate ends a command's process group.
 *
 * Limits: the container's cgroup (memory, CPU quota, pids) and rlimits (open files, file size) hold the command as they
 * hold the worker: an exec inherits the container's; its CPU time is its own (set by its wrapper). Its wall time and kept output are the
 * session's `wallSeconds` and `outputBytes` when those are below what the tool asked for. The worker and its commands
 * share one memory limit, so every command raises its own OOM score to the maximum (raising needs no privilege): when
 * the container runs out of memory, the kernel kills the command's processes, not the worker. A command whose process
 * died of SIGKILL while the container's OOM-kill count rose was killed for memory; one that ended with SIGXCPU or
 * SIGXFSZ hit its CPU time or file size limit (an exit status of 128+n is read as signal n, as a shell reports it).
 */
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const MARK = 'SVC_EXEC_ID';
/**
 * Kills every process whose environment has `MARK=$1` (the killer's own environment does not). The worker's processes
 * belong to another user: their environ cannot be opened (quietly: stderr is redirected before the input).
 */
const KILL = `for p in /proc/[0-9]*; do [ "\${p#/proc/}" = "$$" ] && continue; tr '\\0' '\\n' 2>/dev/null < "$p/environ" | grep -qx "${MARK}=$1" && kill -9 "\${p#/proc/}" 2>/dev/null; done; exit 0`;
/**
 * Runs the command ($1: its CPU seconds, soft, so it gets SIGXCPU; hard 5 s later) as the kernel's first choice when
 * the container runs out of memory, then ends what it left running (everything else carrying its marker but this shell).
 */
const WRAP = `t=$1; shift; ulimit -St "$t" 2>/dev/null; ulimit -Ht $((t + 5)) 2>/dev/null; echo 1000 > /proc/self/oom_score_adj 2>/dev/null; "$@"; rc=$?; ${KILL.replace('$1', `$${MARK}`).replace('; exit 0', '')}; exit $rc`;
/** The container cgroup's OOM kills so far: `oom_kill N` in memory.events (cgroup v2) or memory.oom_control (v1). */
const OOM_COUNT = 'cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null; exit 0';
const SIGKILL = 128 + 9;
const SIGXCPU = 128 + 24;
const SIGXFSZ = 128 + 25;

export interface ExecTarget {
  engine: Engine;
  containerId: string;
  user: string;
  cwd: string;
  home: string;
  /** The session's limits: the values a tripped limit names, the command's wall time and kept output. */
  limits: SandboxLimits;
  /** The container's OOM kills already accounted for (its cgroup's count; a new container starts at 0). */
  memory: { oomKills: number };
}

/** The container's OOM-kill count, or undefined when its cgroup cannot be read from inside. */
export async function oomKills(t: Pick<ExecTarget, 'engine' | 'containerId' | 'user'>): Promise<number | undefined> {
  const parts: Buffer[] = [];
  await t.engine.exec(t.containerId, { Cmd: ['env', '-i', `PATH=${PATH}`, '/bin/sh', '-c', OOM_COUNT], Env: [], User: t.user, WorkingDir: '/' }, (_, chunk) => parts.push(chunk));
  const m = /^oom_kill (\d+)$/m.exec(Buffer.concat(parts).toString('utf8'));
  return m ? Number(m[1]) : undefined;
}

export async function execInContainer(t: ExecTarget, spec: CommandSpec): Promise<CommandResult> {
  const t0 = performance.now();
  const id = randomId(16);
  const argv = spec.args ? [spec.command, ...spec.args] : ['/bin/sh', '-c', spec.command];
  const env = { PATH, HOME: t.home, TMPDIR: '/tmp', LANG: 'C.UTF-8', ...spec.env, [MARK]: id };
  const wallMs = t.limits.wallSeconds * 1000;
  const timeoutMs = Math.min(spec.timeoutMs, wallMs);
  const maxOutputBytes = Math.min(spec.maxOutputBytes, t.limits.outputBytes);
  const out = collector(maxOutputBytes);
  const err = collector(maxOutputBytes);
  const decoders = { 1: new TextDecoder(), 2: new TextDecoder() };
  const sent = { 1: 0, 2: 0 };
  let timedOut = false;
  let cancelled = false;
  let killing: Promise<unknown> | undefined;
  const kill = () =>
    (killing ??= t.engine
      .exec(t.containerId, { Cmd: ['env', '-i', `PATH=${PATH}`, '/bin/sh', '-c', KILL, 'svc-kill', id], Env: [], User: t.user, WorkingDir: '/' }, () => {})
      .catch(() => {}));
  const timer = setTimeout(() => {
    timedOut = true;
    void kill();
  }, timeoutMs);
  const onAbort = () => {
    cancelled = true;
    void kill();
  };
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  if (spec.signal?.aborted) onAbort();
  let exitCode: number | null = null;
  let failure = '';
  try {
    exitCode = await t.engine.exec(
      t.containerId,
      // `env -i`: an exec inherits the container's environment (the worker's token among it); a command gets only its own
      { Cmd: ['env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), '/bin/sh', '-c', WRAP, 'svc-exec', String(t.limits.cpuSeconds), ...argv], Env: [], User: t.user, WorkingDir: t.cwd },
      (stream, chunk) => {
        (stream === 1 ? out : err).push(chunk);
        // live output stops where the kept output stops (the cap), as for the process substrate
        if (!spec.onOutput || sent[stream] >= maxOutputBytes) return;
        const take = chunk.subarray(0, maxOutputBytes - sent[stream]);
        sent[stream] += take.byteLength;
        const text = decoders[stream].decode(take, { stream: true });
        if (text) spec.onOutput(text);
      },
    );
  } catch (e) {
    failure = e instanceof Error ? e.message : String(e);
  } finally {
    clearTimeout(timer);
    spec.signal?.removeEventListener('abort', onAbort);
    await killing;
  }
  // what we killed reads as the process substrate's: no exit code, killed by SIGKILL
  const killed = (timedOut || cancelled) && (exitCode === null || exitCode >= 128);
  let limit: LimitExceeded | undefined;
  let signal: string | null = killed ? 'SIGKILL' : null;
  if (timedOut && timeoutMs === wallMs) limit = limitExceeded('wallSeconds', t.limits.wallSeconds, 'command');
  else if (!killed && exitCode === SIGKILL && (await oomKilled(t))) [limit, signal] = [limitExceeded('memoryMiB', t.limits.memoryMiB, 'command'), 'SIGKILL'];
  else if (!killed && exitCode === SIGXCPU) [limit, signal] = [limitExceeded('cpuSeconds', t.limits.cpuSeconds, 'command'), 'SIGXCPU'];
  else if (!killed && exitCode === SIGXFSZ) [limit, signal] = [limitExceeded('fileMiB', t.limits.fileMiB, 'command'), 'SIGXFSZ'];
  const truncated = out.dropped || err.dropped;
  // output cut at the session's limit is named too (the command itself went on)
  if (!limit && truncated && maxOutputBytes === t.limits.outputBytes) limit = limitExceeded('outputBytes', t.limits.outputBytes, 'command');
  const stderr = `${err.text()}${failure}`;
  // the model reads the output: a limit that killed the command is named there too
  const named = limit && limit.key !== 'outputBytes' ? `[${limitMessage(limit)}]` : '';
  return {
    exitCode: signal ? null : exitCode,
    signal,
    stdout: out.text(),
    stderr: named ? [stderr, named].filter(Boolean).join('\n') : stderr,
    timedOut,
    cancelled,
    truncated,
    durationMs: Math.round(performance.now() - t0),
    ...(limit ? { limit } : {}),
  };
}

/** Whether the container's OOM-kill count rose since last accounted for (then this command's SIGKILL was the kernel's). */
async function oomKilled(t: ExecTarget): Promise<boolean> {
  const count = await oomKills(t).catch(() => undefined);
  if (count === undefined || count <= t.memory.oomKills) return false;
  t.memory.oomKills = count;
  return true;
}
