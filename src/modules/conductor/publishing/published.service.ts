import type { Kysely } from 'kysely';
import type { DB, Tx } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { AppError, badRequest, conflict, notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { checkUrl, type PrivateAddresses } from '../../../shared/egress/index.ts';
import { getSpec } from '../profiles/profiles.repo.ts';
import { kebab, type PatchInput, type PublishInput } from './publishing.schema.ts';
import { insertPublished, selectActive, selectActiveByProfile, selectActiveBySlug, softDeletePublished, updatePublished, type PublishedFields, type PublishedRow } from './publishing.repo.ts';

/** Published agents: publish (no billing check, variant B), read, patch, unpublish (soft delete). */
export interface PublishingDeps {
  db: Kysely<DB>;
  /** SVC_CHAT_PUBLIC_URL: `publicUrl` is shown only when it is set. */
  chatPublicUrl: string | undefined;
  /** AGENT_ORC_ENV: outside `dev` a JWKS URL must be https (the server fetches it: no plain-http hops to internal hosts). */
  appEnv: string;
  /** SVC_PRIVATE_ADDRESSES: with `deny` a JWKS URL on an internal address is refused (400); absent: allow. */
  privateAddresses?: PrivateAddresses;
}

export interface PublishedView {
  id: string;
  tenantId: string;
  profileName: string;
  slug: string;
  visibility: 'private' | 'org' | 'public';
  authMode: 'api_key' | 'jwt';
  allowedOrigins: string[];
  rateLimitRpm: number;
  syncMaxDurationSeconds: number;
  conversationTtlDays: number | null;
  exposeToolEvents: boolean;
  approvals: 'deny' | 'owner';
  enabled: boolean;
  monthlyCostCapUsdCents: number | null;
  jwksUrl: string | null;
  jwtIssuer: string | null;
  publicUrl?: string;
}

export const notPublished = (profile: string) => new AppError(404, 'not_published', { extra: { message: `profile ${profile} is not published` } });

export function toView(r: PublishedRow, chatPublicUrl: string | undefined): PublishedView {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    profileName: r.profile_name,
    slug: r.slug,
    visibility: r.visibility,
    authMode: r.auth_mode,
    allowedOrigins: r.allowed_origins,
    rateLimitRpm: r.rate_limit_rpm,
    syncMaxDurationSeconds: r.sync_max_duration_seconds,
    conversationTtlDays: r.conversation_ttl_days,
    exposeToolEvents: r.expose_tool_events,
    approvals: r.approvals,
    enabled: r.enabled,
    monthlyCostCapUsdCents: r.monthly_cost_cap_usd_cents === null ? null : Number(r.monthly_cost_cap_usd_cents),
    jwksUrl: r.jwks_url,
    jwtIssuer: r.jwt_issuer,
    ...(chatPublicUrl ? { publicUrl: `${chatPublicUrl}/chat/${r.slug}` } : {}),
  };
}

/** authMode jwt needs both a JWKS URL and an issuer (the database's check, said first as a 400). */
export function assertJwtComplete(f: { auth_mode?: string; jwks_url?: string | null; jwt_issuer?: string | null }, appEnv: string): void {
  if (f.auth_mode === 'jwt' && (!f.jwks_url || !f.jwt_issuer)) throw badRequest('authMode: jwt needs jwksUrl and jwtIssuer');
  if (f.jwks_url && appEnv !== 'dev' && !f.jwks_url.startsWith('https://')) throw badRequest('jwksUrl: must be an https URL');
}

/**
 * A JWKS URL being set is one the server will fetch: under SVC_PRIVATE_ADDRESSES=deny, one naming an internal address
 * is refused (400); where a name resolves to one, the fetch is refused when it connects.
 */
export function assertJwksAddress(url: string | null | undefined, policy: PrivateAddresses | undefined): void {
  const problem = url ? checkUrl(url, policy ?? 'allow') : undefined;
  if (problem) throw badRequest(`jwksUrl: ${problem}`);
}

function fieldsOf(input: Omit<PatchInput, 'slug'>): PublishedFields {
  return {
    visibility: input.visibility,
    auth_mode: input.authMode,
    allowed_origins: input.allowedOrigins,
    rate_limit_rpm: input.rateLimitRpm,
    sync_max_duration_seconds: input.syncMaxDurationSeconds,
    conversation_ttl_days: input.conversationTtlDays,
    expose_tool_events: input.exposeToolEvents,
    approvals: input.approvals,
    enabled: input.enabled,
    monthly_cost_cap_usd_cents: input.monthlyCostCapUsdCents,
    jwks_url: input.jwksUrl,
    jwt_issuer: input.jwtIssuer,
  };
}

const defined = (f: PublishedFields): PublishedFields => Object.fromEntries(Object.entries(f).filter(([, x]) => x !== undefined));

export async function publish(deps: PublishingDeps, tenantId: string, profile: string, input: PublishInput): Promise<PublishedView> {
  assertJwtComplete(fieldsOf(input), deps.appEnv);
  assertJwksAddress(input.jwksUrl, deps.privateAddresses);
  const row = await withTenant(deps.db, tenantId, async (tx) => {
    if (!(await getSpec(tx, 'profiles', profile))) throw notFound(`unknown profile: ${profile}`);
    if (await selectActiveByProfile(tx, profile)) throw conflict(`profile ${profile} is already published; PATCH it or unpublish it first`);
    const slug = input.slug ?? kebab(profile);
    if (await selectActiveBySlug(tx, slug)) throw conflict(`slug ${slug} is taken`);
    const inserted = await insertPublished(tx, { id: prefixedId('pub'), tenant_id: tenantId, profile_name: profile, slug, ...defined(fieldsOf(input)) });
    // the slug is active in another tenant (slugs are unique across tenants), or a concurrent publish won the index
    if (!inserted) throw conflict(`slug ${slug} is taken`);
    return inserted;
  });
  return toView(row, deps.chatPublicUrl);
}

export async function activeOf(tx: Tx, profile: string): Promise<PublishedRow> {
  const row = await selectActiveByProfile(tx, profile);
  if (!row) throw notPublished(profile);
  return row;
}

export async function getPublished(deps: PublishingDeps, tenantId: string, profile: string): Promise<PublishedView> {
  return toView(await withTenant(deps.db, tenantId, (tx) => activeOf(tx, profile)), deps.chatPublicUrl);
}

export async function listPublished(deps: PublishingDeps, tenantId: string): Promise<{ total: number; publishedAgents: PublishedView[] }> {
  const rows = await withTenant(deps.db, tenantId, (tx) => selectActive(tx));
  return { total: rows.length, publishedAgents: rows.map((r) => toView(r, deps.chatPublicUrl)) };
}

export async function patchPublished(deps: PublishingDeps, tenantId: string, profile: string, input: PatchInput): Promise<PublishedView> {
  const row = await withTenant(deps.db, tenantId, async (tx) => {
    const current = await activeOf(tx, profile);
    if (input.slug !== undefined && input.slug !== current.slug) throw badRequest(`slug: immutable (is ${current.slug}); unpublish and publish again to change it`);
    const fields = defined(fieldsOf(input));
    assertJwtComplete({ auth_mode: current.auth_mode, jwks_url: current.jwks_url, jwt_issuer: current.jwt_issuer, ...fields }, deps.appEnv);
    assertJwksAddress(input.jwksUrl, deps.privateAddresses);
    return Object.keys(fields).length ? updatePublished(tx, current.id, fields) : current;
  });
  return toView(row, deps.chatPublicUrl);
}

export async function unpublish(deps: PublishingDeps, tenantId: string, profile: string): Promise<void> {
  await withTenant(deps.db, tenantId, async (tx) => softDeletePublished(tx, (await activeOf(tx, profile)).id));
}
