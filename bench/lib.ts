import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Shared helpers for benchmark scripts: start `svc serve` as a process, drive HTTP load, summarise latencies. */
const BIN = fileURLToPath(new URL('../bin/svc.js', import.meta.url));

export interface Proc {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export function startProcess(args: string[], env: Record<string, string>): Promise<Proc> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port=0', ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const onData = (d: Buffer) => {
      out += d;
      const m = /svc listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        child.stdout!.off('data', onData);
        resolve({
          url: m[1],
          child,
          stop: () => new Promise((r) => (child.exitCode !== null ? r() : (child.once('exit', () => r()), child.kill('SIGTERM')))),
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d) => (out += d));
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
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
