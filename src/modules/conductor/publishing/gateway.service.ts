import type { RunEvent, Usage } from '../../../contracts/run-event.ts';
import { withTenant } from '../../../db/index.ts';
import { AppError, notFound, unauthorized } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { priceTokens } from '../billing/model-prices.ts';
import { rateLimitError, type Limiter } from '../limits/index.ts';
import type { JwksCache } from '../identity/index.ts';
import { cancelRun, createRun, followRun, type RunServices, type StoredEvent } from '../runs/index.ts';
import { SLUG_PATTERN } from './publishing.schema.ts';
import { CHAT_ORIGIN, insertConversation, insertTurn, monthUsageByModel, lookupBySlug, selectConversation, selectTurns, touchConversation, type PublishedRow } from './publishing.repo.ts';

/**
 * The chat gateway's work: find the published agent the caller's agent key opens, take one hit of its per-key rate
 * limit, and run the agent's profile with the message: a new conversation is a new runner session, a follow-up turn
 * resumes that session (so the model sees the earlier turns).
 */
export interface GatewayDeps {
  runs: RunServices;
  limiter: Limiter;
  keepAliveMs: number;
  /** SVC_CHAT_PUBLIC_URL: its origin may always call the gateway (the chat page served there). */
  chatPublicUrl: string | undefined;
  /** The agents' JWKS documents (authMode jwt), fetched through the guarded fetcher, cached per URL with a failure backoff. */
  jwks: JwksCache;
}

/** Who is chatting: an agent key of the agent, an end-user JWT, a signed-in dashboard user, or anyone (public). */
export interface ChatCaller {
  tenantId: string;
  publishedId: string;
  /** The owner of the conversations it starts (the key id, `jwt:<sub>`, `session:<sub>`, or `anonymous`). */
  owner: string;
  /** The end user a verified credential names (the JWT's or the dashboard session's subject). */
  endUser?: string;
}

/**
 * The end user a chat turn acts for (its run's `userId`: per_user memory stores partition by it): the subject of a
 * verified end-user JWT or dashboard session; else, for a caller with an agent key, the request's `user` field (the
 * key's holder names its users, as OpenAI's `user` does). Anonymous callers of a public agent have none, so they never
 * share a per-user memory.
 */
export function endUserOf(caller: ChatCaller, user: string | undefined): string | undefined {
  if (caller.endUser) return caller.endUser;
  if (caller.owner === ANONYMOUS || caller.owner.startsWith('jwt:') || caller.owner.startsWith('session:')) return undefined;
  return user && user.length <= 256 ? user : undefined;
}

/** The owner of conversations nobody signed in for (a public agent without a credential). */
export const ANONYMOUS = 'anonymous';

export interface ChatTurn {
  agent: PublishedRow;
  conversationId: string;
  runId: string;
  /** The run's events to its terminal one; ends early when `signal` aborts. `null` items are keep-alive ticks. */
  events: AsyncGenerator<StoredEvent | null>;
}

export const notPublishedSlug = (slug: string) => new AppError(404, 'not_published', { extra: { message: `no published agent at ${slug}` } });

/** The enabled published agent at `slug` (any tenant: slugs are unique across tenants), or 404 `not_published`. */
export async function findAgent(deps: GatewayDeps, slug: string): Promise<PublishedRow> {
  if (!SLUG_PATTERN.test(slug)) throw notPublishedSlug(slug);
  const agent = await lookupBySlug(deps.runs.deps.db, slug);
  if (!agent || !agent.enabled) throw notPublishedSlug(slug);
  return agent;
}

/** 401 unless the caller's key belongs to this agent. */
export function assertOpens(agent: PublishedRow, caller: ChatCaller): void {
  if (agent.tenant_id !== caller.tenantId || agent.id !== caller.publishedId) throw unauthorized(`this agent key does not open ${agent.slug}`);
}

export async function rateLimit(deps: GatewayDeps, agent: PublishedRow, key: string): Promise<void> {
  if (agent.rate_limit_rpm === 0) return;
  const r = await deps.limiter.check('chat-key', `${agent.id}:${key}`, agent.rate_limit_rpm, 60_000);
  if (!r.allowed) throw rateLimitError(r.retryAfterSeconds);
}

export async function startTurn(
  deps: GatewayDeps,
  caller: ChatCaller,
  agent: PublishedRow,
  input: { message: string; conversationId?: string; userId?: string },
  signal: AbortSignal,
): Promise<ChatTurn> {
  const db = deps.runs.deps.db;
  let conversationId = input.conversationId;
  let sessionId: string | undefined;
  if (conversationId !== undefined) {
    const conv = await withTenant(db, caller.tenantId, (tx) => selectConversation(tx, conversationId!));
    // another key's (or agent's) conversation reads as absent
    if (!conv || conv.published_id !== agent.id || conv.owner !== caller.owner) throw notFound(`unknown conversation: ${conversationId}`);
    sessionId = conv.session_id;
  }
  await checkCostCap(deps, caller.tenantId, agent);
  const { runId, sessionId: placed } = await createRun(deps.runs.deps, caller.tenantId, {
    profile: agent.profile_name,
    prompt: input.message,
    title: `chat ${agent.slug}`,
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(input.userId !== undefined ? { userId: input.userId } : {}),
  }, { multitask: 'reject', origin: CHAT_ORIGIN }); // an end user's second message while the first is answered: 409, as before
  // (the origin tells the approvals of the run's `ask` tools to follow the agent's `approvals`)
  await withTenant(db, caller.tenantId, async (tx) => {
    if (conversationId === undefined) {
      conversationId = prefixedId('conv');
      await insertConversation(tx, { id: conversationId, tenant_id: caller.tenantId, published_id: agent.id, owner: caller.owner, session_id: placed });
    } else await touchConversation(tx, conversationId);
    await insertTurn(tx, { run_id: runId, tenant_id: caller.tenantId, published_id: agent.id, conversation_id: conversationId });
  });
  const events = await followRun(deps.runs.deps, caller.tenantId, runId, 0, { keepAliveMs: deps.keepAliveMs, signal });
  return { agent, conversationId: conversationId!, runId, events };
}

/**
 * 402 once the agent's gateway runs this month have cost its monthlyCostCapUsdCents (the tenant's gates still apply).
 * The cost is their usage priced from the model price catalog, as billing prices a run: so the cap holds in every
 * billing mode (with `SVC_BILLING=off` nothing is charged, yet the agent's model calls still cost someone money) and
 * for runs on the tenant's own provider key; a model without a known price adds nothing.
 */
async function checkCostCap(deps: GatewayDeps, tenantId: string, agent: PublishedRow): Promise<void> {
  if (agent.monthly_cost_cap_usd_cents === null) return;
  const capCents = Number(agent.monthly_cost_cap_usd_cents);
  const groups = await withTenant(deps.runs.deps.db, tenantId, (tx) => monthUsageByModel(tx, agent.id));
  const spent = groups.reduce((sum, g) => sum + priceTokens(g.model, g.runtime, g).costMicroUsd, 0);
  if (spent >= capCents * 10_000) {
    throw new AppError(402, 'agent_cost_cap_reached', {
      code: 'agent_cost_cap_reached',
      extra: { message: `this agent's monthly cost cap of ${capCents} cents is reached`, capUsdCents: capCents, spentMicroUsd: spent },
    });
  }
}

export function cancelTurn(deps: GatewayDeps, tenantId: string, runId: string): Promise<void> {
  return cancelRun(deps.runs.deps, tenantId, runId);
}

/** Sums usage events (a run may report several). */
export function addUsage(total: Usage, e: RunEvent): Usage {
  if (e.type !== 'usage' || !e.usage) return total;
  return {
    inputTokens: total.inputTokens + (e.usage.inputTokens ?? 0),
    outputTokens: total.outputTokens + (e.usage.outputTokens ?? 0),
    cacheReadTokens: (total.cacheReadTokens ?? 0) + (e.usage.cacheReadTokens ?? 0),
    cacheCreateTokens: (total.cacheCreateTokens ?? 0) + (e.usage.cacheCreateTokens ?? 0),
  };
}

export const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreateTokens: 0 };

export interface ConversationView {
  conversationId: string;
  messages: Array<{ role: 'user' | 'assistant'; content: string; runId: string; createdAt?: string; error?: boolean }>;
  pending?: { runId: string; status: 'queued' | 'running' | 'waiting' };
}

/** What the end user is told while the turn's run waits for the agent owner's approval (stream and sync answer alike). */
export const waitingMessage = (toolName: unknown) => `waiting for the agent's owner to approve a call to ${String(toolName)}`;

/**
 * The 202 answer of a non-streamed chat whose run waits for the owner (`approvals: "owner"`): the caller is not held
 * until its deadline, the run is not cancelled, and the reply shows in the conversation once the run ends.
 */
export function waitingAnswer(turn: ChatTurn, e: RunEvent) {
  const conversationUrl = `/chat/${turn.agent.slug}/conversations/${turn.conversationId}`;
  return {
    status: 'waiting' as const,
    message: `${waitingMessage(e.toolName)}; the reply will be in the conversation once decided (GET ${conversationUrl})`,
    conversationId: turn.conversationId,
    runId: turn.runId,
    toolName: String(e.toolName),
    approvalId: String(e.approvalId),
    ...(typeof e.expiresAt === 'string' ? { expiresAt: e.expiresAt } : {}),
    conversationUrl,
  };
}

/** The messages so far of the caller's conversation on this agent (another key's reads as absent). */
export async function readConversation(deps: GatewayDeps, caller: ChatCaller, agent: PublishedRow, conversationId: string): Promise<ConversationView> {
  return withTenant(deps.runs.deps.db, caller.tenantId, async (tx) => {
    const conv = await selectConversation(tx, conversationId);
    if (!conv || conv.published_id !== agent.id || conv.owner !== caller.owner) throw notFound(`unknown conversation: ${conversationId}`);
    const messages: ConversationView['messages'] = [];
    let pending: ConversationView['pending'];
    for (const t of await selectTurns(tx, conv.session_id)) {
      messages.push({ role: 'user', content: t.prompt, runId: t.id, createdAt: new Date(t.startedAt).toISOString() });
      if (t.end?.type === 'result') messages.push({ role: 'assistant', content: t.end.message ?? '', runId: t.id });
      else if (t.end?.type === 'error') messages.push({ role: 'assistant', content: t.end.message ?? 'run failed', runId: t.id, error: true });
      pending = !t.end && (t.status === 'queued' || t.status === 'running' || t.status === 'waiting') ? { runId: t.id, status: t.status } : undefined;
    }
    return { conversationId, messages, ...(pending ? { pending } : {}) };
  });
}
