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
import * as v from 'valibot';
import { CreatedEndpoint, DeliveryView, EndpointView, EventCatalogue, RotatedSecret } from './notifications.schema.ts';
import { PageQuery } from '../list-query.ts';

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
    .get('/events', doc({ summary: 'List webhook event types', description: 'Every event a webhook endpoint can subscribe to: its name, when it is sent and what its `data` holds.', response: EventCatalogue, errors: [403] }), (c) => c.json(EVENT_CATALOGUE))
    .get('/', doc({ summary: 'List webhook endpoints', description: 'The tenant\'s webhook endpoints, without their secrets. Members and up.', response: v.array(EndpointView), errors: [403] }), async (c) => c.json(await inTenant(deps.db, c, (tx) => listEndpoints(tx))))
    .post('/', doc({ summary: 'Create a webhook endpoint', description: 'An URL that receives the events named in `events` (names, `run.*` wildcards or `*`), signed the Standard Webhooks way. Its secret is in this answer only. Admins and up; 409 past 20 endpoints.', body: CreateBody, response: CreatedEndpoint, status: 201, errors: [403, 409] }), async (c) => {
      const body = await readJson(c, CreateBody);
      return c.json(await inTenant(deps.db, c, (tx) => createEndpoint(deps, tx, tenantOf(c), body)), 201);
    })
    .get('/:id', doc({ summary: 'Get a webhook endpoint', description: 'One endpoint, without its secret; `disabledReason` says why svc disabled it.', response: EndpointView, errors: [403] }), async (c) => c.json(await inTenant(deps.db, c, (tx) => endpointOr404(tx, c.req.param('id')))))
    .patch('/:id', doc({ summary: 'Change a webhook endpoint', description: 'Changes the fields sent; enabling it again forgets why svc disabled it. Admins and up.', body: PatchBody, response: EndpointView, errors: [403] }), async (c) => {
      const body = await readJson(c, PatchBody);
      return c.json(await inTenant(deps.db, c, (tx) => changeEndpoint(deps, tx, c.req.param('id'), body)));
    })
    .delete('/:id', doc({ summary: 'Delete a webhook endpoint', description: 'No more deliveries to it. Admins and up.', status: 204, errors: [403] }), async (c) => {
      await inTenant(deps.db, c, (tx) => removeEndpoint(tx, c.req.param('id')));
      return noContent(c);
    })
    .post('/:id/rotate-secret', doc({ summary: 'Rotate a webhook secret', description: 'A new signing secret (in this answer only); the old one signs too until `previousSecretExpiresAt` (`overlapSeconds`, the server\'s default when not sent). The body is optional. Admins and up.', body: RotateBody, response: RotatedSecret, errors: [403] }), async (c) => {
      const body = c.req.header('content-type')?.includes('json') ? await readJson(c, RotateBody) : {};
      return c.json(await inTenant(deps.db, c, (tx) => rotateSecret(deps, tx, tenantOf(c), c.req.param('id'), body.overlapSeconds)));
    })
    .post('/:id/test', doc({ summary: 'Send a test event', description: 'Queues a `webhook.test` event to this endpoint only and answers its delivery. Admins and up.', response: DeliveryView, status: 202, errors: [403] }), async (c) => {
      const id = c.req.param('id');
      const sent = await inTenant(deps.db, c, async (tx) => {
        const e = await endpointOr404(tx, id);
        const emitted = await emitTo(deps.jobs, tx, { tenantId: tenantOf(c), type: 'webhook.test', data: { message: 'A test event from svc.', endpointId: e.id } }, [e]);
        return getDelivery(tx, id, emitted!.deliveries[0]);
      });
      return c.json(sent, 202);
    })
    .get('/:id/deliveries', doc({ summary: 'List an endpoint\'s deliveries', description: 'The delivery log, newest first: status, attempts, the last response code, latency and error. With `limit`, a page and X-Total-Count.', query: PageQuery, response: v.array(DeliveryView), errors: [403] }), async (c) => {
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
    .get('/:id/deliveries/:deliveryId', doc({ summary: 'Get a delivery', description: 'One delivery of the endpoint with its attempts so far.', response: DeliveryView, errors: [403] }), async (c) => {
      const { id, deliveryId } = c.req.param();
      return c.json(
        await inTenant(deps.db, c, async (tx) => {
          await endpointOr404(tx, id);
          return findOr404(getDelivery(tx, id, deliveryId), `unknown delivery: ${deliveryId}`);
        }),
      );
    })
    .post('/:id/deliveries/:deliveryId/retry', doc({ summary: 'Retry a delivery', description: 'Sends the delivery again now; 409 while the endpoint is disabled. Admins and up.', response: DeliveryView, status: 202, errors: [403, 409] }), async (c) => {
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
