import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import type { ProfileSpec } from '../../../contracts/runner.wire.ts';
import type { ConductorServices } from '../../conductor/index.ts';
import type { ModelResolver } from '../models/model-ref.ts';
import type { SecretBox } from '../secret-box.ts';
import type { SessionRow } from '../sessions/sessions.repo.ts';
import { agentMcpUrls, endUserOf, openSecrets, runMcpServers, sessionProfile, withSettings } from './launch.ts';
import { mcpBearers } from './mcp-auth.ts';
import { environmentExtras, type LiveTurn } from './turn-state.ts';

/** What building a turn's run reads: the session's model, secrets and vaults, and the conductor that runs it. */
export interface RunSpecDeps {
  db: Kysely<DB>;
  conductor: ConductorServices;
  models: ModelResolver;
  box: SecretBox;
  /** Base URL at which workers reach this conductor (the function-tool endpoint). */
  selfUrl: string;
}

export type RunOptions = NonNullable<Parameters<ConductorServices['runs']['create']>[2]> & { profile: ProfileSpec };

/** A run of a session's turn, or of one of its subagents' turns, but its runner session and prompt. */
export interface RunSpec {
  /** `conductor.runs.create`'s body without `sessionId` and `prompt`: the run's id, the session's profile, its end user. */
  body: { id: string; profile: string; userId?: string };
  /** The session's profile with this run's model, the model, MCP servers and environment extras, whose key pays. */
  options: RunOptions;
}

/**
 * Everything a turn's run is made of but where it runs and what it is told: the agent's model with its settings, the
 * MCP servers (the function-tool endpoint at `depth`, which the runner relays with the run's token of the moment; the
 * agent's servers with the session's secrets and its vaults' bearers), the session's profile and whose key pays for the
 * model.
 *
 * The profile is built from the stored session's environment, which carries the network access resolved at creation
 * (`network.access`), so it is the profile the session was created with. What a run's commands may reach is decided by
 * the runner session's profile, given when that session is made (the session's at creation, a subagent's with its
 * first turn). The profile a run carries is read for that run (its memory stores) but does not change an existing
 * runner session.
 */
export async function buildRunSpec(
  deps: RunSpecDeps,
  t: Pick<LiveTurn, 'environment' | 'env' | 'skills'>,
  row: SessionRow,
  run: { runId: string; deadlineMs: number; /** The depth of the agent whose run this is (0, the default: the session's own). */ depth?: number },
): Promise<RunSpec> {
  const tenantId = row.tenant_id;
  const model = withSettings(await deps.models.resolve(tenantId, row.agent.model), row.agent);
  const secrets = openSecrets(deps.box, tenantId, row.id, row.secrets);
  const bearers = await mcpBearers({ db: deps.db, box: deps.box, tenantFetch: deps.conductor.tenantFetch }, tenantId, row);
  // the runner's call waits a minute longer than the deadline, so a call ends with the deadline's answer, not a timeout
  const mcpServers = runMcpServers({ selfUrl: deps.selfUrl, sessionId: row.id, agent: row.agent, depth: run.depth, secrets, bearers, callTimeoutMs: run.deadlineMs + 60_000, environment: t.environment });
  const profile = sessionProfile(row.profile_name, row.agent, row.environment, model.model);
  const keySource = deps.models.parse(row.agent.model).kind === 'byok' ? 'tenant' : 'platform';
  return {
    body: { id: run.runId, profile: row.profile_name, ...endUserOf(row.metadata) },
    options: { profile, extras: { model, mcpServers, ...environmentExtras(t) }, keySource, tenantMcp: agentMcpUrls(row.agent) },
  };
}
