/**
 * The background-work half of a feature (conductor and agents API alike): what `start` takes, `drain` ends at a
 * graceful stop (work in flight, so open responses finish) and `stop` releases. Lists of them start in order and
 * drain and stop in reverse, so a part may rely on those listed before it for its whole life.
 */
export interface Lifecycle {
  /** What requests rely on (LISTENs, hooks, queues), started in list order after every part is built. */
  start?(): Promise<void>;
  /**
   * Background work nothing answered at boot waits for (loops, sweeps, recoveries): begun in list order once the process
   * serves, so a restart answers without it. Fire and forget: the part logs its own failures.
   */
  serving?(): void;
  /** First phase of a graceful stop, in reverse list order. */
  drain?(): Promise<void>;
  /** Last phase, in reverse list order, after every part drained. */
  stop?(): Promise<void>;
}

/** Starts the parts in order; when one fails, those already started are drained and stopped (reverse order) and the failure is thrown. */
export async function startInOrder(parts: readonly Lifecycle[]): Promise<void> {
  const started: Lifecycle[] = [];
  try {
    for (const p of parts) {
      await p.start?.();
      started.push(p);
    }
  } catch (err) {
    for (const p of started.reverse()) {
      await p.drain?.().catch(() => {});
      await p.stop?.().catch(() => {});
    }
    throw err;
  }
}

/**
 * Starts parts that do not rely on one another side by side; when one fails, those that started are drained and
 * stopped, and the first failure is thrown (as `startInOrder` leaves nothing of a failed start running).
 */
export async function startSideBySide(parts: readonly Lifecycle[]): Promise<void> {
  const results = await Promise.allSettled(parts.map((p) => p.start?.()));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (!failed) return;
  for (const [i, p] of parts.entries()) {
    if (results[i].status === 'rejected') continue;
    await p.drain?.().catch(() => {});
    await p.stop?.().catch(() => {});
  }
  throw failed.reason;
}

/** Begins the parts' `serving` work, in list order. */
export function servingInOrder(parts: readonly Lifecycle[]): void {
  for (const p of parts) p.serving?.();
}

export async function drainInReverse(parts: readonly Lifecycle[]): Promise<void> {
  for (const p of [...parts].reverse()) await p.drain?.();
}

export async function stopInReverse(parts: readonly Lifecycle[]): Promise<void> {
  for (const p of [...parts].reverse()) await p.stop?.();
}
