import * as v from 'valibot';

/** The model routes' answers: `GET /v1/models` in the OpenAI list shape; `/api/models…` in camelCase. */
export const V1ModelPage = v.object({
  object: v.literal('list'),
  data: v.array(v.object({ id: v.string(), object: v.literal('model'), created: v.number(), owned_by: v.string() })),
});

const Price = v.object({ inputPerMTok: v.number(), outputPerMTok: v.number(), cachedInputPerMTok: v.number() });

export const ModelCatalogView = v.object({
  creditUnit: v.string(),
  groups: v.array(
    v.variant('paidBy', [
      v.object({
        paidBy: v.literal('platform'),
        description: v.string(),
        models: v.array(v.object({ id: v.string(), name: v.string(), aggregator: v.string(), price: v.nullable(Price) })),
      }),
      v.object({
        paidBy: v.literal('own_key'),
        description: v.string(),
        providers: v.array(v.object({ provider: v.string(), name: v.string(), keySet: v.boolean(), models: v.array(v.object({ id: v.string(), name: v.string() })) })),
      }),
    ]),
  ),
});

export const SessionModelView = v.object({ sessionId: v.string(), model: v.string() });
