import type { MiddlewareHandler } from 'hono';
import { forbidden, notFound } from '../../../shared/errors.ts';
import type { Principal } from './auth.ts';
import { atLeast, type Role } from './roles.ts';

/** Any request context that carries the authenticated principal (`/api` and `/v1` alike). */
type WithPrincipal = { Variables: { principal: Principal } };

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `admin or owner`, `member or higher`: what a refusal says the caller needs. */
function needs(min: Role): string {
  return min === 'owner' ? 'owner' : min === 'admin' ? 'admin or owner' : `${min} or higher`;
}

/** Whether the principal's role is at least `min`: for policies inside a service (what a member may see). */
export function hasRole(principal: Pick<Principal, 'role'>, min: Role): boolean {
  return atLeast(principal.role, min);
}

/** The refusal for a principal whose role is below `min`, or undefined when it may: for checks inside a service. */
export function roleRefusal(principal: Pick<Principal, 'role'>, min: Role, what: string): Error | undefined {
  return atLeast(principal.role, min) ? undefined : forbidden(`${what} needs role ${needs(min)}`);
}

/**
 * Middleware: 403 `<what> needs role <min> …` unless the caller's role is at least `min`. `{ writesOnly: true }` lets
 * reads through (GET, HEAD, OPTIONS) and guards only the changes.
 */
export function requireRole<E extends WithPrincipal>(min: Role, what: string, opts: { writesOnly?: boolean } = {}): MiddlewareHandler<E> {
  return async (c, next) => {
    if (!(opts.writesOnly && SAFE_METHODS.has(c.req.method))) {
      const refusal = roleRefusal(c.get('principal'), min, what);
      if (refusal) throw refusal;
    }
    await next();
  };
}

/** Viewers may only read: any other method is 403 before a handler runs (on `/api` and `/v1`). */
export function readOnlyViewers<E extends WithPrincipal>(): MiddlewareHandler<E> {
  return async (c, next) => {
    if (c.get('principal').role === 'viewer' && !SAFE_METHODS.has(c.req.method)) throw forbidden('role viewer may only read');
    await next();
  };
}

/**
 * Middleware for the operator's routes (AGENT_ORC_ADMIN_TENANT): everyone outside the operator tenant gets 404, so the
 * routes are not enumerable. Combine with `requireRole` for what needs a stronger role.
 */
export function operatorOnly<E extends WithPrincipal>(adminTenant: string | undefined): MiddlewareHandler<E> {
  return async (c, next) => {
    if (!adminTenant || c.get('principal').tenantId !== adminTenant) throw notFound('not found');
    await next();
  };
}

/** The guards as features receive them (`deps.guards`): `operatorOnly` already knows the operator tenant. */
export interface Guards {
  requireRole: typeof requireRole;
  operatorOnly<E extends WithPrincipal>(): MiddlewareHandler<E>;
  readOnlyViewers: typeof readOnlyViewers;
}

export function createGuards(adminTenant: string | undefined): Guards {
  return { requireRole, operatorOnly: () => operatorOnly(adminTenant), readOnlyViewers };
}
