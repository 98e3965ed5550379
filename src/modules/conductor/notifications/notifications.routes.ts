import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { NotificationRequest } from '../../../contracts/run-callbacks.ts';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv, Principal } from '../identity/index.ts';
import { requireRole } from '../identity/guards.ts';
import { findOr404, inTenant, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import { getNotification, listNotifications } from './notifications.repo.ts';
import { notify, type NotifyDeps } from './notify.service.ts';
import { readEmailSettings, writeEmailSettings } from './settings.repo.ts';
import { SettingsBody } from './settings.schema.ts';
import { listEndpoints } from './endpoints.repo.ts';
import { replaceFromSettings, settingsWebhook } from './endpoints.service.ts';
import * as v from 'valibot';
import { NotificationView, SettingsView } from './notifications.schema.ts';
import { PageQuery } from '../list-query.ts';

/**
 * `/api/notifications`: the notification service behind the `notify` tool (and any API caller), the tenant's outbox
 * with each notification's deliveries, and the settings (`/settings`: read by members, written by admins). Mounted at
 * `/notifications`.
 */

/** A run token's subject is `run:<runId>`: the run whose tool asked. */
function runIdOf(p: Principal): string | null {
  return p.authKind === 'run_token' && p.subject?.startsWith('run:') ? p.subject.slice(4) : null;
}

export function notificationRoutes(deps: NotifyDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    // the webhooks are the tenant's webhook endpoints (/api/webhooks); no GET shows a secret
    .get('/settings', doc({ summary: 'Read the notification settings', description: 'Who gets event notifications by email, and the tenant\'s webhook endpoints (without their secrets).', response: SettingsView }), async (c) =>
      c.json(await inTenant(deps.db, c, async (tx) => ({ email: await readEmailSettings(tx), webhooks: (await listEndpoints(tx)).map(settingsWebhook) }))),
    )
    .put('/settings', doc({ summary: 'Replace the notification settings', description: 'Sets the email recipients and replaces the webhook endpoints with the list sent: an item with an id updates that endpoint, one without creates one (its secret is in this answer only), an endpoint left out is deleted. Admins and up.', body: SettingsBody, response: SettingsView, errors: [403] }), requireRole('admin', 'notification settings'), async (c) => {
      const body = await readJson(c, SettingsBody);
      const p = c.get('principal');
      const stored = await inTenant(deps.db, c, async (tx) => {
        const email = { ...body.email, to: [...new Set(body.email.to)] };
        await writeEmailSettings(tx, tenantOf(c), email, p.keyId ? `key:${p.keyId}` : p.subject);
        // the endpoints this PUT creates answer with their secret, this once
        return { email, webhooks: await replaceFromSettings(deps, tx, tenantOf(c), body.webhooks) };
      });
      return c.json(stored);
    })
    .post('/', doc({ summary: 'Send a notification', description: 'Queues a message on a channel (`email` by default) to `to` or the configured recipients, and to the webhooks that take `notify` events. With a run token (the notify tool) it records the run.', body: NotificationRequest, response: NotificationView, status: 201 }), async (c) => {
      const principal = c.get('principal');
      const body = await readJson(c, NotificationRequest);
      const created = await notify(deps, {
        tenantId: principal.tenantId,
        event: 'notify',
        channel: body.channel,
        to: body.to ?? null,
        subject: body.subject ?? null,
        message: body.message,
        runId: runIdOf(principal),
      });
      return c.json(created, 201);
    })
    .get('/', doc({ summary: 'List notifications', description: 'The tenant\'s outbox, newest first, each with its deliveries. With `limit`, a page and X-Total-Count.', query: PageQuery, response: v.array(NotificationView) }), async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await inTenant(deps.db, c, (tx) => listNotifications(tx, page)));
    })
    .get('/:id', doc({ summary: 'Get a notification', description: 'One notification with each delivery and its attempts.', response: NotificationView }), async (c) => {
      const id = c.req.param('id');
      return c.json(await findOr404(inTenant(deps.db, c, (tx) => getNotification(tx, id)), `unknown notification: ${id}`));
    });
}
