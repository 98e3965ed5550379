import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { NotificationRequest } from '../../../contracts/run-callbacks.ts';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv, Principal } from '../identity/index.ts';
import { hasRole, requireRole } from '../identity/guards.ts';
import { findOr404, inTenant, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import { getNotification, listNotifications } from './notifications.repo.ts';
import { notify, type NotifyDeps } from './notify.service.ts';
import { readSettings, writeSettings } from './settings.repo.ts';
import { SettingsBody, settingsToStore, type NotificationSettings } from './settings.schema.ts';
import { checkUrl } from '../../../shared/egress/index.ts';
import { badRequest } from '../../../shared/errors.ts';

/**
 * `/api/notifications`: the notification service behind the `notify` tool (and any API caller), the tenant's outbox
 * with each notification's deliveries, and the settings (`/settings`: read by members, written by admins). Mounted at
 * `/notifications`.
 */

/** A run token's subject is `run:<runId>`: the run whose tool asked. */
function runIdOf(p: Principal): string | null {
  return p.authKind === 'run_token' && p.subject?.startsWith('run:') ? p.subject.slice(4) : null;
}

/** Webhook secrets are shown to admins and owners (who set them), not to members and viewers. */
function settingsFor(p: Principal, s: NotificationSettings) {
  return hasRole(p, 'admin') ? s : { ...s, webhooks: s.webhooks.map((w) => ({ ...w, secret: null })) };
}

export function notificationRoutes(deps: NotifyDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .get('/settings', async (c) => c.json(settingsFor(c.get('principal'), await inTenant(deps.db, c, (tx) => readSettings(tx, tenantOf(c), deps.box)))))
    .put('/settings', doc({ body: SettingsBody }), requireRole('admin', 'notification settings'), async (c) => {
      const body = await readJson(c, SettingsBody);
      // the address policy as written; a name is judged by what it resolves to at each delivery (deliver.ts)
      body.webhooks.forEach((w, i) => {
        const problem = checkUrl(w.url, deps.privateAddresses ?? 'allow');
        if (problem) throw badRequest(`webhooks.${i}.url: ${problem}`);
      });
      const p = c.get('principal');
      const stored = await inTenant(deps.db, c, async (tx) => {
        const next = settingsToStore(body, await readSettings(tx, tenantOf(c), deps.box));
        await writeSettings(tx, tenantOf(c), next, p.keyId ? `key:${p.keyId}` : p.subject, deps.box);
        return next;
      });
      return c.json(settingsFor(p, stored));
    })
    .post('/', doc({ body: NotificationRequest }), async (c) => {
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
    .get('/', async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await inTenant(deps.db, c, (tx) => listNotifications(tx, page)));
    })
    .get('/:id', async (c) => {
      const id = c.req.param('id');
      return c.json(await findOr404(inTenant(deps.db, c, (tx) => getNotification(tx, id)), `unknown notification: ${id}`));
    });
}
