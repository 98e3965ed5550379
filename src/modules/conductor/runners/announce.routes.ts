import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import { INTERNAL_TOKEN_HEADER, RUNNER_ANNOUNCE_PATH } from '../../../contracts/runner.ts';
import type { Database } from '../../../db/index.ts';
import { notFound, unauthorized } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { Logger } from '../../../shared/log.ts';
import { safeEqual } from '../../../shared/safe-equal.ts';
import type { Broadcaster } from './broadcast.ts';
import type { Fleet } from './fleet.ts';

/** Replicas tell each other that a runner announced itself: each probes and restores it at once. */
export const ANNOUNCE_CHANNEL = 'svc_runner_announce';

const Announce = v.object({ url: v.pipe(v.string('url: expected the runner’s public URL'), v.minLength(1, 'url: expected the runner’s public URL')) });

/**
 * `POST /internal/runners/announce {url}` (internal token): a runner of SVC_RUNNERS (re)started. This replica probes
 * it and pushes the registries back before answering 204, and tells the other replicas to do the same, so the next
 * run is placed on it at once rather than after a reconcile interval.
 */
export function announceRoutes(deps: { fleet: Fleet; broadcaster: Broadcaster; database: Database; internalToken: string; log: Logger }): Hono {
  const expected = `Bearer ${deps.internalToken}`;
  return new Hono().post(RUNNER_ANNOUNCE_PATH, doc({ body: Announce }), async (c) => {
    if (!safeEqual(c.req.header(INTERNAL_TOKEN_HEADER) ?? '', expected)) throw unauthorized(`invalid or missing internal token (${INTERNAL_TOKEN_HEADER})`);
    const { url } = await readJson(c, Announce);
    const member = deps.fleet.byUrl(url.replace(/\/+$/, ''));
    if (!member) throw notFound(`unknown runner: ${url} is not one of this conductor's runners (SVC_RUNNERS)`);
    await deps.broadcaster.reconcileNow();
    await deps.database.notify(ANNOUNCE_CHANNEL, member.url).catch((err) => deps.log.warn('telling the other replicas about a runner failed', { error: String(err) }));
    deps.log.info('runner announced itself', { url: member.url, healthy: member.healthy });
    return c.body(null, 204);
  });
}
