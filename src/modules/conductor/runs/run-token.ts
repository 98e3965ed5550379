import { withTenant } from '../../../db/index.ts';
import { runTokenTimes, type RenewedRunToken } from '../../../contracts/run-callbacks.ts';
import { conflict, forbidden, notFound, unavailable } from '../../../shared/errors.ts';
import type { Principal } from '../identity/index.ts';
import { getRun } from './runs.repo.ts';
import type { RunDeps } from './runs.service.ts';

/**
 * Run token rotation (`POST /api/runs/self/token`): the runner of a running run trades the run's token, before it
 * expires, for a fresh one of the same run. Tokens stay short-lived (SVC_RUN_TOKEN_TTL_S) while a run may last as long
 * as its commands, its model and the people it waits for take: a run has no maximum duration to mint one token for.
 * Only a valid run token gets here (an expired or forged one is 401 at authentication), and only while its run is
 * running (a finished run's token is 409), so a token that leaks is renewable no longer than its run lasts.
 */
export async function renewRunToken(deps: Pick<RunDeps, 'db' | 'mintRunToken'>, p: Principal): Promise<RenewedRunToken> {
  const runId = p.authKind === 'run_token' && p.subject?.startsWith('run:') ? p.subject.slice(4) : undefined;
  if (!runId) throw forbidden("a run token is renewed with itself (the run's own token), not with another credential");
  if (!deps.mintRunToken) throw unavailable('this conductor mints no run tokens');
  const run = await withTenant(deps.db, p.tenantId, (tx) => getRun(tx, runId));
  if (!run) throw notFound(`unknown run: ${runId}`);
  if (run.status !== 'running') throw conflict(`run ${runId} is ${run.status}, not running: its token is not renewed`);
  const runToken = await deps.mintRunToken(p.tenantId, runId);
  return { runToken, expiresAt: new Date(runTokenTimes(runToken)!.exp * 1000).toISOString() };
}
