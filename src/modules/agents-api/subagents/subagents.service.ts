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
import { getSessionRow, insertTurn, saveItem, updateSession, updateTurn, type SessionRow } from '../sessions/sessions.repo.ts';
import type { TurnEngine } from '../turns/engine.ts';
import { agentMcpUrls, endUserOf, MESSAGE_SUBAGENT, openSecrets, runMcpServers, sessionProfile, SPAWN_SUBAGENT, withSettings } from '../turns/launch.ts';
import { addUsage, createTurnTranslator } from '../turns/translate.ts';
import { createTurnIo } from '../turns/turn-io.ts';
import { createLocks, turnError, type LiveTurn } from '../turns/turn-state.ts';
import type { SessionEventBody, SessionItem, SessionTurnError } from '../wire.ts';
import { getSubagent, insertSubagent, setSubagentStatus, subagentRunnerSessions, toSubagent, unfinishedSubagentTurns, type SubagentRow } from './subagents.repo.ts';
import { idleWaiters } from '../../../shared/idle.ts';

/**
 * Subagents (seed 001 "Subagent", `multi_agent`): the model of a session whose agent has `multi_agent.enabled` gets two
 * tools on the session's function-tool endpoint. `spawn_subagent {task, name?}` opens a subagent (`active`), runs
 * one turn of it on a runner session of its own (its own conversation, the session's model and instructions, the
 * agent's MCP servers, no function tools, no further subagents) with the task as its prompt, closes it and answers
 * the call with the subagent's final text, so the parent turn goes on. `send_subagent_input {subagent_id, message}`
 * reopens a closed subagent (`agent.session.subagent.active`) for one more turn on the same conversation. At most
 * `max_concurrent_subagents` subagents of a session run at once; more calls queue (the Subagent object exists once
 * it runs). Everything is announced on the parent session's event stream: the subagent events, the subagent's turns
 * (`subagent_id` set) and items (stored apart from the session's own items), and in the parent turn a
 * `create_subagent_call` / `send_subagent_input_call` item and an `agent_message` with the answer.
 */
export interface Subagents {
  /** A call of a subagent tool by the run `runId` of the session's live turn. */
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
}

type Answer = { text: string; isError: boolean };

const fail = (text: string): Answer => ({ text, isError: true });

export function createSubagents(deps: SubagentsDeps): Subagents {
  const io = createTurnIo(deps);
  const tx = <T>(tenantId: string, fn: Parameters<typeof withTenant<T>>[2]) => withTenant(deps.db, tenantId, fn);
  const slots = new Map<string, { running: number; queue: Array<() => void> }>();
  /** Subagents with a turn in flight (a second message to one of them is refused, not interleaved). */
  const busy = new Set<string>();
  let running = 0;
  /** Serialises the subagents' additions to their session's usage. */
  const usageLock = createLocks();
  const idle = idleWaiters();

  /** A place among the session's running subagents; waits in line when `max` run already. */
  function acquire(sessionId: string, max: number, signal: AbortSignal): Promise<() => void> {
    let s = slots.get(sessionId);
    if (!s) slots.set(sessionId, (s = { running: 0, queue: [] }));
    const slot = s;
    const release = () => {
      slot.running--;
      const next = slot.queue.shift();
      if (next) next();
      else if (slot.running === 0 && slots.get(sessionId) === slot) slots.delete(sessionId);
    };
    if (slot.running < max) {
      slot.running++;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        signal.removeEventListener('abort', abandon);
        slot.running++;
        resolve(release);
      };
      const abandon = () => {
        const i = slot.queue.indexOf(go);
        if (i >= 0) slot.queue.splice(i, 1);
        reject(new Error('the call was abandoned while waiting for a subagent slot'));
      };
      slot.queue.push(go);
      signal.addEventListener('abort', abandon, { once: true });
    });
  }

  /** Emits a subagent's turn events; its items are stored as that subagent's, in order. */
  function emitter(tenantId: string, sessionId: string, subagentId: string) {
    let writes = Promise.resolve();
    return {
      emit(bodies: SessionEventBody[]) {
        for (const body of bodies) {
          void deps.store.emit(tenantId, sessionId, body);
          if (body.type !== 'agent.session.turn.item.added' && body.type !== 'agent.session.turn.item.done') continue;
          const item = body.item as SessionItem;
          writes = writes
            .then(() => tx(tenantId, (q) => saveItem(q, tenantId, sessionId, item, subagentId)))
            .catch((err) => deps.log.warn('saving a subagent item failed', { sessionId, subagentId, error: String(err) }));
        }
      },
      written: () => writes,
    };
  }

  const subagentEvent = (status: 'created' | 'active' | 'closed', row: SubagentRow): SessionEventBody => {
    const { session_id: _, ...subagent } = toSubagent(row); // the event's subagent carries no session_id (spec §5.2)
    return { type: `agent.session.subagent.${status}`, subagent };
  };

  /** One turn of a subagent: a run on its runner session, translated onto the parent session's stream. */
  async function runTurn(row: SessionRow, sub: SubagentRow, prompt: string, signal: AbortSignal, cancelled: () => boolean): Promise<Answer> {
    const tenantId = row.tenant_id;
    const sessionId = row.id;
    const turnId = prefixedId('turn', 24);
    const base = { session_id: sessionId, turn_id: turnId };
    const out = emitter(tenantId, sessionId, sub.id);
    const created = await tx(tenantId, (q) => insertTurn(q, { id: turnId, tenantId, sessionId, agentId: row.agent.id, ownerId: deps.conductor.runs.ownerId, subagentId: sub.id }));
    out.emit([{ type: 'agent.session.turn.created', ...base, turn: created }]);
    const started = await tx(tenantId, (q) => updateTurn(q, turnId, { status: 'in_progress', started: true }));
    const userItem = { type: 'message', id: `msg_${randomId(24)}`, role: 'user', content: [{ type: 'input_text', text: prompt }], phase: null, status: 'completed', turn_id: turnId };
    out.emit([
      { type: 'agent.session.turn.in_progress', ...base, turn: started },
      { type: 'agent.session.turn.item.added', ...base, item: userItem, output_index: null },
    ]);
    const translator = createTurnTranslator({ sessionId, turnId, isFunctionTool: () => false });
    let status: 'completed' | 'failed' | 'cancelled' = 'completed';
    let error: SessionTurnError | null = null;
    let text = '';
    const runId = prefixedId('run', 24);
    const cancelRun = () => void deps.conductor.runs.cancel(tenantId, runId).catch(() => {});
    try {
      const model = withSettings(await deps.models.resolve(tenantId, row.agent.model), row.agent);
      const runToken = await deps.conductor.runs.mintToken(tenantId, runId);
      // the subagent's own tools: the agent's MCP servers; function tools and subagents stay with the session's turn
      const agent = { ...row.agent, tools: row.agent.tools.filter((t) => t.type !== 'function'), multi_agent: { enabled: false, max_concurrent_subagents: null } };
      const mcpServers = runMcpServers({ selfUrl: deps.selfUrl, sessionId, runToken, agent, secrets: openSecrets(deps.box, tenantId, sessionId, row.secrets) });
      const profile = sessionProfile(row.profile_name, row.agent, row.environment, model.model);
      const keySource = deps.models.parse(row.agent.model).kind === 'byok' ? 'tenant' : 'platform';
      const body = { id: runId, profile: row.profile_name, prompt, ...endUserOf(row.metadata), ...(sub.runner_session_id ? { sessionId: sub.runner_session_id } : {}) };
      const placed = await deps.conductor.runs.create(tenantId, body, { profile, extras: { model, mcpServers }, keySource, tenantMcp: agentMcpUrls(agent) });
      if (placed.sessionId !== sub.runner_session_id) {
        sub.runner_session_id = placed.sessionId;
        await tx(tenantId, (q) => setSubagentStatus(q, sub.id, 'active', placed.sessionId));
      }
      await tx(tenantId, (q) => updateTurn(q, turnId, { runId }));
      signal.addEventListener('abort', cancelRun, { once: true });
      if (signal.aborted) cancelRun(); // abandoned while the run was being created
      const events = await deps.conductor.runs.follow(tenantId, runId, 0, { keepAliveMs: deps.keepAliveMs ?? 30_000, signal });
      let terminal = false;
      for await (const e of events) {
        if (!e) continue;
        const bodies = translator.handle(e.event);
        for (const b of bodies) if (b.type === 'agent.session.turn.output_text.done') text = String(b.text);
        out.emit(bodies);
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
    }
    if (status !== 'completed' && cancelled()) {
      status = 'cancelled'; // the parent turn was cancelled, and this one with it
      error = null;
    }
    out.emit(translator.finish(status));
    await out.written();
    const usage = translator.usage();
    const ended = await tx(tenantId, (q) => updateTurn(q, turnId, { status, error, usage, completed: true }));
    // the session's usage counts its subagents' turns too (added before the parent hears back, so before its turn ends)
    if (usage) {
      await usageLock(sessionId, async () => {
        const before = await tx(tenantId, (q) => getSessionRow(q, sessionId));
        if (before) await tx(tenantId, (q) => updateSession(q, sessionId, { usage: addUsage(before.usage, usage) }));
      });
    }
    out.emit([{ type: `agent.session.turn.${status}`, ...base, turn: ended, usage }]);
    if (status === 'completed') return { text, isError: false };
    return fail(status === 'cancelled' ? 'the subagent turn was cancelled' : `the subagent failed: ${error?.message ?? 'unknown error'}`);
  }

  /** The parent turn's item for a subagent call, added now; the function returned ends it (and adds the answer). */
  function announce(t: LiveTurn, item: { id: string; type: string; [key: string]: unknown }) {
    const full: SessionItem = { ...item, status: 'in_progress', turn_id: t.turnId };
    io.emit(t, t.translator.closeMessage());
    const outputIndex = t.translator.nextOutputIndex();
    const base = { session_id: t.sessionId, turn_id: t.turnId };
    io.emit(t, [{ type: 'agent.session.turn.item.added', ...base, item: full, output_index: outputIndex }]);
    return (answer: Answer, sub: SubagentRow | undefined) => {
      io.emit(t, [{ type: 'agent.session.turn.item.done', ...base, item: { ...full, status: answer.isError ? 'failed' : 'completed' }, output_index: outputIndex }]);
      if (sub && !answer.isError) {
        const message = { type: 'agent_message', id: `amsg_${randomId(24)}`, content: [{ type: 'output_text', text: answer.text }], sender_agent_id: sub.id, recipient_agent_id: t.agentId, turn_id: t.turnId };
        io.emit(t, [{ type: 'agent.session.turn.item.added', ...base, item: message, output_index: null }]);
      }
    };
  }

  /** Runs a subagent's turn in a slot: opens it (created, or active again), runs, closes it. */
  async function inSlot(t: LiveTurn, row: SessionRow, open: () => Promise<SubagentRow>, prompt: string, signal: AbortSignal): Promise<{ answer: Answer; sub?: SubagentRow }> {
    const max = row.agent.multi_agent.max_concurrent_subagents ?? 1;
    let release: () => void;
    try {
      release = await acquire(row.id, max, signal);
    } catch (err) {
      return { answer: fail(describeError(err)) };
    }
    running++;
    try {
      const sub = await open();
      const answer = await runTurn(row, sub, prompt, signal, () => t.cancelling);
      const closed = await tx(row.tenant_id, (q) => setSubagentStatus(q, sub.id, 'closed'));
      void deps.store.emit(row.tenant_id, row.id, subagentEvent('closed', closed));
      return { answer, sub: closed };
    } catch (err) {
      deps.log.warn('a subagent turn failed', { sessionId: row.id, error: describeError(err) });
      return { answer: fail(`the subagent failed: ${describeError(err)}`) };
    } finally {
      release();
      if (--running === 0) idle.wake();
    }
  }

  async function spawn(t: LiveTurn, row: SessionRow, args: Record<string, unknown>, signal: AbortSignal): Promise<Answer> {
    const task = typeof args.task === 'string' ? args.task.trim() : '';
    if (!task) return fail(`${SPAWN_SUBAGENT}: 'task' must be a non-empty string`);
    const name = typeof args.name === 'string' && args.name.trim() ? args.name.trim().slice(0, 64) : null;
    const id = prefixedId('subagent', 24);
    const instructions = [{ type: 'output_text' as const, text: task }];
    const done = announce(t, { type: 'create_subagent_call', id: `csc_${randomId(24)}`, agent_id: id, content: instructions, model: null, reasoning_effort: null });
    busy.add(id);
    try {
      const { answer, sub } = await inSlot(t, row, async () => {
        const created = await tx(row.tenant_id, (q) => insertSubagent(q, { id, tenant_id: row.tenant_id, session_id: row.id, parent_agent_id: row.agent.id, name, instructions }));
        void deps.store.emit(row.tenant_id, row.id, subagentEvent('created', created));
        return created;
      }, task, signal);
      done(answer, sub);
      return answer.isError ? answer : { text: JSON.stringify({ subagent_id: id, output: answer.text }), isError: false };
    } finally {
      busy.delete(id);
    }
  }

  async function message(t: LiveTurn, row: SessionRow, args: Record<string, unknown>, signal: AbortSignal): Promise<Answer> {
    const id = typeof args.subagent_id === 'string' ? args.subagent_id : '';
    const text = typeof args.message === 'string' ? args.message.trim() : '';
    if (!text) return fail(`${MESSAGE_SUBAGENT}: 'message' must be a non-empty string`);
    const found = id ? await tx(row.tenant_id, (q) => getSubagent(q, row.id, id)) : undefined;
    if (!found) return fail(`${MESSAGE_SUBAGENT}: no subagent '${id}' in this session`);
    if (busy.has(id)) return fail(`${MESSAGE_SUBAGENT}: subagent '${id}' is still working; wait for its answer`);
    const content = [{ type: 'output_text', text }];
    const done = announce(t, { type: 'send_subagent_input_call', id: `ssi_${randomId(24)}`, sender_agent_id: row.agent.id, recipient_agent_id: id, content });
    busy.add(id);
    try {
      const { answer, sub } = await inSlot(t, row, async () => {
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
      const t = deps.engine.liveTurn(tenantId, sessionId, runId);
      if (!t) return fail('this call does not belong to a live turn of the session');
      const row = await tx(tenantId, (q) => getSessionRow(q, sessionId));
      if (!row?.agent.multi_agent.enabled) return fail(`unknown function ${name}`);
      if (name === SPAWN_SUBAGENT) return spawn(t, row, args, signal);
      if (name === MESSAGE_SUBAGENT) return message(t, row, args, signal);
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
