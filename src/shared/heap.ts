import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

/**
 * How much garbage the server's V8 heap may hold beside what it keeps, for `svc serve` (never for svc embedded as a
 * library: that process is the user's). Under load V8 sizes its heap for the machine, not for what the process keeps:
 * on a machine with a few GiB the young generation grows to 64 MiB per semi-space, and the old generation may grow to
 * four times what survived its last full collection before collecting again. svc keeps about 50 MiB, so the all-in-one
 * server peaked above 600 MiB RSS under `npm run bench`, most of it garbage not collected yet. The young generation's
 * cap (16 MiB by default, config.ts) is what holds it under 250 MiB: a scavenge costs what survives it, not what it
 * frees, so more frequent ones cost little; the old generation's factor costs more full collections, each of the
 * whole live set, and is left to V8 unless asked.
 */
export interface HeapLimits {
  /** Cap of the young generation (both semi-spaces), MiB; 0 leaves V8's own sizing. */
  youngMiB: number;
  /** The old generation grows to (100 + this)% of what survived the last full collection; 0 leaves V8's own factor. */
  growingPercent: number;
}

/**
 * Applies `limits` to this process's V8 heap, at run time. V8 fixes its young generation's maximum at start, so the cap
 * is held by stopping the young generation's growth once it reached the cap (and letting it grow again after V8 shrank
 * it, on an idle server): its growth factor is read at each resize, as is the old generation's. Flags given on the
 * command line (`--max-semi-space-size`, `--heap-growing-percent`) win; config leaves a limit at 0 when NODE_OPTIONS
 * sets it. The check runs after the collection's event-loop turn, so a turn that allocates a great deal can see V8
 * resize more than once before it: the cap is a target that holds almost always, not a hard bound. Returns a stop
 * function.
 */
export function limitHeap(limits: HeapLimits, execArgv: readonly string[] = process.execArgv): () => void {
  const given = (flag: string) => execArgv.some((a) => a.replace(/_/g, '-').startsWith(flag));
  if (limits.growingPercent > 0 && !given('--heap-growing-percent')) v8.setFlagsFromString(`--heap-growing-percent=${limits.growingPercent}`);
  if (limits.youngMiB <= 0 || given('--max-semi-space-size') || given('--semi-space-growth-factor')) return () => {};
  const cap = limits.youngMiB * 2 ** 20;
  let held = false;
  const check = () => {
    const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
    // held before the resize that would pass the cap (a resize doubles it), not after: the cap is a bound
    const hold = young * 2 > cap;
    if (hold === held) return;
    held = hold;
    v8.setFlagsFromString(`--semi-space-growth-factor=${hold ? 1 : 2}`);
  };
  check();
  // after every collection: the young generation is resized only then
  const gcs = new PerformanceObserver(check);
  gcs.observe({ entryTypes: ['gc'] });
  return () => gcs.disconnect();
}
