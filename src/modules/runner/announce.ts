import { INTERNAL_TOKEN_HEADER, RUNNER_ANNOUNCE_PATH } from '../../contracts/runner.ts';
import type { Logger } from '../../shared/log.ts';
import { retryWithBackoff } from '../../shared/retry.ts';

class Refused extends Error {}

/**
 * Tells the conductor at `conductorUrl` that this runner (re)started, so it restores the runner's registries and
 * places runs on it at once. Retried in the background while the conductor is unreachable (it may boot after us);
 * a refusal (401 wrong token, 404 runner not in its SVC_RUNNERS) is logged once and not retried.
 */
export function announce(opts: { conductorUrl: string; publicUrl: string; internalToken: string; log: Logger; signal: AbortSignal }): Promise<void> {
  const url = `${opts.conductorUrl.replace(/\/+$/, '')}${RUNNER_ANNOUNCE_PATH}`;
  const attempt = async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [INTERNAL_TOKEN_HEADER]: `Bearer ${opts.internalToken}` },
      body: JSON.stringify({ url: opts.publicUrl }),
      signal: AbortSignal.any([opts.signal, AbortSignal.timeout(30_000)]),
    });
    const text = await res.text();
    if (res.status === 401 || res.status === 404) throw new Refused(`${res.status} ${text.slice(0, 300)}`);
    if (!res.ok) throw new Error(`${res.status} ${text.slice(0, 300)}`);
  };
  return retryWithBackoff(attempt, { giveUpMs: 10 * 60_000, firstDelayMs: 250, maxDelayMs: 10_000, signal: opts.signal, retryIf: (err) => !(err instanceof Refused) }).then(
    () => opts.log.info('announced to the conductor', { conductorUrl: opts.conductorUrl }),
    (err: unknown) => {
      if (!opts.signal.aborted) opts.log.warn('announcing to the conductor failed', { conductorUrl: opts.conductorUrl, error: err instanceof Error ? err.message : String(err) });
    },
  );
}
