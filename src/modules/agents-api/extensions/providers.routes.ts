import { doc } from '../../../shared/route-doc.ts';
import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import { requireRole, type ProviderKeyMeta, type ProviderKeys } from '../../conductor/index.ts';
import { badRequest, notFound } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { AgentsEnv } from '../context.ts';
import { READ_ERRORS, WRITE_ERRORS } from '../wire.schema.ts';
import { ProviderList, ProviderModels, ProviderObject } from './extensions.schema.ts';
import { findProvider, PROVIDERS, type ProviderInfo } from './catalog.ts';
import { formatModelId } from '../../../contracts/model-providers.ts';

const KeyBody = v.object({ key: v.pipe(v.string(), v.trim(), v.minLength(1, 'a non-empty key'), v.maxLength(4096), v.regex(/^\S+$/, 'a key without whitespace')) });

const DOCS = {
  list: doc({
    summary: 'List model providers',
    description: 'Every model provider agents can use: whether it needs a key, whether the organisation has set its own (`keySet`) and whether the server holds one (`serverKeySet`).',
    response: ProviderList,
    errors: READ_ERRORS,
  }),
  get: doc({ summary: 'Get a model provider', description: "One provider and the state of the organisation's key for it.", response: ProviderObject, errors: READ_ERRORS }),
  setKey: doc({
    summary: "Set the organisation's key for a provider",
    description: "Stores the organisation's own API key for the provider (sealed; only a hint is shown again); runs on that provider's models are then billed to it. Needs role admin.",
    body: KeyBody,
    response: ProviderObject,
    errors: WRITE_ERRORS,
  }),
  deleteKey: doc({ summary: "Remove the organisation's key for a provider", description: 'Deletes the stored key. Needs role admin.', status: 204, errors: WRITE_ERRORS }),
  models: doc({ summary: "List a provider's models", description: 'The models listed for the provider with their prices in US dollars per million tokens, and the id to use as an agent\'s `model`.', response: ProviderModels, errors: READ_ERRORS }),
};

/**
 * `/api/providers…` (extension routes, camelCase JSON, `{"error": …}` errors): every provider of the general runtime,
 * the variables that configure it, whether the tenant has set its own key (`keySet`) and whether the server's
 * environment holds one (`serverKeySet`); setting or removing a tenant key needs role admin. The keys live in the
 * conductor (`keys`), whose runs use them.
 */
export function providersRoutes(keys: ProviderKeys, serverKeys: readonly string[] = []): Hono<AgentsEnv> {
  const tenant = (c: Context<AgentsEnv>) => c.get('principal').tenantId;
  const provider = (c: Context<AgentsEnv>) => {
    const found = findProvider(c.req.param('provider') ?? '');
    if (!found) throw notFound(`unknown provider: ${c.req.param('provider')}; supported: ${PROVIDERS.map((p) => p.id).join(', ')}`);
    return found;
  };
  const adminOnly = requireRole<AgentsEnv>('admin', 'setting or removing provider keys');
  return new Hono<AgentsEnv>()
    .get('/providers', DOCS.list, async (c) => {
      const meta = await keys.meta(tenant(c));
      return c.json({ providers: PROVIDERS.map((p) => view(p, meta.get(p.id), serverKeys)) });
    })
    .get('/providers/:provider', DOCS.get, async (c) => {
      const p = provider(c);
      return c.json(view(p, (await keys.meta(tenant(c))).get(p.id), serverKeys));
    })
    .put('/providers/:provider/key', DOCS.setKey, adminOnly, async (c) => {
      const { key } = await readJson(c, KeyBody);
      const p = provider(c);
      if (p.id === 'demo') throw badRequest('provider demo is built in and needs no key');
      await keys.set(tenant(c), p.id, key);
      return c.json(view(p, (await keys.meta(tenant(c))).get(p.id), serverKeys));
    })
    .delete('/providers/:provider/key', DOCS.deleteKey, adminOnly, async (c) => {
      await keys.delete(tenant(c), provider(c).id);
      return c.body(null, 204);
    })
    .get('/providers/:provider/models', DOCS.models, async (c) => {
      const p = provider(c);
      return c.json({
        provider: p.id,
        models: p.models.map((m) => ({ id: m.id, model: formatModelId({ provider: p.id, modelId: m.id }), name: m.name, inputPerMTokUsd: m.inputPerMTok, outputPerMTokUsd: m.outputPerMTok, cachedInputPerMTokUsd: m.cachedInputPerMTok })),
      });
    });
}

function view(p: ProviderInfo, key: ProviderKeyMeta | undefined, serverKeys: readonly string[]) {
  return {
    id: p.id,
    name: p.name,
    keyRequired: p.keyRequired,
    keySet: key !== undefined,
    keyHint: key?.keyHint ?? null,
    keyUpdatedAt: key?.updatedAt ?? null,
    serverKeySet: serverKeys.includes(p.id),
    keyVar: p.keyVar ?? null,
    baseUrlVar: p.baseUrlVar ?? null,
  };
}
