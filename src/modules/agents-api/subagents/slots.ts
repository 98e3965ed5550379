import type { SlotHold } from '../turns/turn-state.ts';

/**
 * At most `max_concurrent_subagents` subagents of a session run at once; more calls wait in line, in order. A subagent
 * that waits for subagents of its own does not run meanwhile: it gives its place up (`SlotHold.pause`) and waits for
 * one again when they are done, so nested subagents never wait on a place their own parent holds (a cap of one
 * would deadlock otherwise).
 */
export interface Slots {
  /** A place among the session's running subagents; waits in line when `max` run already. */
  acquire(sessionId: string, max: number, signal: AbortSignal): Promise<Held>;
}

export interface Held extends SlotHold {
  /** Gives the place up for good (the subagent's turn ended). */
  release(): void;
}

export function createSlots(): Slots {
  const slots = new Map<string, { running: number; queue: Array<() => void> }>();

  function take(sessionId: string, max: number, signal: AbortSignal): Promise<() => void> {
    let s = slots.get(sessionId);
    if (!s) slots.set(sessionId, (s = { running: 0, queue: [] }));
    const slot = s;
    const release = () => {
      slot.running--;
      const next = slot.queue.shift();
      if (next) next();
      else if (slot.running === 0 && slots.get(sessionId) === slot) slots.delete(sessionId);
    };
    if (slot.running < max) {
      slot.running++;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        signal.removeEventListener('abort', abandon);
        slot.running++;
        resolve(release);
      };
      const abandon = () => {
        const i = slot.queue.indexOf(go);
        if (i >= 0) slot.queue.splice(i, 1);
        reject(new Error('the call was abandoned while waiting for a subagent slot'));
      };
      slot.queue.push(go);
      signal.addEventListener('abort', abandon, { once: true });
    });
  }

  return {
    async acquire(sessionId, max, signal) {
      let release: (() => void) | undefined = await take(sessionId, max, signal);
      let paused = 0;
      let ended = false;
      return {
        release() {
          ended = true;
          release?.();
          release = undefined;
        },
        pause() {
          if (paused++ === 0) {
            release?.();
            release = undefined;
          }
          let resumed = false;
          return async (resumeSignal) => {
            if (resumed) return;
            resumed = true;
            if (--paused > 0 || ended) return;
            // the last of its own subagents to finish takes a place again (a cancelled one goes on without); one
            // taken while it paused again, or ended, is given back at once
            const again = await take(sessionId, max, resumeSignal).catch(() => undefined);
            if (again && (paused > 0 || ended || release)) again();
            else if (again) release = again;
          };
        },
      };
    },
  };
}
