import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withSystem, withTenant } from '../../../db/index.ts';
import type { ConductorServices } from '../../conductor/index.ts';
import { describeError } from '../../../shared/errors.ts';
import { prefixedId, randomId } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/log.ts';
import type { EventStore } from '../events/event-store.ts';
import type { ModelResolver } from '../models/model-ref.ts';
import type { SecretBox } from '../secret-box.ts';
import { getSessionRow, updateTurn, type SessionRow } from '../sessions/sessions.repo.ts';
import type { TurnEngine } from '../turns/engine.ts';
import { MAX_SUBAGENT_DEPTH, MESSAGE_SUBAGENT, SPAWN_SUBAGENT } from '../turns/launch.ts';
import { createLocks, type CallSite, type LiveTurn } from '../turns/turn-state.ts';
import type { SessionEventBody, SessionItem, SessionTurnError } from '../wire.ts';
import { createSlots } from './slots.ts';
import { runSubagentTurn, type Answer } from './subagent-turn.ts';
import { getSubagent, insertSubagent, setSubagentStatus, subagentRunnerSessions, toSubagent, unfinishedSubagentTurns, type SubagentRow } from './subagents.repo.ts';
import { idleWaiters } from '../../../shared/idle.ts';

/**
 * Subagents (seed 001 "Subagent", `multi_agent`): the model of a session whose agent has `multi_agent.enabled` gets two
 * tools on the session's function-tool endpoint. `spawn_subagent {task, name?}` opens a subagent (`active`), runs
 * one turn of it (subagent-turn.ts: a runner session of its own conversation, the session's model, instructions, MCP
 * servers and function tools, in a hosted environment its sandbox) with the task as its prompt, closes it and
 * answers the call with the subagent's final text, so the calling turn goes on. `send_subagent_input {subagent_id,
 * message}` reopens a closed subagent (`agent.session.subagent.active`) for one more turn on the same conversation.
 * Subagents nest: a subagent's model has the same two tools until MAX_SUBAGENT_DEPTH (its subagents' parent is
 * the subagent). At most `max_concurrent_subagents` subagents of a session run at once (slots.ts); more calls queue
 * (the Subagent object exists once it runs). Everything is announced on the parent session's event stream: the
 * subagent events, the subagent's turns (`subagent_id` set) and items (stored apart from the session's own items),
 * and in the calling turn a `create_subagent_call` / `send_subagent_input_call` item and an `agent_message` with the
 * answer.
 */
export interface Subagents {
  /** A call of a subagent tool by the run `runId` of the session's live turn, or of one of its subagents' turns. */
  call(tenantId: string, sessionId: string, runId: string, name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<{ text: string; isError: boolean }>;
  /** Ends the runner sessions of a session's subagents (the session is being deleted). */
  forget(tenantId: string, sessionId: string): Promise<void>;
  /** Ends the subagent turns a stopped conductor left running (failed) and closes their subagents; at boot. */
  recover(): Promise<void>;
  /** Resolves once no subagent turn is running (their runs were interrupted by the conductor's drain), or after `timeoutMs`. */
  settled(timeoutMs: number): Promise<void>;
}

export interface SubagentsDeps {
  db: Kysely<DB>;
  conductor: ConductorServices;
  store: EventStore;
  models: ModelResolver;
  box: SecretBox;
  engine: TurnEngine;
  selfUrl: string;
  log: Logger;
  keepAliveMs?: number;
  turnDeadlineMs?: number;
}

const fail = (text: string): Answer => ({ text, isError: true });

export function createSubagents(deps: SubagentsDeps): Subagents {
  const tx = <T>(tenantId: string, fn: Parameters<typeof withTenant<T>>[2]) => withTenant(deps.db, tenantId, fn);
  const slots = createSlots();
  /** Subagents with a turn in flight (a second message to one of them is refused, not interleaved). */
  const busy = new Set<string>();
  let running = 0;
  const idle = idleWaiters();
  const turnDeps = {
    ...deps,
    usageLock: createLocks(),
    endCalls: (...args: Parameters<TurnEngine['endCalls']>) => deps.engine.endCalls(...args),
    approvalSeen: (...args: Parameters<TurnEngine['approvalSeen']>) => deps.engine.approvalSeen(...args),
  };

  const subagentEvent = (status: 'created' | 'active' | 'closed', row: SubagentRow): SessionEventBody => {
    const { session_id: _, ...subagent } = toSubagent(row); // the event's subagent carries no session_id (spec §5.2)
    return { type: `agent.session.subagent.${status}`, subagent };
  };

  /** The calling turn's item for a subagent call, added now; the function returned ends it (and adds the answer). */
  function announce(t: LiveTurn, site: CallSite, item: { id: string; type: string; [key: string]: unknown }) {
    const full: SessionItem = { ...item, status: 'in_progress', turn_id: site.turnId };
    site.emit(site.translator.closeMessage());
    const outputIndex = site.translator.nextOutputIndex();
    const base = { session_id: t.sessionId, turn_id: site.turnId };
    site.emit([{ type: 'agent.session.turn.item.added', ...base, item: full, output_index: outputIndex }]);
    return (answer: Answer, sub: SubagentRow | undefined) => {
      site.emit([{ type: 'agent.session.turn.item.done', ...base, item: { ...full, status: answer.isError ? 'failed' : 'completed' }, output_index: outputIndex }]);
      if (sub && !answer.isError) {
        const message = { type: 'agent_message', id: `amsg_${randomId(24)}`, content: [{ type: 'output_text', text: answer.text }], sender_agent_id: sub.id, recipient_agent_id: site.agentId, turn_id: site.turnId };
        site.emit([{ type: 'agent.session.turn.item.added', ...base, item: message, output_index: null }]);
      }
    };
  }

  /** Runs a subagent's turn in a slot: opens it (created, or active again), runs, closes it. */
  async function inSlot(t: LiveTurn, caller: CallSite, row: SessionRow, open: () => Promise<SubagentRow>, prompt: string, signal: AbortSignal): Promise<{ answer: Answer; sub?: SubagentRow }> {
    const max = row.agent.multi_agent.max_concurrent_subagents ?? 1;
    // a subagent waiting for one of its own does not run meanwhile: its place is free until this one is done
    const resumeCaller = caller.slot?.pause();
    running++;
    try {
      let held;
      try {
        held = await slots.acquire(row.id, max, signal);
      } catch (err) {
        return { answer: fail(describeError(err)) };
      }
      try {
        const sub = await open();
        const answer = await runSubagentTurn(turnDeps, t, caller, row, sub, prompt, signal, held);
        const closed = await tx(row.tenant_id, (q) => setSubagentStatus(q, sub.id, 'closed'));
        void deps.store.emit(row.tenant_id, row.id, subagentEvent('closed', closed));
        return { answer, sub: closed };
      } finally {
        held.release();
      }
    } catch (err) {
      deps.log.warn('a subagent turn failed', { sessionId: row.id, error: describeError(err) });
      return { answer: fail(`the subagent failed: ${describeError(err)}`) };
    } finally {
      await resumeCaller?.(signal);
      if (--running === 0) idle.wake();
    }
  }

  async function spawn(t: LiveTurn, caller: CallSite, row: SessionRow, args: Record<string, unknown>, signal: AbortSignal): Promise<Answer> {
    const task = typeof args.task === 'string' ? args.task.trim() : '';
    if (!task) return fail(`${SPAWN_SUBAGENT}: 'task' must be a non-empty string`);
    const name = typeof args.name === 'string' && args.name.trim() ? args.name.trim().slice(0, 64) : null;
    const id = prefixedId('subagent', 24);
    const instructions = [{ type: 'output_text' as const, text: task }];
    const done = announce(t, caller, { type: 'create_subagent_call', id: `csc_${randomId(24)}`, agent_id: id, content: instructions, model: null, reasoning_effort: null });
    busy.add(id);
    try {
      const { answer, sub } = await inSlot(t, caller, row, async () => {
        const created = await tx(row.tenant_id, (q) => insertSubagent(q, { id, tenant_id: row.tenant_id, session_id: row.id, parent_agent_id: caller.agentId, name, instructions }));
        void deps.store.emit(row.tenant_id, row.id, subagentEvent('created', created));
        return created;
      }, task, signal);
      done(answer, sub);
      return answer.isError ? answer : { text: JSON.stringify({ subagent_id: id, output: answer.text }), isError: false };
    } finally {
      busy.delete(id);
    }
  }

  async function message(t: LiveTurn, caller: CallSite, row: SessionRow, args: Record<string, unknown>, signal: AbortSignal): Promise<Answer> {
    const id = typeof args.subagent_id === 'string' ? args.subagent_id : '';
    const text = typeof args.message === 'string' ? args.message.trim() : '';
    if (!text) return fail(`${MESSAGE_SUBAGENT}: 'message' must be a non-empty string`);
    const found = id ? await tx(row.tenant_id, (q) => getSubagent(q, row.id, id)) : undefined;
    if (!found) return fail(`${MESSAGE_SUBAGENT}: no subagent '${id}' in this session`);
    if (busy.has(id)) return fail(`${MESSAGE_SUBAGENT}: subagent '${id}' is still working; wait for its answer`);
    const content = [{ type: 'output_text', text }];
    const done = announce(t, caller, { type: 'send_subagent_input_call', id: `ssi_${randomId(24)}`, sender_agent_id: caller.agentId, recipient_agent_id: id, content });
    busy.add(id);
    try {
      const { answer, sub } = await inSlot(t, caller, row, async () => {
        const reopened = await tx(row.tenant_id, (q) => setSubagentStatus(q, id, 'active'));
        void deps.store.emit(row.tenant_id, row.id, subagentEvent('active', reopened));
        return reopened;
      }, text, signal);
      done(answer, sub);
      return answer.isError ? answer : { text: JSON.stringify({ subagent_id: id, output: answer.text }), isError: false };
    } finally {
      busy.delete(id);
    }
  }

  return {
    async call(tenantId, sessionId, runId, name, args, signal) {
      const found = deps.engine.callSite(tenantId, sessionId, runId);
      if (!found) return fail('this call does not belong to a live turn of the session');
      const row = await tx(tenantId, (q) => getSessionRow(q, sessionId));
      if (!row?.agent.multi_agent.enabled) return fail(`unknown function ${name}`);
      if (found.site.depth >= MAX_SUBAGENT_DEPTH) return fail(`subagents at depth ${found.site.depth} cannot start subagents of their own (at most ${MAX_SUBAGENT_DEPTH} levels)`);
      if (name === SPAWN_SUBAGENT) return spawn(found.turn, found.site, row, args, signal);
      if (name === MESSAGE_SUBAGENT) return message(found.turn, found.site, row, args, signal);
      return fail(`unknown function ${name}`);
    },

    async recover() {
      const turns = await withSystem(deps.db, (q) => unfinishedSubagentTurns(q));
      for (const r of turns) {
        try {
          // a turn whose driver still holds its lease is driven there
          if (r.owner_id && r.owner_id !== deps.conductor.runs.ownerId && (await deps.conductor.runs.ownerAlive(r.owner_id))) continue;
          const error: SessionTurnError = { code: 'internal_error', message: 'the turn was interrupted: the conductor driving it stopped' };
          const turn = await tx(r.tenant_id, (q) => updateTurn(q, r.id, { status: 'failed', error, completed: true }));
          await deps.store.emit(r.tenant_id, r.session_id, { type: 'agent.session.turn.failed', session_id: r.session_id, turn_id: r.id, turn, usage: null });
          const sub = await tx(r.tenant_id, (q) => getSubagent(q, r.session_id, r.subagent_id!));
          if (sub?.status !== 'active') continue;
          const closed = await tx(r.tenant_id, (q) => setSubagentStatus(q, sub.id, 'closed'));
          await deps.store.emit(r.tenant_id, r.session_id, subagentEvent('closed', closed));
        } catch (err) {
          deps.log.warn('recovering a subagent turn failed', { sessionId: r.session_id, turnId: r.id, error: String(err) });
        }
      }
    },

    settled(timeoutMs) {
      return idle.settled(running === 0, timeoutMs);
    },

    async forget(tenantId, sessionId) {
      const runnerSessions = await tx(tenantId, (q) => subagentRunnerSessions(q, sessionId));
      for (const id of runnerSessions) {
        await deps.conductor.sessions.shutdown(tenantId, id).catch((err) => deps.log.warn('ending a subagent runner session failed', { sessionId, runnerSessionId: id, error: String(err) }));
      }
    },
  };
}
