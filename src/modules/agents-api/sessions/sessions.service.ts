import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { fromSnake, LIMIT_SNAKE } from '../../../contracts/sandbox-limits.ts';
import { memoryStores, NoCommandSandbox, type ConductorServices } from '../../conductor/index.ts';
import { AppError, badRequest, notFound } from '../../../shared/errors.ts';
import { AGENT_SESSION_PROFILE_PREFIX, prefixedId, randomId } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/log.ts';
import { sessionSnapshot } from '../agents/agent.config.ts';
import { checkEnvVars, refuseStdioMcp } from '../turns/launch.ts';
import { getAgentConfig } from '../agents/agents.service.ts';
import type { ResourceDeps } from '../deps.ts';
import { createEnvironment, getEnvironmentInfo, networkAccessOf } from '../environments/environments.service.ts';
import { WORKSPACE } from '../environments/environment.schema.ts';
import { seedSandbox } from '../environments/workspace-sync.ts';
import type { EventStore } from '../events/event-store.ts';
import type { ModelResolver } from '../models/model-ref.ts';
import { cursorPage, deletedObject, findOr404, type CursorPage, type CursorQuery } from '../../crud/index.ts';
import type { Subagents } from '../subagents/subagents.service.ts';
import type { TurnEngine } from '../turns/engine.ts';
import { runtimeModelName, sealSecrets, sessionProfile } from '../turns/launch.ts';
import { gateTurn } from '../turns/turn-gate.ts';
import type { AgentSession, Map } from '../wire.ts';
import { inputMessages, type SessionCreateParams } from './session.schema.ts';
import { existingVaultIds } from '../vaults/vaults.repo.ts';
import { deleteSessionRow, getSessionRow, insertSession, listSessionRows, toSession, updateSession } from './sessions.repo.ts';

/**
 * Agent sessions (`client.beta.agents.sessions`). A session is a runner session (its id is the runner session id)
 * with a snapshot of its agent taken at creation, a profile of its own on the runner, and an environment from the
 * environments service. Turns are the engine's business; this file creates, reads, relabels and deletes sessions.
 */
export interface SessionsDeps {
  db: Kysely<DB>;
  conductor: ConductorServices;
  resources: ResourceDeps;
  store: EventStore;
  models: ModelResolver;
  engine: TurnEngine;
  subagents: Subagents;
  log: Logger;
}

export const noSuchSession = (id: string) => notFound(`No session found with id '${id}'.`);

export async function requireSession(db: Kysely<DB>, tenantId: string, id: string) {
  const row = await withTenant(db, tenantId, (tx) => getSessionRow(tx, id));
  if (!row) throw noSuchSession(id);
  return row;
}

async function checkVaults(db: Kysely<DB>, tenantId: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const found = await withTenant(db, tenantId, (tx) => existingVaultIds(tx, ids));
  const missing = ids.findIndex((id) => !found.some((f) => f.id === id));
  if (missing >= 0) throw badRequest(`vault_ids[${missing}]: No such vault: ${ids[missing]}`);
}

/**
 * Creates the session and, with `input`, admits its first turn (which may still run when this returns). A first turn
 * (`input`, or `opts.turnFollows` when the caller admits it right after: the streaming create) asks the run gates
 * (billing's credit check) before the session is allocated, so a refusal (402) leaves nothing behind.
 */
export async function createSession(deps: SessionsDeps, tenantId: string, p: SessionCreateParams, opts: { turnFollows?: boolean } = {}): Promise<AgentSession> {
  const agentId = p.agent_id ?? undefined;
  if (!agentId && !p.agent) throw badRequest('agent_id: one of agent_id or agent is required');
  if (!agentId && !p.agent?.model) throw badRequest('agent.model: required when agent_id is omitted');
  const base = agentId ? await getAgentConfig(deps, tenantId, agentId) : undefined;
  if (p.agent?.model) deps.models.parse(p.agent.model, 'agent.model');
  const { agent, secrets } = sessionSnapshot(agentId ?? prefixedId('agent', 24), base, p.agent ?? undefined);
  refuseStdioMcp(agent.tools, p.environment);
  const vaultIds = p.vault_ids ?? [];
  await checkVaults(deps.db, tenantId, vaultIds);
  await memoryStores.assertStoresExist(deps.db, tenantId, p.agent?.memory_stores ?? undefined, 'agent.memory_stores');
  if (p.environment.type === 'openai_hosted') {
    blockRemoteMcp(agent.tools);
    const limits = p.environment.config?.limits;
    if (limits) await deps.conductor.sandboxLimits.assertWithin(tenantId, fromSnake(limits), 'environment.config.limits', LIMIT_SNAKE);
  }

  const profileName = `${AGENT_SESSION_PROFILE_PREFIX}${randomId(16)}`;
  if (p.input || opts.turnFollows) await gateTurn(deps, tenantId, { model: agent.model, profileName, sessionId: null });
  const access = await networkAccessOf(deps.resources, tenantId, p.environment);
  const profile = sessionProfile(profileName, agent, { ...p.environment, network: access && { access } }, runtimeModelName(deps.models, agent.model));
  const placed = await deps.conductor.sessions.create(tenantId, profile).catch((err: unknown) => {
    // a /v1 user never named tools: the refusal names the environment, its cause and the fixes
    if (err instanceof NoCommandSandbox && p.environment.type === 'openai_hosted')
      throw badRequest(`environment: a hosted environment runs its commands in the command sandbox, which runner ${err.runner} cannot provide: ${err.detail}; or use environment type none (no commands)`);
    throw err;
  });
  const sessionId = placed.sessionId;
  let row;
  try {
    const environment = await createEnvironment(deps.resources, tenantId, p.environment, { sessionId, prefix: 'environment.', check: (secrets) => checkEnvVars(agent.tools, secrets.env) });
    // the sandbox starts with the environment's workspace files, before any turn can run
    if (environment.type !== 'none') await seedSandbox(deps, tenantId, sessionId, environment.id, WORKSPACE);
    row = await withTenant(deps.db, tenantId, (tx) =>
      insertSession(tx, {
        id: sessionId,
        tenant_id: tenantId,
        agent_id: agentId ?? null,
        profile_name: profileName,
        agent,
        secrets: sealSecrets(deps.resources.box, tenantId, sessionId, secrets),
        environment,
        metadata: (p.metadata ?? {}) as Map,
        vault_ids: vaultIds,
      }),
    );
  } catch (err) {
    await deps.conductor.sessions.shutdown(tenantId, sessionId, { dropProfile: true }).catch(() => {});
    throw err;
  }
  // durable before the response: a subscriber that comes after the creation sees it as history
  const created = [deps.store.emit(tenantId, sessionId, { type: 'agent.session.created', session: toSession(row) })];
  if (row.environment.type !== 'none' && row.environment.id) {
    // an environment with setup work stays pending until its first turn sets it up (environments/setup.ts)
    const info = await getEnvironmentInfo(deps.resources, tenantId, row.environment.id);
    for (const status of info.status === 'pending' ? (['pending'] as const) : (['pending', 'ready', 'connected'] as const)) {
      const environment = { id: row.environment.id, type: row.environment.type, status, error: null };
      created.push(deps.store.emit(tenantId, sessionId, { type: `agent.session.environment.${status}`, session_id: sessionId, turn_id: null, environment }));
    }
  }
  await Promise.all(created);
  if (p.input) {
    await deps.engine.admit(tenantId, sessionId, [{ type: 'agent.session.input.message', input: inputMessages(p.input) }]);
    return toSession(await requireSession(deps.db, tenantId, sessionId));
  }
  return toSession(row);
}

/** Hosted restriction (seed 001, Environment template): remote MCP servers are blocked in hosted environments. */
function blockRemoteMcp(tools: Array<{ type: string; [key: string]: unknown }>): void {
  const i = tools.findIndex((t) => t.type === 'mcp' && (t.transport as { type?: string } | undefined)?.type === 'http');
  if (i >= 0) throw badRequest(`agent.tools.${i}: remote MCP servers are blocked in hosted environments (server_label ${JSON.stringify(tools[i].server_label)}); use environment type none, or a stdio MCP server`);
}

export async function getSession(deps: SessionsDeps, tenantId: string, id: string): Promise<AgentSession> {
  const row = await requireSession(deps.db, tenantId, id);
  if (!row.active_turn_id) return toSession(row);
  await deps.engine.recover(row); // a turn whose conductor went away ends here, visibly
  return toSession(await requireSession(deps.db, tenantId, id));
}

export async function listSessions(deps: SessionsDeps, tenantId: string, q: CursorQuery, agentId: string | undefined): Promise<CursorPage<AgentSession>> {
  const rows = await withTenant(deps.db, tenantId, (tx) => listSessionRows(tx, q, agentId));
  return cursorPage(rows.map(toSession), q.limit);
}

/** Only metadata can change; `null` or `{}` clears it, omitted keeps it. */
export async function updateSessionMetadata(deps: SessionsDeps, tenantId: string, id: string, metadata: Map | null | undefined): Promise<AgentSession> {
  const row = await withTenant(deps.db, tenantId, (tx) => updateSession(tx, id, metadata === undefined ? {} : { metadata: metadata ?? {} }));
  if (!row) throw noSuchSession(id);
  return toSession(row);
}

/** Stops a live turn, ends the runner sessions (its own, its subagents') and its profile, and deletes the session; its saved agent stays. */
export async function deleteSession(deps: SessionsDeps, tenantId: string, id: string): Promise<{ id: string; deleted: true; object: 'agent.session.deleted' }> {
  await requireSession(deps.db, tenantId, id);
  await deps.engine.forget(id);
  await deps.subagents.forget(tenantId, id);
  await deps.store.flushed(id);
  await deps.conductor.sessions.shutdown(tenantId, id, { dropProfile: true }).catch((err) => {
    if (!(err instanceof AppError && err.status === 404)) deps.log.warn('ending the runner session failed', { sessionId: id, error: String(err) });
  });
  await findOr404(withTenant(deps.db, tenantId, (tx) => deleteSessionRow(tx, id)), () => noSuchSession(id));
  deps.store.forget(id);
  return deletedObject(id, 'agent.session.deleted');
}
