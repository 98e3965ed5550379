/**
 * Retries an operation with capped exponential backoff until it succeeds or `giveUpMs` has passed since the first
 * try (then the last error is thrown). For writes that fail for a while (a database failover, a lock timeout) and
 * must not be dropped.
 */
export interface RetryOptions {
  giveUpMs: number;
  firstDelayMs?: number;
  maxDelayMs?: number;
  onRetry?: (err: unknown, attempt: number) => void;
  /** Stops waiting between attempts: the last error is thrown at once. */
  signal?: AbortSignal;
  /** Errors for which another attempt is pointless (a refusal): thrown at once. Default: every error is retried. */
  retryIf?: (err: unknown) => boolean;
}

export async function retryWithBackoff<T>(op: () => Promise<T>, opts: RetryOptions): Promise<T> {
  const started = Date.now();
  let delay = opts.firstDelayMs ?? 100;
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (Date.now() - started + delay > opts.giveUpMs || opts.signal?.aborted || (opts.retryIf && !opts.retryIf(err))) throw err;
      opts.onRetry?.(err, attempt);
      await pause(delay, opts.signal);
      delay = Math.min(delay * 2, opts.maxDelayMs ?? 2_000);
    }
  }
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
