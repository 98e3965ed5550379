import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import type { ConductorServices } from '../../conductor/index.ts';
import { describeError } from '../../../shared/errors.ts';
import { prefixedId, randomId } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/log.ts';
import type { EventStore } from '../events/event-store.ts';
import type { ModelResolver } from '../models/model-ref.ts';
import type { SecretBox } from '../secret-box.ts';
import { getSessionRow, insertTurn, saveItem, updateSession, updateTurn, type SessionRow } from '../sessions/sessions.repo.ts';
import { DEFAULT_TURN_DEADLINE_MS, type TurnEngine } from '../turns/engine.ts';
import { agentMcpUrls, endpointToolNames, endUserOf, openSecrets, runMcpServers, sessionProfile, withSettings } from '../turns/launch.ts';
import { mcpBearers } from '../turns/mcp-auth.ts';
import { addUsage, createTurnTranslator } from '../turns/translate.ts';
import { environmentExtras, turnError, type CallSite, type LiveTurn, type Locked, type SlotHold } from '../turns/turn-state.ts';
import type { SessionEventBody, SessionItem, SessionTurnError } from '../wire.ts';
import { setSubagentStatus, type SubagentRow } from './subagents.repo.ts';

/**
 * One turn of a subagent: a run on its runner session, translated onto the parent session's stream, its items stored
 * as the subagent's. Its runs reach the session's function-tool endpoint like the session's own: its function calls
 * are announced in its own turn (`turn_id`, items) and answered by the client's `tool_result`, its calls to
 * `always_ask` tools are listed in the session's `required_actions` (`subagent_id`) and decided there; at a depth below
 * MAX_SUBAGENT_DEPTH it may start subagents of its own. The runner session is created with the subagent's first turn;
 * in a hosted environment it is placed beside the session's and shares its sandbox (`sandboxOf`), so a subagent works
 * in the same files, with the same `env` and skills.
 */
export interface SubagentTurnDeps {
  db: Kysely<DB>;
  conductor: ConductorServices;
  store: EventStore;
  models: ModelResolver;
  box: SecretBox;
  selfUrl: string;
  log: Logger;
  keepAliveMs?: number;
  turnDeadlineMs?: number;
  /** Serialises the subagents' additions to their session's usage. */
  usageLock: Locked;
  /** Drops the function calls a turn still waits on when it ends (under the session's lock: engine.endCalls). */
  endCalls(tenantId: string, sessionId: string, turnId: string): Promise<void>;
  /** Lists a call waiting for an approval in the session's `required_actions`, and takes it out once decided (engine.approvalSeen). */
  approvalSeen: TurnEngine['approvalSeen'];
}

export type Answer = { text: string; isError: boolean };

/** Emits a subagent's turn events; its items are stored as that subagent's, in order. */
function emitter(deps: SubagentTurnDeps, tenantId: string, sessionId: string, subagentId: string) {
  let writes = Promise.resolve();
  return {
    emit(bodies: SessionEventBody[]) {
      for (const body of bodies) {
        void deps.store.emit(tenantId, sessionId, body);
        if (body.type !== 'agent.session.turn.item.added' && body.type !== 'agent.session.turn.item.done') continue;
        const item = body.item as SessionItem;
        writes = writes
          .then(() => withTenant(deps.db, tenantId, (q) => saveItem(q, tenantId, sessionId, item, subagentId)))
          .catch((err) => deps.log.warn('saving a subagent item failed', { sessionId, subagentId, error: String(err) }));
      }
    },
    written: () => writes,
  };
}

export async function runSubagentTurn(
  deps: SubagentTurnDeps,
  t: LiveTurn,
  caller: CallSite,
  row: SessionRow,
  sub: SubagentRow,
  prompt: string,
  signal: AbortSignal,
  slot: SlotHold,
): Promise<Answer> {
  const tenantId = row.tenant_id;
  const sessionId = row.id;
  const tx = <T>(fn: Parameters<typeof withTenant<T>>[2]) => withTenant(deps.db, tenantId, fn);
  const depth = caller.depth + 1;
  const turnId = prefixedId('turn', 24);
  const base = { session_id: sessionId, turn_id: turnId };
  const out = emitter(deps, tenantId, sessionId, sub.id);
  const created = await tx((q) => insertTurn(q, { id: turnId, tenantId, sessionId, agentId: row.agent.id, ownerId: deps.conductor.runs.ownerId, subagentId: sub.id }));
  out.emit([{ type: 'agent.session.turn.created', ...base, turn: created }]);
  const started = await tx((q) => updateTurn(q, turnId, { status: 'in_progress', started: true }));
  const userItem = { type: 'message', id: `msg_${randomId(24)}`, role: 'user', content: [{ type: 'input_text', text: prompt }], phase: null, status: 'completed', turn_id: turnId };
  out.emit([
    { type: 'agent.session.turn.in_progress', ...base, turn: started },
    { type: 'agent.session.turn.item.added', ...base, item: userItem, output_index: null },
  ]);
  // function and subagent calls are announced by the endpoint (in this turn), not as MCP calls
  const endpointTools = endpointToolNames(row.agent, depth);
  const translator = createTurnTranslator({ sessionId, turnId, isFunctionTool: (name) => endpointTools.has(name) });
  const site: CallSite = { turnId, agentId: sub.id, depth, emit: out.emit, translator, slot };
  let status: 'completed' | 'failed' | 'cancelled' = 'completed';
  let error: SessionTurnError | null = null;
  let text = '';
  const runId = prefixedId('run', 24);
  const cancelRun = () => void deps.conductor.runs.cancel(tenantId, runId).catch(() => {});
  const deadlineMs = deps.turnDeadlineMs ?? DEFAULT_TURN_DEADLINE_MS;
  t.subRuns.set(runId, site); // before the run exists: its first call may come at once
  try {
    const model = withSettings(await deps.models.resolve(tenantId, row.agent.model), row.agent);
    const secrets = openSecrets(deps.box, tenantId, sessionId, row.secrets);
    const bearers = await mcpBearers({ db: deps.db, box: deps.box, tenantFetch: deps.conductor.tenantFetch }, tenantId, row);
    const mcpServers = runMcpServers({ selfUrl: deps.selfUrl, sessionId, agent: row.agent, depth, secrets, bearers, callTimeoutMs: deadlineMs + 60_000, environment: t.environment });
    const profile = sessionProfile(row.profile_name, row.agent, row.environment, model.model);
    const keySource = deps.models.parse(row.agent.model).kind === 'byok' ? 'tenant' : 'platform';
    const sandboxOf = row.environment.type === 'none' ? undefined : { sandboxOf: sessionId };
    if (!sub.runner_session_id) {
      // the subagent's own conversation; in a hosted environment, in the session's sandbox
      const placed = await deps.conductor.sessions.create(tenantId, profile, sandboxOf);
      sub.runner_session_id = placed.sessionId;
      await tx((q) => setSubagentStatus(q, sub.id, 'active', placed.sessionId));
    } else if (sandboxOf) await deps.conductor.sessions.place(tenantId, sub.runner_session_id, sandboxOf);
    const body = { id: runId, profile: row.profile_name, prompt, sessionId: sub.runner_session_id, ...endUserOf(row.metadata) };
    await deps.conductor.runs.create(tenantId, body, { profile, extras: { model, mcpServers, ...environmentExtras(t) }, keySource, tenantMcp: agentMcpUrls(row.agent) });
    await tx((q) => updateTurn(q, turnId, { runId }));
    signal.addEventListener('abort', cancelRun, { once: true });
    if (signal.aborted) cancelRun(); // abandoned while the run was being created
    const events = await deps.conductor.runs.follow(tenantId, runId, 0, { keepAliveMs: deps.keepAliveMs ?? 30_000, signal });
    let terminal = false;
    for await (const e of events) {
      if (!e) continue;
      const bodies = translator.handle(e.event);
      for (const b of bodies) if (b.type === 'agent.session.turn.output_text.done') text = String(b.text);
      out.emit(bodies);
      if (e.event.type === 'approval_required' || e.event.type === 'approval_decided') {
        await deps.approvalSeen(tenantId, sessionId, runId, e.event, { turnId, subagentId: sub.id }).catch((err) => deps.log.warn('showing an approval failed', { sessionId, subagentId: sub.id, error: String(err) }));
      }
      if (e.event.type === 'error') {
        status = 'failed';
        error = turnError(e.event.message ?? 'the run failed');
      }
      if (e.event.type === 'result' || e.event.type === 'error') {
        terminal = true;
        break;
      }
    }
    // the call was abandoned (the parent run ended: its turn cancelled, or its conductor stopping): so was this run
    if (!terminal && status === 'completed') {
      status = 'failed';
      error = { code: 'internal_error', message: "the subagent's turn was interrupted: its parent turn's run ended" };
    }
  } catch (err) {
    status = 'failed';
    error = turnError(describeError(err));
  } finally {
    signal.removeEventListener('abort', cancelRun);
    t.subRuns.delete(runId);
  }
  await deps.endCalls(tenantId, sessionId, turnId);
  if (status !== 'completed' && t.cancelling) {
    status = 'cancelled'; // the parent turn was cancelled, and this one with it
    error = null;
  }
  out.emit(translator.finish(status));
  await out.written();
  const usage = translator.usage();
  const ended = await tx((q) => updateTurn(q, turnId, { status, error, usage, completed: true }));
  // the session's usage counts its subagents' turns too (added before the parent hears back, so before its turn ends)
  if (usage) {
    await deps.usageLock(sessionId, async () => {
      const before = await tx((q) => getSessionRow(q, sessionId));
      if (before) await tx((q) => updateSession(q, sessionId, { usage: addUsage(before.usage, usage) }));
    });
  }
  out.emit([{ type: `agent.session.turn.${status}`, ...base, turn: ended, usage }]);
  if (status === 'completed') return { text, isError: false };
  return { text: status === 'cancelled' ? 'the subagent turn was cancelled' : `the subagent failed: ${error?.message ?? 'unknown error'}`, isError: true };
}
