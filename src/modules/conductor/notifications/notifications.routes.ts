import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { NotificationRequest } from '../../../contracts/run-callbacks.ts';
import { readJson } from '../../../shared/http.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { IdentityEnv, Principal } from '../identity/index.ts';
import { findOr404, inTenant, pageOf, sendList } from '../../crud/index.ts';
import { getNotification, insertNotification, listNotifications } from './notifications.repo.ts';

/**
 * `/api/notifications`: the notification service behind the `notify` tool (and any API caller). There is no delivery
 * provider yet, so a notification is stored with status `queued` and a `detail` that says so; the list is the
 * tenant's outbox. Mounted at `/notifications`.
 */
export const NO_PROVIDER_DETAIL = 'stored; no delivery provider is configured for this channel, so it stays queued';

/** A run token's subject is `run:<runId>`: the run whose tool asked. */
function runIdOf(p: Principal): string | null {
  return p.authKind === 'run_token' && p.subject?.startsWith('run:') ? p.subject.slice(4) : null;
}

export function notificationRoutes(deps: { db: Kysely<DB> }): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .post('/', doc({ body: NotificationRequest }), async (c) => {
      const principal = c.get('principal');
      const body = await readJson(c, NotificationRequest);
      const row = {
        id: prefixedId('ntf'),
        tenantId: principal.tenantId,
        channel: body.channel,
        to: body.to ?? null,
        subject: body.subject ?? null,
        message: body.message,
        status: 'queued' as const,
        detail: NO_PROVIDER_DETAIL,
        runId: runIdOf(principal),
      };
      return c.json(await inTenant(deps.db, c, (tx) => insertNotification(tx, row)), 201);
    })
    .get('/', async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await inTenant(deps.db, c, (tx) => listNotifications(tx, page)));
    })
    .get('/:id', async (c) => {
      const id = c.req.param('id');
      return c.json(await findOr404(inTenant(deps.db, c, (tx) => getNotification(tx, id)), `unknown notification: ${id}`));
    });
}
