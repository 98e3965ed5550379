import type { Context } from 'hono';
import type { Kysely } from 'kysely';
import { withTenant, type DB, type Tx } from '../../db/index.ts';
import { AppError, notFound } from '../../shared/errors.ts';

/** Any request context that carries the authenticated principal (`/api` and `/v1` alike); only its tenant matters here. */
export type WithPrincipal = { Variables: { principal: { tenantId: string } } };

/** The caller's tenant: always from the credential, never from the request. */
// Hono's Context is invariant in its env, so the principal is read through the structural view.
export const tenantOf = <E extends WithPrincipal>(c: Context<E>): string => (c as unknown as Context<WithPrincipal>).get('principal').tenantId;

/** Runs `fn` in one transaction scoped to the caller's tenant (row-level security on `app.tenant_id`). */
export function inTenant<T, E extends WithPrincipal = WithPrincipal>(db: Kysely<DB>, c: Context<E>, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return withTenant(db, tenantOf(c), fn);
}

/**
 * Find-or-404: the value when it is there (a row, or `true` from a delete that hit a row), else 404 with `message`.
 * `error` replaces the 404 where a surface answers another shape (the agents API's messages).
 */
export function found<T>(value: T | undefined | null | false, message: string | (() => AppError)): T {
  if (value === undefined || value === null || value === false) throw typeof message === 'string' ? notFound(message) : message();
  return value;
}

/** Awaits a lookup, then find-or-404. */
export async function findOr404<T>(lookup: Promise<T | undefined | null | false>, message: string | (() => AppError)): Promise<T> {
  return found(await lookup, message);
}
