/** A one-reader queue: `push` from the event upload, `end` when the run is over, iterate once from the run stream. */
export interface Channel<T> {
  push(value: T): void;
  end(): void;
  readonly ended: boolean;
  [Symbol.asyncIterator](): AsyncIterator<T>;
}

export function createChannel<T>(): Channel<T> {
  const items: T[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  return {
    push(value) {
      if (ended) return;
      items.push(value);
      notify();
    },
    end() {
      ended = true;
      notify();
    },
    get ended() {
      return ended;
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (items.length) {
          yield items.shift()!;
          continue;
        }
        if (ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}
