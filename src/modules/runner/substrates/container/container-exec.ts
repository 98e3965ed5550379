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
 */
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const MARK = 'SVC_EXEC_ID';
/**
 * Kills every process whose environment has `MARK=$1` (the killer's own environment does not). The worker's processes
 * belong to another user: their environ cannot be opened (quietly: stderr is redirected before the input).
 */
const KILL = `for p in /proc/[0-9]*; do [ "\${p#/proc/}" = "$$" ] && continue; tr '\\0' '\\n' 2>/dev/null < "$p/environ" | grep -qx "${MARK}=$1" && kill -9 "\${p#/proc/}" 2>/dev/null; done; exit 0`;
/** Runs the command, then ends what it left running (everything else carrying its marker but this shell). */
const WRAP = `"$@"; rc=$?; ${KILL.replace('$1', `$${MARK}`).replace('; exit 0', '')}; exit $rc`;

export interface ExecTarget {
  engine: Engine;
  containerId: string;
  user: string;
  cwd: string;
  home: string;
}

export async function execInContainer(t: ExecTarget, spec: CommandSpec): Promise<CommandResult> {
  const t0 = performance.now();
  const id = randomId(16);
  const argv = spec.args ? [spec.command, ...spec.args] : ['/bin/sh', '-c', spec.command];
  const env = { PATH, HOME: t.home, TMPDIR: '/tmp', LANG: 'C.UTF-8', ...spec.env, [MARK]: id };
  const out = collector(spec.maxOutputBytes);
  const err = collector(spec.maxOutputBytes);
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
  }, spec.timeoutMs);
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
      { Cmd: ['env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), '/bin/sh', '-c', WRAP, 'svc-exec', ...argv], Env: [], User: t.user, WorkingDir: t.cwd },
      (stream, chunk) => {
        (stream === 1 ? out : err).push(chunk);
        // live output stops where the kept output stops (the cap), as for the process substrate
        if (!spec.onOutput || sent[stream] >= spec.maxOutputBytes) return;
        const take = chunk.subarray(0, spec.maxOutputBytes - sent[stream]);
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
  return {
    exitCode: killed ? null : exitCode,
    signal: killed ? 'SIGKILL' : null,
    stdout: out.text(),
    stderr: failure ? `${err.text()}${failure}` : err.text(),
    timedOut,
    cancelled,
    truncated: out.dropped || err.dropped,
    durationMs: Math.round(performance.now() - t0),
  };
}
