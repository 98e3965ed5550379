import { doc } from '../../../shared/route-doc.ts';
import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { readJson } from '../../../shared/http.ts';
import { notFound } from '../../../shared/errors.ts';
import type { AgentsEnv } from '../context.ts';
import { PROVIDERS } from '../extensions/catalog.ts';
import type { ProviderKeys } from '../../conductor/index.ts';
import { getSessionRow, updateSession } from '../sessions/sessions.repo.ts';
import { BYOK_PROVIDERS } from './model-ref.ts';
import { formatModelId } from '../../../contracts/model-providers.ts';
import type { ModelCatalog } from './catalog.ts';
import type { ModelResolver } from './model-ref.ts';
import { READ_ERRORS, WRITE_ERRORS } from '../wire.schema.ts';
import { ModelCatalogView, SessionModelView, V1ModelPage } from './models.schema.ts';

/**
 * The model extension routes (seed 001): `GET /v1/models` lists the platform-credit models (OpenAI list shape),
 * `GET /api/models` every selectable model grouped by who pays, with credit prices, and `GET|POST
 * /api/sessions/{session_id}/model` reads or switches the model of one agent session's next turn.
 */
export interface ModelsDeps {
  db: Kysely<DB>;
  providerKeys: ProviderKeys;
  models: ModelResolver;
  catalog: ModelCatalog;
}

const SwitchBody = v.object({ model: v.pipe(v.string(), v.minLength(1, 'a non-empty model id')) });

const DOCS = {
  v1List: doc({
    summary: 'List platform models',
    description: 'The models billed in platform credit (`svc/<aggregator>/<model_id>`), the built-in demo model first, in the OpenAI list shape. Models on the organisation\'s own provider keys are listed by `GET /api/models`.',
    response: V1ModelPage,
    errors: READ_ERRORS,
  }),
  catalog: doc({
    summary: 'List selectable models',
    description: "Every model an agent can use, grouped by who pays: platform credit (with prices in credits per million tokens) or the organisation's own provider key (with whether that key is set).",
    response: ModelCatalogView,
    errors: READ_ERRORS,
  }),
  sessionModel: doc({ summary: "Get an agent session's model", description: 'The model the next run of the agent session uses.', response: SessionModelView, errors: READ_ERRORS }),
  switchModel: doc({
    summary: "Switch an agent session's model",
    description: "Changes the model of the agent session from its next run on (the next turn, or a message joining the live one); the session's saved agent does not change.",
    body: SwitchBody,
    response: SessionModelView,
    errors: WRITE_ERRORS,
  }),
};

const tenantOf = (c: Context<AgentsEnv>) => c.get('principal').tenantId;

/** `GET /v1/models` (mounted on the /v1 app). */
export function v1ModelRoutes(deps: ModelsDeps): Hono<AgentsEnv> {
  return new Hono<AgentsEnv>().get('/', DOCS.v1List, async (c) => {
    const models = await deps.catalog.platformModels();
    return c.json({ object: 'list', data: models.map((m) => ({ id: m.id, object: 'model', created: 0, owned_by: `svc/${m.aggregator}` })) });
  });
}

/** `/api/models` and `/api/sessions/{id}/model` (mounted on the extension app; /api answers `{error}` strings). */
export function apiModelRoutes(deps: ModelsDeps): Hono<AgentsEnv> {
  const sessionModel = async (c: Context<AgentsEnv>, id: string) => {
    const row = await withTenant(deps.db, tenantOf(c), (tx) => getSessionRow(tx, id));
    if (!row) throw notFound(`unknown agent session: ${id}`);
    return row;
  };
  return new Hono<AgentsEnv>()
    .get('/models', DOCS.catalog, async (c) => {
      const keys = await deps.providerKeys.meta(tenantOf(c));
      const platform = (await deps.catalog.platformModels()).map((m) => ({ id: m.id, name: m.name, aggregator: m.aggregator, price: m.price }));
      const ownKey = BYOK_PROVIDERS.map((provider) => {
        const info = PROVIDERS.find((p) => p.id === provider);
        return {
          provider,
          name: info?.name ?? provider,
          keySet: keys.has(provider),
          models: (info?.models ?? []).map((m) => ({ id: formatModelId({ provider, modelId: m.id }), name: m.name })),
        };
      });
      return c.json({
        creditUnit: deps.catalog.creditUnit,
        groups: [
          { paidBy: 'platform', description: 'Billed in platform credit (svc/<aggregator>/<model_id>)', models: platform },
          { paidBy: 'own_key', description: "Billed by the provider to the organisation's own key (<provider>:<model_id>, or <provider>/<model_id>)", providers: ownKey },
        ],
      });
    })
    .get('/sessions/:session_id/model', DOCS.sessionModel, async (c) => {
      const row = await sessionModel(c, c.req.param('session_id'));
      return c.json({ sessionId: row.id, model: row.agent.model });
    })
    .post('/sessions/:session_id/model', DOCS.switchModel, async (c) => {
      const { model } = await readJson(c, SwitchBody);
      deps.models.parse(model);
      const id = c.req.param('session_id');
      const row = await sessionModel(c, id);
      // the snapshot's model is what each run resolves: the switch applies from the next run (the next turn, or a
      // message joining the live one)
      await withTenant(deps.db, tenantOf(c), (tx) => updateSession(tx, id, { agent: { ...row.agent, model } }));
      return c.json({ sessionId: id, model });
    });
}
