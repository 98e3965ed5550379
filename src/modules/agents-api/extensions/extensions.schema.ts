import * as v from 'valibot';

/** The answers of the extension routes under `/api` (camelCase JSON): API keys, model providers, usage. */
const Iso = v.pipe(v.string(), v.description('ISO 8601'));

export const ApiKeyObject = v.object({
  id: v.string(),
  name: v.string(),
  role: v.picklist(['owner', 'admin', 'member', 'viewer']),
  prefix: v.string(),
  status: v.picklist(['active', 'revoked', 'expired']),
  createdBy: v.nullable(v.string()),
  createdAt: Iso,
  expiresAt: v.nullable(Iso),
  revokedAt: v.nullable(Iso),
});
export const ApiKeyList = v.object({ keys: v.array(ApiKeyObject) });
/** The created key: its `secret` is in this answer only. */
export const CreatedApiKey = v.object({ ...ApiKeyObject.entries, secret: v.string() });

export const ProviderObject = v.object({
  id: v.string(),
  name: v.string(),
  keyRequired: v.boolean(),
  keySet: v.pipe(v.boolean(), v.description('The organisation has set its own key')),
  keyHint: v.nullable(v.string()),
  keyUpdatedAt: v.nullable(Iso),
  serverKeySet: v.pipe(v.boolean(), v.description("The server's environment holds a key")),
  keyVar: v.nullable(v.string()),
  baseUrlVar: v.nullable(v.string()),
});
export const ProviderList = v.object({ providers: v.array(ProviderObject) });
export const ProviderModels = v.object({
  provider: v.string(),
  models: v.array(
    v.object({ id: v.string(), model: v.string(), name: v.string(), inputPerMTokUsd: v.number(), outputPerMTokUsd: v.number(), cachedInputPerMTokUsd: v.number() }),
  ),
});

const tokens = { inputTokens: v.number(), outputTokens: v.number(), cacheReadTokens: v.number(), cacheCreateTokens: v.number(), totalTokens: v.number() };
const cost = { costMicroUsd: v.number(), costUsd: v.number() };
const Priced = v.pipe(v.boolean(), v.description('false: the price catalog does not know the model (its cost reads 0 but is unknown)'));

export const UsageTotals = v.object({
  since: v.nullable(Iso),
  until: v.nullable(Iso),
  events: v.number(),
  ...tokens,
  ...cost,
  byModel: v.array(v.object({ model: v.string(), events: v.number(), ...tokens, ...cost, priced: Priced })),
});
export const UsageEvents = v.object({
  events: v.array(v.object({ runId: v.string(), sessionId: v.nullable(v.string()), seq: v.number(), at: Iso, model: v.string(), ...tokens, ...cost, priced: Priced })),
  limit: v.number(),
  offset: v.number(),
  hasMore: v.boolean(),
});

const Moment = v.pipe(v.string(), v.description('An ISO 8601 timestamp or Unix seconds'));
export const UsageQuery = v.object({ since: v.optional(Moment), until: v.optional(Moment) });
export const UsageEventsQuery = v.object({
  ...UsageQuery.entries,
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000), v.description('Rows per page (default 100)'))),
  offset: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
});
