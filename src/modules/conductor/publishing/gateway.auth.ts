import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { callerOf, type AgentKeyDeps } from './agent-keys.service.ts';
import { assertOpens, rateLimit, type ChatCaller, type GatewayDeps } from './gateway.service.ts';
import type { PublishedRow } from './publishing.repo.ts';

/**
 * Who may chat with a published agent, and the rate limit they spend. `private` and `org`: an agent key of this
 * agent (limited per key). `public`: no credential needed, limited per client address; an agent key, if sent, is
 * still verified and then limits as itself. Anonymous conversations are owned by no one: their random id is the
 * capability to continue or read them.
 */
export const ANONYMOUS = 'anonymous';

function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown'; // no socket (in-process requests)
  }
}

export async function admit(deps: GatewayDeps & AgentKeyDeps, c: Context, agent: PublishedRow): Promise<ChatCaller> {
  const header = c.req.header('authorization');
  if (agent.visibility === 'public' && header === undefined) {
    await rateLimit(deps, agent, `ip:${clientAddress(c)}`);
    return { tenantId: agent.tenant_id, publishedId: agent.id, owner: ANONYMOUS };
  }
  const caller = await callerOf(deps, header);
  assertOpens(agent, caller);
  await rateLimit(deps, agent, caller.owner);
  return caller;
}
