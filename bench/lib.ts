import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export { freePort } from '../test/support/listen.ts';

/** Shared helpers for benchmark scripts: start `svc serve` as a process, drive HTTP load, summarise latencies. */
const BIN = fileURLToPath(new URL('../bin/svc.js', import.meta.url));

export interface Proc {
  url: string;
  child: ChildProcess;
  /** What the process printed so far (stdout and stderr), for error messages. */
  output(): string;
  /** SIGTERM, then SIGKILL when the process has not exited after `graceMs` (default 30 s). */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  /** Node flags before the script, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
  /** A script to run instead of `bin/svc.js serve --port=0`; it must print `listening on <url>`. */
  script?: string;
}

/**
 * Starts `svc serve --port=0 …args` (or `opts.script`) on this Node and resolves with the URL it prints. `--port=N` in
 * `args` wins over the default (citty keeps the last value).
 */
export function startProcess(args: string[], env: Record<string, string>, opts: StartOptions = {}): Promise<Proc> {
  return new Promise((resolve, reject) => {
    const argv = opts.script ? [...(opts.nodeArgs ?? []), opts.script, ...args] : [...(opts.nodeArgs ?? []), BIN, 'serve', '--port=0', ...args];
    const child = spawn(process.execPath, argv, {
      // SVC_NO_BUNDLE=1 on the bench measures svc from its sources instead of its boot bundle
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOG_LEVEL: 'warn', ...(process.env.SVC_NO_BUNDLE ? { SVC_NO_BUNDLE: process.env.SVC_NO_BUNDLE } : {}), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let listening = false;
    const onData = (d: Buffer) => {
      out += d;
      if (out.length > 200_000) out = out.slice(-100_000);
      const m = listening ? null : /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        listening = true;
        resolve({
          url: m[1],
          child,
          output: () => out,
          stop: (graceMs = 30_000) =>
            new Promise<void>((r) => {
              if (child.exitCode !== null || child.signalCode !== null) return r();
              // a process that does not finish its graceful stop in time is killed, and says so
              const timer = setTimeout(() => {
                process.stderr.write(`[bench] ${argv.slice(-3).join(' ')} (pid ${child.pid}) did not exit ${graceMs} ms after SIGTERM; SIGKILL\n`);
                child.kill('SIGKILL');
              }, graceMs);
              child.once('exit', () => (clearTimeout(timer), r()));
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      if (!listening) reject(new Error(`exited ${code}: ${out}`));
    });
  });
}


/** Resident set size of a process in MiB (VmRSS from /proc/<pid>/status); NaN when it cannot be read. */
export function rssMiB(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** CPU time (user + system) a process has used so far, in ms (from /proc/<pid>/stat); NaN when it cannot be read. */
export function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command name (which may contain spaces) start at state; utime and stime are fields 14 and 15
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}
/** USER_HZ: 100 on every Linux that Node supports in practice. */
const CLOCK_TICKS = 100;

/** Samples a process's RSS every `ms` until stopped; returns the peak and the last sample in MiB. */
export function sampleRss(pid: number | undefined, ms = 100): { stop(): { peak: number; last: number } } {
  let peak = NaN;
  let last = NaN;
  const sample = () => {
    last = rssMiB(pid);
    if (Number.isNaN(peak) || last > peak) peak = last;
  };
  sample();
  const timer = setInterval(sample, ms);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { peak, last };
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Runs `concurrency` loops of `request` for `seconds`; returns requests/s and latency percentiles in ms. */
export async function load(request: () => Promise<void>, opts: { concurrency: number; seconds: number }) {
  const latencies: number[] = [];
  const until = performance.now() + opts.seconds * 1000;
  let errors = 0;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        try {
          await request();
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / opts.seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), n: latencies.length, errors };
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/**
 * The processes a process started, and theirs (the embedded PostgreSQL of `svc serve`: its watchdog, the postmaster,
 * its backends and helpers), read from /proc.
 */
export function descendants(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [child, parent] of parentOf) if (tree.has(parent) && !tree.has(child)) (tree.add(child), (grew = true));
  }
  tree.delete(pid);
  return [...tree];
}

/**
 * Memory of a group of processes in MiB: the sum of their RSS (which counts shared memory, such as PostgreSQL's
 * shared buffers, once per process that touched it) and of their PSS (each shared page split among its users: what
 * the group really holds).
 */
export function groupMemoryMiB(pids: number[]): { rss: number; pss: number; count: number } {
  let rss = 0;
  let pss = 0;
  let count = 0;
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      rss += Number(/^Rss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) / 1024;
      pss += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) / 1024;
      count++;
    } catch {
      // gone meanwhile
    }
  }
  return { rss, pss, count };
}

/** CPU time of a group of processes in ms, including children they have reaped (exited backends). */
export function groupCpuMs(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = fields.slice(fields.lastIndexOf(')') + 2).split(' ');
      total += ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / CLOCK_TICKS;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
