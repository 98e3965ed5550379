import type { WorkerCommand } from '../../../../contracts/sandbox-worker.ts';

/**
 * The commands waiting for one session's worker, and its long-polls waiting for a command: a command goes to a
 * waiting poll at once (unless that poll's caller has hung up), else it queues for the next poll. A poll that waits
 * `pollMs` for nothing resolves undefined (the route answers 204).
 */
export interface CommandQueue {
  push(cmd: WorkerCommand): void;
  next(signal: AbortSignal, pollMs: number): Promise<WorkerCommand | undefined>;
  /** Drops queued commands that match (a withdrawn run), or all of them. */
  drop(match?: (cmd: WorkerCommand) => boolean): void;
  /** Answers every waiting poll with `cmd` (a worker that is going away is told to shut down). */
  answerWaiting(cmd: WorkerCommand): void;
}

interface Waiter {
  give(cmd: WorkerCommand): boolean;
}

export function createCommandQueue(): CommandQueue {
  let queue: WorkerCommand[] = [];
  const waiters = new Set<Waiter>();
  return {
    push(cmd) {
      for (const w of waiters) {
        waiters.delete(w);
        if (w.give(cmd)) return;
      }
      queue.push(cmd);
    },
    next(signal, pollMs) {
      const queued = queue.shift();
      if (queued) return Promise.resolve(queued);
      return new Promise((resolve) => {
        const done = (cmd: WorkerCommand | undefined) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          waiters.delete(waiter);
          resolve(cmd);
        };
        const waiter: Waiter = {
          give(cmd) {
            if (signal.aborted) return false;
            done(cmd);
            return true;
          },
        };
        const onAbort = () => done(undefined);
        const timer = setTimeout(() => done(undefined), pollMs);
        signal.addEventListener('abort', onAbort, { once: true });
        waiters.add(waiter);
      });
    },
    drop(match) {
      queue = match ? queue.filter((c) => !match(c)) : [];
    },
    answerWaiting(cmd) {
      for (const w of [...waiters]) w.give(cmd);
      waiters.clear();
    },
  };
}
