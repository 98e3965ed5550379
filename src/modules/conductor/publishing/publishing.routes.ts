import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import { noContent } from '../../crud/index.ts';
import type { Guards, IdentityEnv } from '../identity/index.ts';
import { issueAgentKey, listAgentKeys, revokeKeyOf, type AgentKeyDeps } from './agent-keys.service.ts';
import { getPublished, listPublished, patchPublished, publish, unpublish, type PublishingDeps } from './published.service.ts';
import { agentMetrics, tenantStats } from './metrics.service.ts';
import { AgentKeyBody, PatchBody, PublishBody } from './publishing.schema.ts';

/**
 * The publishing routes of seed 000 under `/api`: `/published`, `/profiles/{name}/publish|published|keys`. Members
 * read; publishing, changing, unpublishing and keys need admin (an agent key is a credential others use).
 */
export function publishingRoutes(deps: PublishingDeps & AgentKeyDeps & { guards: Guards }): Hono<IdentityEnv> {
  // per route, not `.use()`: a sub-app's middleware would also cover the other features' /profiles/:name/… routes
  const admin = deps.guards.requireRole<IdentityEnv>('admin', 'publishing agents');
  const tenant = (c: { get(k: 'principal'): { tenantId: string } }) => c.get('principal').tenantId;
  return new Hono<IdentityEnv>()
    .get('/published', async (c) => c.json(await listPublished(deps, tenant(c))))
    .get('/profiles/:name/published', async (c) => c.json(await getPublished(deps, tenant(c), c.req.param('name'))))
    .get('/stats', async (c) => c.json(await tenantStats(deps, tenant(c), c.req.query('window') ?? '1h')))
    .get('/profiles/:name/metrics', async (c) => c.json(await agentMetrics(deps, tenant(c), c.req.param('name'), c.req.query('window') ?? '1h')))
    .post('/profiles/:name/publish', doc({ body: PublishBody }), admin, async (c) => {
      const body = await readJson(c, PublishBody);
      return c.json(await publish(deps, tenant(c), c.req.param('name'), body), 201);
    })
    .patch('/profiles/:name/published', doc({ body: PatchBody }), admin, async (c) => {
      const body = await readJson(c, PatchBody);
      return c.json(await patchPublished(deps, tenant(c), c.req.param('name'), body));
    })
    .delete('/profiles/:name/published', admin, async (c) => {
      await unpublish(deps, tenant(c), c.req.param('name'));
      return noContent(c);
    })
    .get('/profiles/:name/keys', admin, async (c) => c.json(await listAgentKeys(deps, tenant(c), c.req.param('name'))))
    .post('/profiles/:name/keys', doc({ body: AgentKeyBody }), admin, async (c) => {
      const body = await readJson(c, AgentKeyBody);
      const p = c.get('principal');
      return c.json(await issueAgentKey(deps, p.tenantId, c.req.param('name'), { ...body, createdBy: p.keyId ?? p.subject }), 201);
    })
    .delete('/profiles/:name/keys/:id', admin, async (c) => {
      await revokeKeyOf(deps, tenant(c), c.req.param('name'), c.req.param('id'));
      return noContent(c);
    });
}
