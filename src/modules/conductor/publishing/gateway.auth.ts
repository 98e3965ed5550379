import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type * as jose from 'jose';
import { loadJose } from '../identity/index.ts';
import { unauthorized } from '../../../shared/errors.ts';
import { callerOf, type AgentKeyDeps } from './agent-keys.service.ts';
import { ANONYMOUS, assertOpens, rateLimit, type ChatCaller, type GatewayDeps } from './gateway.service.ts';
import type { FeatureDeps } from '../feature.ts';
import type { PublishedRow } from './publishing.repo.ts';

/**
 * Who may chat with a published agent, and the rate limit they spend. `authMode: jwt`: an end-user JWT (limited and
 * owning conversations per subject), whatever the visibility. Otherwise `private` and `org`: an agent key of this
 * agent (limited per key). `public`: no credential needed, limited per client address; an agent key, if sent, is
 * still verified and then limits as itself. Anonymous conversations are owned by no one: their random id is the
 * capability to continue or read them.
 */
export { ANONYMOUS };

function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown'; // no socket (in-process requests)
  }
}

/**
 * authMode jwt: an end-user token verified against the agent's JWKS and issuer; its subject owns the conversations.
 * The JWKS is the tenant's URL: fetched under the address policy, and never once per request (identity/jwks.ts).
 */
async function endUser(deps: GatewayDeps, agent: PublishedRow, header: string | undefined): Promise<string> {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!m) throw unauthorized('missing bearer credential: an end-user token (JWT) from this agent\'s identity provider');
  let payload: jose.JWTPayload;
  try {
    ({ payload } = await (await loadJose()).jwtVerify(m[1], deps.jwks.keysOf(agent.jwks_url!), { issuer: agent.jwt_issuer! }));
  } catch (err) {
    throw unauthorized(`invalid end-user token: ${err instanceof Error ? err.message : 'verification failed'}`);
  }
  if (!payload.sub) throw unauthorized('invalid end-user token: no sub claim');
  return payload.sub;
}

export async function admit(deps: GatewayDeps & AgentKeyDeps & { authenticate: FeatureDeps['authenticate'] }, c: Context, agent: PublishedRow): Promise<ChatCaller> {
  const header = c.req.header('authorization');
  if (agent.auth_mode === 'jwt') {
    const subject = await endUser(deps, agent, header);
    const owner = `jwt:${subject}`;
    await rateLimit(deps, agent, owner);
    return { tenantId: agent.tenant_id, publishedId: agent.id, owner, endUser: subject };
  }
  if (agent.visibility === 'public' && header === undefined) {
    await rateLimit(deps, agent, `ip:${clientAddress(c)}`);
    return { tenantId: agent.tenant_id, publishedId: agent.id, owner: ANONYMOUS };
  }
  // org: a signed-in dashboard session of the agent's tenant opens it too (never a tenant API key)
  if (agent.visibility === 'org' && header !== undefined && !/^Bearer\s+(pk|ao)_/i.test(header)) {
    const p = await deps.authenticate(header);
    if (p.authKind !== 'session' || p.tenantId !== agent.tenant_id || !p.subject) throw unauthorized(`this session does not open ${agent.slug}`);
    const owner = `session:${p.subject}`;
    await rateLimit(deps, agent, owner);
    return { tenantId: agent.tenant_id, publishedId: agent.id, owner, endUser: p.subject };
  }
  const caller = await callerOf(deps, header);
  assertOpens(agent, caller);
  await rateLimit(deps, agent, caller.owner);
  return caller;
}
