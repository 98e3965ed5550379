/**
 * Waiting for "nothing is running any more" with a time limit (a drain): the owner counts its own work and calls
 * `wake()` when the count reaches zero; `settled(idle, timeoutMs)` resolves at once when already idle, else on the
 * next wake or after `timeoutMs`, whichever comes first.
 */
export function idleWaiters(): { wake(): void; settled(idle: boolean, timeoutMs: number): Promise<void> } {
  const waiters = new Set<() => void>();
  return {
    wake: () => waiters.forEach((w) => w()),
    settled(idle, timeoutMs) {
      if (idle) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        waiters.add(done);
      });
    },
  };
}
