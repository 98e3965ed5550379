import type { MiddlewareHandler } from 'hono';
import { INTERNAL_TOKEN_HEADER, TENANT_HEADER } from '../../contracts/runner.ts';
import { badRequest, unauthorized } from '../../shared/errors.ts';
import { CLIENT_ID_PATTERN } from '../../shared/ids.ts';
import { safeEqual } from '../../shared/safe-equal.ts';

/**
 * Request context of every `/runner/*` route: the internal-token check and the tenant the conductor forwarded.
 */
export type RunnerEnv = { Variables: { tenant: string } };

/** Requests without a tenant header come from single-tenant setups and internal fan-out: they act as `default`. */
export const DEFAULT_TENANT = 'default';

/**
 * The session MCP endpoint is called by workers, not conductors: they do not hold the internal token, and present the
 * session's own token instead (mcp/mcp.routes.ts checks it), so the internal token does not apply there.
 */
const SESSION_MCP_PATH = /^\/runner\/sessions\/[^/]+\/mcp(\/|$)/;

/** Only callers presenting `Bearer <token>` in INTERNAL_TOKEN_HEADER get through; there is no open mode. */
export function requireInternalToken(token: string): MiddlewareHandler<RunnerEnv> {
  if (!token) throw new Error('the runner needs an internal token');
  const expected = `Bearer ${token}`;
  return async (c, next) => {
    if (!SESSION_MCP_PATH.test(c.req.path) && !safeEqual(c.req.header(INTERNAL_TOKEN_HEADER) ?? '', expected)) {
      throw unauthorized(`invalid or missing internal token (${INTERNAL_TOKEN_HEADER})`);
    }
    await next();
  };
}

export const resolveTenant: MiddlewareHandler<RunnerEnv> = async (c, next) => {
  const raw = c.req.header(TENANT_HEADER);
  const tenant = raw === undefined || raw === '' ? DEFAULT_TENANT : raw;
  if (!CLIENT_ID_PATTERN.test(tenant)) throw badRequest(`${TENANT_HEADER}: expected 1-128 letters, digits, underscore or hyphen`);
  c.set('tenant', tenant);
  await next();
};
