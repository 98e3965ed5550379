import * as v from 'valibot';
import { readOnlyFields } from '../../../shared/strict-body.ts';
import type { Agrees, Same } from '../schema-check.ts';
import type { PublishedView as Published } from './published.service.ts';
import type { AgentKeyView as AgentKey } from './agent-keys.service.ts';
import type { ConversationView as Conversation } from './gateway.service.ts';

/** Bodies of the publishing routes (seed 000 "Publishing"): every publish field is optional. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const Slug = v.pipe(v.string(), v.regex(SLUG_PATTERN, 'lowercase letters, digits and inner dashes, at most 63'), v.check((s) => !s.includes('--'), 'no double dashes'));
const Origin = v.pipe(v.string(), v.maxLength(200), v.check((o) => o === '*' || /^https?:\/\/[^/\s]+$/.test(o), 'an origin like https://example.com, or *'));

const Settings = {
  visibility: v.optional(v.picklist(['private', 'org', 'public'])),
  authMode: v.optional(v.picklist(['api_key', 'jwt'])),
  allowedOrigins: v.optional(v.pipe(v.array(Origin), v.maxLength(50))),
  rateLimitRpm: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100_000))),
  syncMaxDurationSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(270))),
  conversationTtlDays: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(36_500)))),
  exposeToolEvents: v.optional(v.boolean()),
  /** Who approves a call to an `ask` tool on the chat endpoint: nobody (`deny`, the default) or the agent's tenant (`owner`). */
  approvals: v.optional(v.picklist(['deny', 'owner'])),
  /** authMode jwt: where end-user tokens' keys are, and the issuer they must carry. */
  jwksUrl: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(500), v.url(), v.regex(/^https?:\/\//, 'an http(s) URL')))),
  jwtIssuer: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(500)))),
};

export const PublishBody = v.strictObject({ slug: v.optional(Slug), ...Settings });
export type PublishInput = v.InferOutput<typeof PublishBody>;

export const PatchBody = v.strictObject({
  ...readOnlyFields('id', 'tenantId', 'profileName'),
  ...Settings,
  /** Immutable: accepted only when unchanged (so a client may send back what it read). */
  slug: v.optional(v.string()),
  enabled: v.optional(v.boolean()),
  monthlyCostCapUsdCents: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000_000)))),
});
export type PatchInput = v.InferOutput<typeof PatchBody>;

export const AgentKeyBody = v.strictObject({
  label: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
  expiresAt: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp()))),
});

/** The kebab-case of a profile name: the default slug. */
export function kebab(name: string): string {
  const s = name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return s || 'agent';
}

/** What the publishing routes answer (published.service.ts `PublishedView`, agent-keys.service.ts `AgentKeyView`, metrics.service.ts). */
const Instant = v.string();

export const PublishedView = v.object({
  id: v.string(),
  tenantId: v.string(),
  profileName: v.string(),
  slug: v.string(),
  visibility: v.picklist(['private', 'org', 'public']),
  authMode: v.picklist(['api_key', 'jwt']),
  allowedOrigins: v.array(v.string()),
  rateLimitRpm: v.number(),
  syncMaxDurationSeconds: v.number(),
  conversationTtlDays: v.nullable(v.number()),
  exposeToolEvents: v.boolean(),
  /** Who may approve a call to an `ask` tool of a chat run: nobody (`deny`, the call is refused) or the agent's owner. */
  approvals: v.picklist(['deny', 'owner']),
  enabled: v.boolean(),
  monthlyCostCapUsdCents: v.nullable(v.number()),
  jwksUrl: v.nullable(v.string()),
  jwtIssuer: v.nullable(v.string()),
  /** The chat page's address, when the server knows its public URL (SVC_CHAT_PUBLIC_URL). */
  publicUrl: v.optional(v.string()),
});

export const PublishedList = v.object({ total: v.number(), publishedAgents: v.array(PublishedView) });

export const AgentKeyView = v.object({
  id: v.string(),
  publishedId: v.string(),
  label: v.string(),
  prefix: v.string(),
  createdAt: Instant,
  expiresAt: v.nullable(Instant),
  revokedAt: v.nullable(Instant),
  status: v.picklist(['active', 'revoked', 'expired']),
});

/** The key itself (`pk_…`) is in the answer that issues it, and never again. */
export const IssuedAgentKey = v.object({ ...AgentKeyView.entries, token: v.string() });

const Bucket = {
  start: Instant,
  end: Instant,
  runs: v.number(),
  failedRuns: v.number(),
  runningRuns: v.number(),
  tokens: v.number(),
  costCents: v.number(),
  sandboxSeconds: v.number(),
  ingressRequests: v.number(),
};
const Window = { window: v.string(), since: Instant, until: Instant, bucket: v.string() };

export const TenantStats = v.object({
  ...Window,
  buckets: v.array(v.object({ ...Bucket, queuedRuns: v.number(), waitingRuns: v.number() })),
});

export const AgentMetrics = v.object({
  ...Window,
  totals: v.object({ requests: v.number(), runs: v.number(), conversations: v.number(), costCents: v.number(), tokens: v.number() }),
  tokens: v.object({ inputTokens: v.number(), outputTokens: v.number(), cacheReadTokens: v.number(), cacheCreateTokens: v.number() }),
  buckets: v.array(v.object(Bucket)),
});

export const MetricsQuery = v.object({ window: v.optional(v.picklist(['1h', '24h', '7d', '30d'])) });

/** The chat gateway's answers (gateway.routes.ts, completions.routes.ts). */
export const Usage = v.object({ inputTokens: v.number(), outputTokens: v.number(), cacheReadTokens: v.optional(v.number()), cacheCreateTokens: v.optional(v.number()) });

export const ChatReply = v.object({ conversationId: v.string(), reply: v.string(), usage: Usage });

/** A non-streamed chat whose run waits for the agent owner's approval: answered at once (202), the run goes on. */
export const ChatWaiting = v.object({
  status: v.literal('waiting'),
  message: v.string(),
  conversationId: v.string(),
  runId: v.string(),
  toolName: v.string(),
  approvalId: v.string(),
  expiresAt: v.optional(v.string()),
  /** Where the reply shows once the owner has decided and the run has ended. */
  conversationUrl: v.string(),
});

export const ConversationView = v.object({
  conversationId: v.string(),
  messages: v.array(
    v.object({ role: v.picklist(['user', 'assistant']), content: v.string(), runId: v.string(), createdAt: v.optional(Instant), error: v.optional(v.boolean()) }),
  ),
  /** The last turn, while its reply is not there yet (`waiting`: for the agent owner's approval). */
  pending: v.optional(v.object({ runId: v.string(), status: v.picklist(['queued', 'running', 'waiting']) })),
});

export const ChatCompletion = v.object({
  id: v.string(),
  object: v.literal('chat.completion'),
  created: v.number(),
  model: v.string(),
  choices: v.array(
    v.object({
      index: v.number(),
      message: v.object({ role: v.literal('assistant'), content: v.string() }),
      finish_reason: v.string(),
      logprobs: v.null(),
    }),
  ),
  usage: v.object({ prompt_tokens: v.number(), completion_tokens: v.number(), total_tokens: v.number() }),
});

/** The schemas above say what the code answers (schema-check.ts). */
export type PublishingAnswersChecked = [
  Agrees<Same<v.InferOutput<typeof PublishedView>, Published>>,
  Agrees<Same<v.InferOutput<typeof AgentKeyView>, AgentKey>>,
  Agrees<Same<v.InferOutput<typeof ConversationView>, Conversation>>,
];
