import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import { noContent } from '../../crud/index.ts';
import type { Guards, IdentityEnv } from '../identity/index.ts';
import { issueAgentKey, listAgentKeys, revokeKeyOf, type AgentKeyDeps } from './agent-keys.service.ts';
import { getPublished, listPublished, patchPublished, publish, unpublish, type PublishingDeps } from './published.service.ts';
import { agentMetrics, tenantStats } from './metrics.service.ts';
import * as v from 'valibot';
import { AgentKeyBody, AgentKeyView, AgentMetrics, IssuedAgentKey, MetricsQuery, PatchBody, PublishBody, PublishedList, PublishedView, TenantStats } from './publishing.schema.ts';

/**
 * The publishing routes of seed 000 under `/api`: `/published`, `/profiles/{name}/publish|published|keys`. Members
 * read; publishing, changing, unpublishing and keys need admin (an agent key is a credential others use).
 */
export function publishingRoutes(deps: PublishingDeps & AgentKeyDeps & { guards: Guards }): Hono<IdentityEnv> {
  // per route, not `.use()`: a sub-app's middleware would also cover the other features' /profiles/:name/… routes
  const admin = deps.guards.requireRole<IdentityEnv>('admin', 'publishing agents');
  const tenant = (c: { get(k: 'principal'): { tenantId: string } }) => c.get('principal').tenantId;
  return new Hono<IdentityEnv>()
    .get('/published', doc({ summary: 'List published agents', description: 'Every profile of the tenant published behind the chat gateway, with its settings.', response: PublishedList }), async (c) => c.json(await listPublished(deps, tenant(c))))
    .get('/profiles/:name/published', doc({ summary: 'Get a profile\'s published agent', description: 'The gateway settings of a published profile; 404 `not_published` when it is not published.', response: PublishedView }), async (c) => c.json(await getPublished(deps, tenant(c), c.req.param('name'))))
    .get('/stats', doc({ summary: 'Read the tenant\'s run statistics', description: 'Every run of the tenant over a window (`1h` by default, `24h`, `7d`, `30d`) in buckets: runs, failed, running, queued and waiting runs, tokens, cost and the chat gateway\'s accepted turns.', query: MetricsQuery, response: TenantStats }), async (c) => c.json(await tenantStats(deps, tenant(c), c.req.query('window') ?? '1h')))
    .get('/profiles/:name/metrics', doc({ summary: 'Read a published agent\'s metrics', description: 'The agent\'s gateway turns over a window (`1h` by default, `24h`, `7d`, `30d`): totals, tokens and buckets.', query: MetricsQuery, response: AgentMetrics }), async (c) => c.json(await agentMetrics(deps, tenant(c), c.req.param('name'), c.req.query('window') ?? '1h')))
    .post('/profiles/:name/publish', doc({ summary: 'Publish a profile', description: 'Puts the profile behind the chat gateway at `/chat/{slug}` (the slug defaults to the profile\'s name in kebab case). Admins and up; 409 when the profile is already published or the slug is taken.', body: PublishBody, response: PublishedView, status: 201, errors: [403, 409] }), admin, async (c) => {
      const body = await readJson(c, PublishBody);
      return c.json(await publish(deps, tenant(c), c.req.param('name'), body), 201);
    })
    .patch('/profiles/:name/published', doc({ summary: 'Change a published agent', description: 'Changes the settings sent; the slug is fixed (sent back unchanged it is accepted). Admins and up.', body: PatchBody, response: PublishedView, errors: [403] }), admin, async (c) => {
      const body = await readJson(c, PatchBody);
      return c.json(await patchPublished(deps, tenant(c), c.req.param('name'), body));
    })
    .delete('/profiles/:name/published', doc({ summary: 'Unpublish a profile', description: 'Takes the agent off the gateway; its slug is free again. Admins and up.', status: 204, errors: [403] }), admin, async (c) => {
      await unpublish(deps, tenant(c), c.req.param('name'));
      return noContent(c);
    })
    .get('/profiles/:name/keys', doc({ summary: 'List a published agent\'s keys', description: 'The agent keys (`pk_…`) that open this agent\'s gateway, without the keys themselves. Admins and up.', response: v.array(AgentKeyView), errors: [403] }), admin, async (c) => c.json(await listAgentKeys(deps, tenant(c), c.req.param('name'))))
    .post('/profiles/:name/keys', doc({ summary: 'Issue an agent key', description: 'A key (`pk_…`, in `token`: shown in this answer only) that opens this agent\'s gateway and nothing else. `label` is required. Admins and up.', body: AgentKeyBody, response: IssuedAgentKey, status: 201, errors: [403] }), admin, async (c) => {
      const body = await readJson(c, AgentKeyBody);
      const p = c.get('principal');
      return c.json(await issueAgentKey(deps, p.tenantId, c.req.param('name'), { ...body, createdBy: p.keyId ?? p.subject }), 201);
    })
    .delete('/profiles/:name/keys/:id', doc({ summary: 'Revoke an agent key', description: 'The key no longer opens the gateway. Admins and up.', status: 204, errors: [403] }), admin, async (c) => {
      await revokeKeyOf(deps, tenant(c), c.req.param('name'), c.req.param('id'));
      return noContent(c);
    });
}
