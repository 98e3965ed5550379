/**
 * Plumbing of the direct transport: how a client whose server module lives in the same process (role `all`, or any
 * pair of roles) calls it as typed functions and async iterables, with the same failures the HTTP transport gives.
 */
import { toHttpError } from '../shared/http.ts';
import { CallError } from './http-client.ts';

/**
 * A direct call's failure as the HTTP transport reports it: a CallError with the status the route would have
 * answered (an AppError's, 500 for anything else) and `<what>: <message>`. An abort of the caller's own signal is
 * rethrown as is, as `send` does.
 */
export function callErrorOf(err: unknown, what: string, signal?: AbortSignal): unknown {
  if (err instanceof CallError || signal?.aborted) return err;
  const { status, message } = toHttpError(err);
  return new CallError(status, `${what}: ${message}`, { cause: err });
}

/**
 * `source` as a caller reads a streamed body: once `signal` aborts, the iteration ends at once (as a cancelled body
 * does, even while the source waits), and `onEnd` runs once however it ends (finished, aborted, or left early), so
 * the callee releases what the run holds. Pull-based: the source advances only when the caller asks for the next item.
 */
export function untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal | undefined, onEnd: () => void): AsyncIterable<T> {
  const it = source[Symbol.asyncIterator]();
  let ended = false;
  let stop: (() => void) | undefined;
  const end = () => {
    if (ended) return;
    ended = true;
    signal?.removeEventListener('abort', onAbort);
    stop?.();
    onEnd();
    void Promise.resolve(it.return?.()).catch(() => {});
  };
  const onAbort = () => end();
  if (signal?.aborted) end();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const done = (): IteratorResult<T> => ({ done: true, value: undefined });
  const iterator: AsyncIterator<T> = {
    async next() {
      if (ended) return done();
      const stopped = new Promise<IteratorResult<T>>((resolve) => (stop = () => resolve(done())));
      try {
        const r = await Promise.race([it.next(), stopped]);
        if (r.done) end();
        return r;
      } catch (err) {
        end();
        throw err;
      } finally {
        stop = undefined;
      }
    },
    async return() {
      end();
      return done();
    },
  };
  return { [Symbol.asyncIterator]: () => iterator };
}
