import { Hono } from 'hono';
import { doc } from '../../../shared/route-doc.ts';
import { readJson } from '../../../shared/http.ts';
import { conflict, notFound } from '../../../shared/errors.ts';
import { findOr404, inTenant, noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { requireRole } from '../identity/guards.ts';
import { EVENT_CATALOGUE } from './catalogue.ts';
import { getDelivery, listDeliveries, lockDelivery, markPending } from './deliveries.repo.ts';
import { getEndpoint, listEndpoints } from './endpoints.repo.ts';
import { changeEndpoint, CreateBody, createEndpoint, PatchBody, removeEndpoint, RotateBody, rotateSecret } from './endpoints.service.ts';
import type { NotifyDeps } from './notify.service.ts';
import { emitTo, WEBHOOK_QUEUE, type WebhookJob } from './outbox.ts';

/**
 * `/api/webhooks`: the tenant's webhook endpoints (the notification settings' `webhooks[]` are the same ones), their
 * delivery logs, retries and test events, and the event catalogue (`/api/webhooks/events`). Members read, admins and
 * owners change; viewers get 403. Secrets are answered once: by the create and by rotate-secret. Mounted at `/webhooks`.
 */
export function webhookRoutes(deps: NotifyDeps): Hono<IdentityEnv> {
  const unknown = (id: string) => `unknown webhook: ${id}`;
  const endpointOr404 = async (tx: Parameters<typeof getEndpoint>[0], id: string) => findOr404(getEndpoint(tx, id), unknown(id));
  return new Hono<IdentityEnv>()
    .use('*', requireRole('member', 'webhooks'))
    .use('*', requireRole('admin', 'changing webhooks', { writesOnly: true }))
    .get('/events', (c) => c.json(EVENT_CATALOGUE))
    .get('/', async (c) => c.json(await inTenant(deps.db, c, (tx) => listEndpoints(tx))))
    .post('/', doc({ summary: 'Create a webhook endpoint (its secret is in this answer only)', body: CreateBody }), async (c) => {
      const body = await readJson(c, CreateBody);
      return c.json(await inTenant(deps.db, c, (tx) => createEndpoint(deps, tx, tenantOf(c), body)), 201);
    })
    .get('/:id', async (c) => c.json(await inTenant(deps.db, c, (tx) => endpointOr404(tx, c.req.param('id')))))
    .patch('/:id', doc({ body: PatchBody }), async (c) => {
      const body = await readJson(c, PatchBody);
      return c.json(await inTenant(deps.db, c, (tx) => changeEndpoint(deps, tx, c.req.param('id'), body)));
    })
    .delete('/:id', async (c) => {
      await inTenant(deps.db, c, (tx) => removeEndpoint(tx, c.req.param('id')));
      return noContent(c);
    })
    .post('/:id/rotate-secret', doc({ summary: 'A new secret (in this answer only); the old one signs too until previousSecretExpiresAt', body: RotateBody }), async (c) => {
      const body = c.req.header('content-type')?.includes('json') ? await readJson(c, RotateBody) : {};
      return c.json(await inTenant(deps.db, c, (tx) => rotateSecret(deps, tx, tenantOf(c), c.req.param('id'), body.overlapSeconds)));
    })
    .post('/:id/test', async (c) => {
      const id = c.req.param('id');
      const sent = await inTenant(deps.db, c, async (tx) => {
        const e = await endpointOr404(tx, id);
        const emitted = await emitTo(deps.jobs, tx, { tenantId: tenantOf(c), type: 'webhook.test', data: { message: 'A test event from svc.', endpointId: e.id } }, [e]);
        return getDelivery(tx, id, emitted!.deliveries[0]);
      });
      return c.json(sent, 202);
    })
    .get('/:id/deliveries', async (c) => {
      const id = c.req.param('id');
      const page = pageOf(c);
      return sendList(
        c,
        page,
        await inTenant(deps.db, c, async (tx) => {
          await endpointOr404(tx, id);
          return listDeliveries(tx, id, page);
        }),
      );
    })
    .get('/:id/deliveries/:deliveryId', async (c) => {
      const { id, deliveryId } = c.req.param();
      return c.json(
        await inTenant(deps.db, c, async (tx) => {
          await endpointOr404(tx, id);
          return findOr404(getDelivery(tx, id, deliveryId), `unknown delivery: ${deliveryId}`);
        }),
      );
    })
    .post('/:id/deliveries/:deliveryId/retry', async (c) => {
      const { id, deliveryId } = c.req.param();
      const retried = await inTenant(deps.db, c, async (tx) => {
        const e = await endpointOr404(tx, id);
        const d = await lockDelivery(tx, deliveryId);
        if (!d || d.endpointId !== id) throw notFound(`unknown delivery: ${deliveryId}`);
        if (!e.enabled) throw conflict(`webhook ${id} is disabled; enable it (PATCH {"enabled": true}) before retrying`);
        // the next attempt, now; a job still waiting for a later attempt finds the delivery moved on
        await markPending(tx, deliveryId);
        await deps.jobs.send<WebhookJob>(WEBHOOK_QUEUE, { tenantId: tenantOf(c), deliveryId, attempt: d.attempts }, { tx });
        return getDelivery(tx, id, deliveryId);
      });
      return c.json(retried, 202);
    });
}
