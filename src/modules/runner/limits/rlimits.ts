import { readFileSync } from 'node:fs';
import type { SandboxLimits } from '../../../contracts/sandbox-limits.ts';

/**
 * Per-process limits in the child, set by util-linux `prlimit` just before it execs the program (prlimit is part of
 * util-linux, on every Debian and Ubuntu system, and does exactly this; a wrapper of our own would need a native
 * addon, as Node cannot set another process's rlimits): RLIMIT_CPU (SIGXCPU at the limit, SIGKILL a second later),
 * RLIMIT_FSIZE (SIGXFSZ, or EFBIG where the program ignores it), RLIMIT_NOFILE, RLIMIT_CORE=0, and RLIMIT_NPROC where
 * it means something: inside a sandbox's user namespace, where it counts that sandbox's processes (for host root the
 * kernel ignores it, and outside a user namespace it would count every process of the runner's user).
 */
const LIMIT_NAMES: Record<string, string> = { nofile: 'Max open files', nproc: 'Max processes', fsize: 'Max file size', cpu: 'Max cpu time' };

/** The runner's own hard limits: a child's soft and hard limits are held to them (only root may raise a hard limit). */
function hardLimits(): Record<string, number> {
  const out: Record<string, number> = {};
  let text = '';
  try {
    text = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return out;
  }
  for (const [key, label] of Object.entries(LIMIT_NAMES)) {
    const line = text.split('\n').find((l) => l.startsWith(label));
    const hard = line?.slice(label.length).trim().split(/\s+/)[1];
    if (hard && hard !== 'unlimited') out[key] = Number(hard);
  }
  return out;
}

/**
 * prlimit's options for `limits`; `nproc` only where it counts the sandbox's own processes. `cpu` false leaves CPU time
 * unlimited: a sandbox worker lives across many runs, so a lifetime CPU-time cap would end a busy session's worker
 * sooner or later (its CPU quota still holds it, and each command it starts has its own CPU time).
 */
export function prlimitArgs(limits: SandboxLimits, o: { nproc: boolean; asRoot: boolean; cpu?: boolean }): string[] {
  const hard = o.asRoot ? {} : hardLimits();
  const cap = (key: string, n: number) => Math.min(n, hard[key] ?? Infinity);
  const pair = (key: string, soft: number, hardValue = soft) => `--${key}=${cap(key, soft)}:${cap(key, hardValue)}`;
  const args = [
    ...(o.cpu === false ? [] : [pair('cpu', limits.cpuSeconds, limits.cpuSeconds + 1)]),
    pair('fsize', limits.fileMiB * 1024 * 1024),
    pair('nofile', limits.openFiles),
    '--core=0:0',
  ];
  if (o.nproc) args.push(pair('nproc', limits.pids));
  return args;
}
