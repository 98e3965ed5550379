/**
 * A push-to-pull bridge: producers `push`, one consumer awaits `next(timeoutMs)`. Used where callbacks (the live hub)
 * meet async iteration (an SSE handler).
 */
export class AsyncQueue<T> {
  #items: T[] = [];
  #waiter: ((v: T | undefined) => void) | undefined;

  push(item: T): void {
    if (this.#waiter) {
      const w = this.#waiter;
      this.#waiter = undefined;
      w(item);
    } else this.#items.push(item);
  }

  /** The next item, or undefined when `timeoutMs` passes first (or `signal` aborts). */
  next(timeoutMs: number, signal?: AbortSignal): Promise<T | undefined> {
    if (this.#items.length) return Promise.resolve(this.#items.shift());
    if (signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const done = (v: T | undefined) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#waiter = undefined;
        resolve(v);
      };
      const onAbort = () => done(undefined);
      const timer = setTimeout(() => done(undefined), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiter = done;
    });
  }
}
