import { CallError } from '../../../contracts/http-client.ts';
import type { RunCallbacksClient } from '../../../contracts/run-callbacks.client.ts';
import { runTokenLifetimeMs } from '../../../contracts/run-callbacks.ts';
import { describeError } from '../../../shared/errors.ts';
import { createLogger } from '../../../shared/log.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';

const log = createLogger('runner:run-token');

/** Answers after which renewing again is pointless: the token is not valid (401), not a run's (403), its run is gone or over (404, 409). */
const FINAL = new Set([401, 403, 404, 409]);

/**
 * Keeps the token of the run in flight on `rec` fresh while the run lasts: a third of the way through each token's
 * life (counted from when it reached this runner, so no clock has to agree with the conductor's) it is traded for a
 * fresh one (`POST /api/runs/self/token`), and the run's tools call the conductor with that one from then on. A
 * renewal that fails is tried again every tenth of the lifetime until the token expires; a refusal (the run ended,
 * the token was not valid) stops it. A token that arrives otherwise (with an approval's decision) is followed as is.
 */
export function keepRunTokenFresh(conductor: Pick<RunCallbacksClient, 'renewRunToken'>, rec: SessionRecord): { stop(): void } {
  const ac = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let held: string | undefined;
  let since = 0;
  let failures = 0;

  const schedule = () => {
    const token = rec.runToken;
    if (ac.signal.aborted || !token) return;
    if (token !== held) [held, since, failures] = [token, performance.now(), 0];
    const life = runTokenLifetimeMs(token);
    if (!life) return;
    const left = since + life - performance.now();
    if (left <= 0) return void log.warn('the run token expired before it could be renewed', { sessionId: rec.id, runId: rec.activeRunId });
    const delay = failures === 0 ? since + life / 3 - performance.now() : Math.min(life / 10, left / 2);
    timer = setTimeout(() => void renew(token), Math.max(0, delay));
    timer.unref?.();
  };

  const renew = async (token: string) => {
    if (rec.runToken !== token) return schedule(); // a fresh one came meanwhile (an approval's decision)
    try {
      const renewed = await conductor.renewRunToken(token, ac.signal);
      if (ac.signal.aborted || rec.runToken !== token) return schedule();
      rec.runToken = renewed.runToken;
    } catch (err) {
      if (ac.signal.aborted) return;
      if (err instanceof CallError && err.status !== undefined && FINAL.has(err.status)) {
        return void log.warn('the conductor refused to renew the run token', { sessionId: rec.id, runId: rec.activeRunId, error: describeError(err) });
      }
      failures++;
      log.warn('renewing the run token failed; trying again', { sessionId: rec.id, runId: rec.activeRunId, error: describeError(err) });
    }
    schedule();
  };

  schedule();
  return {
    stop() {
      ac.abort();
      clearTimeout(timer);
    },
  };
}
