import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { childEnv, type OsUser } from './os-user.ts';

/**
 * One postmaster, started under a small `sh` watchdog that holds a pipe from svc: when svc closes it, or dies in
 * any way (kill -9 included), the pipe reaches end-of-file and the watchdog asks PostgreSQL for a fast shutdown, so a
 * dead svc leaves no database behind. A throwaway cluster gets an immediate shutdown instead (its data is not kept)
 * and the watchdog removes its folder once PostgreSQL has stopped on request. The watchdog runs in its own process group, so a terminal's Ctrl-C reaches svc alone, which
 * then stops the database after its own graceful stop (runs in flight still write their terminal events).
 */
const WATCHDOG = `
root="$1"; shift
"$@" 3<&- &
pg=$!
( while read -r _ <&3; do :; done; if [ -n "$root" ]; then : > "$root/stop"; kill -QUIT "$pg"; else kill -INT "$pg"; fi 2>/dev/null ) &
watch=$!
exec 3<&-
wait "$pg"; code=$?
[ -n "$root" ] && [ -e "$root/stop" ] && rm -rf "$root"
kill "$watch" 2>/dev/null
exit "$code"`;

export interface Postmaster {
  /** Resolves when PostgreSQL accepts connections; rejects with its last log lines if it exits first. */
  ready: Promise<void>;
  /** Resolves when the watchdog has exited (PostgreSQL has stopped). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last lines PostgreSQL logged, for error messages. */
  tail(): string;
  /** Closes the watchdog's pipe: PostgreSQL shuts down fast (running statements are cancelled). */
  requestStop(): void;
  child: ChildProcess;
}

export function startPostmaster(opts: {
  postgres: string;
  args: string[];
  user: OsUser;
  /** For a throwaway cluster: the folder the watchdog removes after a requested stop. */
  removeOnStop?: string;
  onLog(line: string): void;
}): Postmaster {
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'svc-pg-watchdog', opts.removeOnStop ?? '', opts.postgres, ...opts.args], {
    uid: opts.user.uid,
    gid: opts.user.gid,
    env: childEnv(),
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let partial = '';
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    onReady = resolve;
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`embedded PostgreSQL exited during start (${signal ?? `exit ${code}`}): ${lines.join('\n')}`)));
  });
  ready.catch(() => {}); // a late failure is reported through `exited` too
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      if (lines.length > 40) lines.shift();
      opts.onLog(line);
      if (line.includes('database system is ready to accept connections')) onReady();
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const pipe = child.stdio[3] as Writable;
  pipe.on('error', () => {}); // the watchdog already gone
  return {
    ready,
    exited,
    tail: () => lines.join('\n'),
    requestStop: () => pipe.destroy(),
    child,
  };
}
