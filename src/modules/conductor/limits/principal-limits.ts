import type { Context, Env } from 'hono';
import type { Principal } from '../identity/index.ts';
import type { LimitRule } from './limiter.ts';

/**
 * The per-organisation and per-key request limits (seed 001: 600 and 300 a minute) of `/v1` and of the extension
 * routes. Both surfaces take the same counters (scopes `v1-org`, `v1-key`), so a key's budget is one whichever it
 * calls. A principal without a key (a dashboard session, a run token) is counted by its subject within its
 * organisation.
 */
export interface PrincipalLimits {
  perKey: number;
  perOrg: number;
  windowMs: number;
}

export const DEFAULT_PRINCIPAL_LIMITS: PrincipalLimits = { perKey: 300, perOrg: 600, windowMs: 60_000 };

/** The extension routes of seed 001 under `/api` (its table "Extension routes"); `/api/public/…` is not among them. */
const EXTENSION_PATH = /^\/api\/(?:models|sessions\/[^/]+\/model|providers|whoami|keys|billing|usage|kits)(?:\/|$)/;

export const isExtensionPath = (path: string): boolean => EXTENSION_PATH.test(path);

export function principalLimitRules<E extends Env & { Variables: { principal: Principal } }>(
  limits: PrincipalLimits,
  applies: (c: Context<E>) => boolean = () => true,
): LimitRule<E>[] {
  const principal = (c: Context<E>): Principal | undefined => (applies(c) ? (c.get('principal') as Principal | undefined) : undefined);
  return [
    { scope: 'v1-org', limit: limits.perOrg, periodMs: limits.windowMs, key: (c) => principal(c)?.tenantId },
    {
      scope: 'v1-key',
      limit: limits.perKey,
      periodMs: limits.windowMs,
      key: (c) => {
        const p = principal(c);
        return p && `${p.tenantId}:${p.keyId ?? p.subject ?? ''}`;
      },
    },
  ];
}
