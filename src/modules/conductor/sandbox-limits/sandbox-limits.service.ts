import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withOperator, withTenantStatement } from '../../../db/index.ts';
import type { ProfileSpec } from '../../../contracts/runner.wire.ts';
import {
  aboveCeiling,
  LIMIT_KEYS,
  lowerCeilings,
  type LimitKey,
  type LimitsConfig,
  type SandboxLimits,
  type SandboxLimitsOverride,
} from '../../../contracts/sandbox-limits.ts';
import { badRequest, notFound } from '../../../shared/errors.ts';
import { selectSandboxLimits, updateSandboxLimits } from './tenant-limits.repo.ts';

/**
 * The conductor's side of sandbox limits: the operator's defaults and ceilings (SVC_SANDBOX_*), each tenant's own
 * ceilings (`PUT /api/tenants/{id}/limits`, cached briefly), the 400s for a profile's or a /v1 environment's limits above
 * either, and the limits a profile carries to a runner, already held to both.
 */
export interface SandboxLimitsService {
  readonly operator: LimitsConfig;
  /** What the operator set for the tenant (a subset of the keys; `{}`: the operator's ceilings alone). */
  tenantCeilings(tenantId: string): Promise<SandboxLimitsOverride>;
  /**
   * 400 `<field>.<key>: <value> is above the operator's ceiling <n>` (or `the tenant's ceiling`) for the first key above
   * one; `names` spells the keys as the caller's surface does (snake_case on /v1).
   */
  assertWithin(tenantId: string, limits: SandboxLimitsOverride | undefined, field: string, names?: Record<LimitKey, string>): Promise<void>;
  /** The profile as runners get it: its `limits` held to the ceilings, plus every key the tenant holds below the operator's default. */
  prepareProfile(tenantId: string, profile: ProfileSpec): Promise<ProfileSpec>;
  /** `GET /api/tenants/{id}/limits`; 404 for an unknown tenant. */
  getTenantLimits(tenantId: string): Promise<TenantLimitsView>;
  /** `PUT /api/tenants/{id}/limits`: replaces the tenant's ceilings (400 above the operator's); new sessions get them. */
  setTenantLimits(tenantId: string, limits: SandboxLimitsOverride): Promise<TenantLimitsView>;
}

/** The answer of the tenant limits routes: what was set, and what the tenant's sessions are held to with it. */
export interface TenantLimitsView {
  tenantId: string;
  /** The tenant's own ceilings, as set. */
  limits: SandboxLimitsOverride;
  /** The operator's ceilings lowered by the tenant's: no session of the tenant gets more. */
  ceilings: SandboxLimits;
  /** What a session of the tenant gets for a key its profile does not set. */
  defaults: SandboxLimits;
}

/** How long a tenant's ceilings are reused before they are read again (another replica's PUT is seen after this). */
export const TENANT_LIMITS_TTL_MS = 5_000;

/** Only the limit keys with numbers: what the column holds, read defensively. */
function pickLimits(raw: Record<string, unknown> | undefined): SandboxLimitsOverride {
  const out: SandboxLimitsOverride = {};
  for (const k of LIMIT_KEYS) if (typeof raw?.[k] === 'number' && Number.isFinite(raw[k])) out[k] = raw[k] as number;
  return out;
}

/**
 * The limits a profile carries to runners (the agreed wire rule, runner.wire.ts ProfileSpec.limits): each key the
 * profile sets, held to the lower of the operator's and the tenant's ceiling; each key it does not set but the tenant
 * holds below the operator's default, at the tenant's ceiling (the runner fills the rest from its own defaults).
 * Undefined when there is nothing to send.
 */
export function limitsForRunner(operator: Pick<LimitsConfig, 'defaults' | 'ceilings'>, tenant: SandboxLimitsOverride, profile: SandboxLimitsOverride | undefined): SandboxLimitsOverride | undefined {
  const ceilings = lowerCeilings(operator.ceilings, tenant);
  const out: SandboxLimitsOverride = {};
  for (const k of LIMIT_KEYS) {
    const own = profile?.[k];
    if (own !== undefined) out[k] = Math.min(own, ceilings[k]);
    else if (tenant[k] !== undefined && tenant[k] < operator.defaults[k]) out[k] = tenant[k];
  }
  return Object.keys(out).length ? out : undefined;
}

/** `{memoryMiB: 'limits.memoryMiB'}`: the names a 400 uses for each key. */
function fieldNames(field: string, names: Record<LimitKey, string> | undefined): Record<LimitKey, string> {
  return Object.fromEntries(LIMIT_KEYS.map((k) => [k, `${field ? `${field}.` : ''}${names?.[k] ?? k}:`])) as Record<LimitKey, string>;
}

export function createSandboxLimits(deps: { db: Kysely<DB>; config: LimitsConfig; ttlMs?: number; now?: () => number }): SandboxLimitsService {
  const { db, config: operator } = deps;
  const ttlMs = deps.ttlMs ?? TENANT_LIMITS_TTL_MS;
  const now = deps.now ?? Date.now;
  const cache = new Map<string, { limits: SandboxLimitsOverride; at: number }>();

  async function tenantCeilings(tenantId: string): Promise<SandboxLimitsOverride> {
    const hit = cache.get(tenantId);
    if (hit && now() - hit.at < ttlMs) return hit.limits;
    const row = await withTenantStatement(db, tenantId, (tx) => selectSandboxLimits(tx, tenantId));
    const limits = pickLimits(row?.limits);
    if (cache.size > 10_000) cache.clear(); // a bound, not an eviction policy: it refills on demand
    cache.set(tenantId, { limits, at: now() });
    return limits;
  }

  const view = (tenantId: string, limits: SandboxLimitsOverride): TenantLimitsView => {
    const ceilings = lowerCeilings(operator.ceilings, limits);
    const defaults = Object.fromEntries(LIMIT_KEYS.map((k) => [k, Math.min(operator.defaults[k], ceilings[k])])) as SandboxLimits;
    return { tenantId, limits, ceilings, defaults };
  };

  return {
    operator,
    tenantCeilings,
    async assertWithin(tenantId, limits, field, names) {
      if (!limits || Object.keys(limits).length === 0) return;
      const named = fieldNames(field, names);
      const problem = aboveCeiling(limits, operator.ceilings, named) ?? aboveCeiling(limits, await tenantCeilings(tenantId), named, 'the tenant');
      if (problem) throw badRequest(problem);
    },
    async prepareProfile(tenantId, profile) {
      const limits = limitsForRunner(operator, await tenantCeilings(tenantId), profile.limits);
      const { limits: _stored, ...rest } = profile;
      return limits ? { ...rest, limits } : rest;
    },
    async getTenantLimits(tenantId) {
      const row = await withOperator(db, (tx) => selectSandboxLimits(tx, tenantId));
      if (!row || row.deleted) throw notFound('unknown tenant');
      return view(tenantId, pickLimits(row.limits));
    },
    async setTenantLimits(tenantId, limits) {
      const problem = aboveCeiling(limits, operator.ceilings, fieldNames('', undefined));
      if (problem) throw badRequest(problem);
      const stored = pickLimits(limits);
      if (!(await withOperator(db, (tx) => updateSandboxLimits(tx, tenantId, stored as Record<string, number>)))) throw notFound('unknown tenant');
      cache.set(tenantId, { limits: stored, at: now() });
      return view(tenantId, stored);
    },
  };
}
