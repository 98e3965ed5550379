import { setTimeout as delay } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withSystem, withTenant } from '../../../db/index.ts';
import type { RunEvent } from '../../../contracts/run-event.ts';
import type { ConductorServices } from '../../conductor/index.ts';
import { AppError, describeError, isAppError, notFound, undefinedIfNotFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/log.ts';
import type { EventStore } from '../events/event-store.ts';
import type { ModelResolver } from '../models/model-ref.ts';
import type { SecretBox } from '../secret-box.ts';
import type { InputEvent, InputMessage } from '../sessions/session.schema.ts';
import { getSessionRow, insertTurn, sessionsWithActiveTurns, turnDriver, updateTurn, type SessionRow } from '../sessions/sessions.repo.ts';
import type { SessionEventBody, SessionTurnError } from '../wire.ts';
import { announceCall, answerCall } from './function-calls.ts';
import { approvalSeen as seeApproval, dropApprovals, type ApprovalSite } from './tool-approvals.ts';
import { agentMcpUrls, endpointToolNames, endUserOf, openSecrets, promptOf, runMcpServers, sessionProfile, withSettings } from './launch.ts';
import { addUsage } from './translate.ts';
import { createTurnIo, newLiveTurn, rootSite } from './turn-io.ts';
import { answerText, createLocks, environmentExtras, turnError, type CallSite, type LiveTurn, type ToolAnswer } from './turn-state.ts';
import { gateTurn } from './turn-gate.ts';
import type { EnvironmentTurnHooks, Prepared } from '../environments/environment-turns.ts';
import { createTurnInbox, DrivenElsewhere, type Signals } from './turn-inbox.ts';
import { mcpBearers } from './mcp-auth.ts';
import { idleWaiters } from '../../../shared/idle.ts';

/**
 * The turn engine of agent sessions: a turn is one run on the session's runner session, or several when messages
 * join it while it runs (they are queued into the turn and become its next run, so the model sees them in the same
 * conversation before the turn ends). It admits input events, follows the run and translates its events, pauses on
 * client-executed function calls (announced by the function-tool endpoint) and ends every turn with its terminal
 * event followed by `agent.session.idle`. Every change to a session's turn goes through one per-session lock.
 */
export interface TurnEngine {
  /** Applies input events in order (spec §3.3); 4xx errors leave the session as it was. */
  admit(tenantId: string, sessionId: string, events: InputEvent[]): Promise<void>;
  /** Called by the function-tool endpoint when the model calls a function tool: announces it and waits for the answer. */
  callFunction(tenantId: string, sessionId: string, runId: string, name: string, args: unknown, signal: AbortSignal): Promise<{ text: string; isError: boolean }>;
  /**
   * The session's live turn and the place `runId`'s calls are announced: the turn itself when it is the turn's run in
   * flight, else the turn of one of its subagents whose run it is (subagent tools act there).
   */
  callSite(tenantId: string, sessionId: string, runId: string): { turn: LiveTurn; site: CallSite } | undefined;
  /**
   * Answers the function calls turn `turnId` (a subagent's that ended) still waits on as failed, and forgets its
   * approvals still pending; they end with it.
   */
  endCalls(tenantId: string, sessionId: string, turnId: string): Promise<void>;
  /** A subagent's run showed `approval_required` or `approval_decided`: listed in the session's `required_actions`. */
  approvalSeen(tenantId: string, sessionId: string, runId: string, ev: RunEvent, where: ApprovalSite): Promise<void>;
  /** Cancels the live turn of a session that is being deleted, without announcing anything more. */
  forget(sessionId: string): Promise<void>;
  /** Ends turns left behind by a conductor that stopped (at boot, for every tenant; and when such a session is read). */
  recover(row?: SessionRow): Promise<void>;
  /** Resolves once no turn is live (their runs were interrupted by the conductor's drain), or after `timeoutMs`. */
  settled(timeoutMs: number): Promise<void>;
  /** Starts listening for input handed over by other replicas (when `signals` is given). */
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface EngineDeps {
  db: Kysely<DB>;
  conductor: ConductorServices;
  store: EventStore;
  models: ModelResolver;
  box: SecretBox;
  /** Base URL at which workers reach this conductor (the function-tool endpoint). */
  selfUrl: string;
  log: Logger;
  /** How often a quiet run's row is re-read while following it (default 30 s). */
  followKeepAliveMs?: number;
  /** After a turn's last run, before its terminal event (a sandboxed session publishes its artifacts here). */
  onTurnEnd?: (tenantId: string, sessionId: string, turnId: string) => Promise<void>;
  /** Sets a hosted environment up before a turn's first run, and tells a lost sandbox (environments/setup.ts). */
  environments?: EnvironmentTurnHooks;
  /** LISTEN/NOTIFY of the database: input for a turn another replica drives is handed to it (else refused 409). */
  signals?: Signals;
  /** How long a client-executed function call waits for its `tool_result` (SVC_AGENT_TURN_DEADLINE_MS, default 1 h). */
  turnDeadlineMs?: number;
}

export const DEFAULT_TURN_DEADLINE_MS = 3_600_000;

export const unknownPendingCall = (callId: string) => new AppError(400, `Unknown pending tool call: ${callId}`, { code: 'invalid_request_error' });

export function createTurnEngine(deps: EngineDeps): TurnEngine {
  const live = new Map<string, LiveTurn>();
  const locked = createLocks();
  const idle = idleWaiters();
  const io = createTurnIo(deps);
  const tx = <T>(tenantId: string, fn: Parameters<typeof withTenant<T>>[2]) => withTenant(deps.db, tenantId, fn);
  const turnDeadlineMs = deps.turnDeadlineMs ?? DEFAULT_TURN_DEADLINE_MS;

  async function start(row: SessionRow, messages: InputMessage[]): Promise<void> {
    const turnId = prefixedId('turn', 24);
    const t = newLiveTurn(row, turnId, endpointToolNames(row.agent));
    const turn = await tx(t.tenantId, (q) => insertTurn(q, { id: turnId, tenantId: t.tenantId, sessionId: t.sessionId, agentId: t.agentId, ownerId: deps.conductor.runs.ownerId }));
    live.set(t.sessionId, t);
    const base = { session_id: t.sessionId, turn_id: turnId };
    io.emit(t, [{ type: 'agent.session.turn.created', ...base, turn }]);
    const running = await io.patchSession(t.tenantId, t.sessionId, { status: 'in_progress', active_turn_id: turnId, error: null, required_actions: [] });
    io.emit(t, [io.snapshot('agent.session.in_progress', running!)]);
    const started = await tx(t.tenantId, (q) => updateTurn(q, turnId, { status: 'in_progress', started: true }));
    io.emit(t, [{ type: 'agent.session.turn.in_progress', ...base, turn: started }, ...io.userItems(t, messages)]);
    if (row.environment.type === 'none' || !deps.environments) return launch(t, row, messages);
    void prepareThenLaunch(t, row, messages, deps.environments);
  }

  /**
   * A hosted environment is set up (once; setup commands may take minutes) outside the session's lock, so input and
   * cancels are admitted meanwhile; the first run starts after it, unless the turn ended in between.
   */
  async function prepareThenLaunch(t: LiveTurn, row: SessionRow, messages: InputMessage[], environments: EnvironmentTurnHooks): Promise<void> {
    const emit = (bodies: SessionEventBody[]) => void (t.stop.signal.aborted || io.emit(t, bodies));
    const env = await environments.prepare(t, row.environment, emit).catch((err): Prepared => ({ error: { code: 'sandbox_error', message: describeError(err) } }));
    await locked(t.sessionId, async () => {
      if (live.get(t.sessionId) !== t || t.cancelling) return;
      // an environment that cannot be set up fails the turn, and the session with it (`fatal`): it can no longer run
      if ('error' in env) return finish(t, 'failed', turnError(env.error.message, env.error.code), env.fatal === true);
      t.env = env.env;
      t.environment = env.environment;
      t.skills = env.skills;
      await launch(t, row, messages);
    }).catch((err) => deps.log.error('starting a turn failed', { sessionId: t.sessionId, error: String(err) }));
  }

  /** Starts the next run of a turn; a run that cannot start fails the turn. */
  async function launch(t: LiveTurn, row: SessionRow, messages: InputMessage[]): Promise<void> {
    const runId = prefixedId('run', 24);
    try {
      const model = withSettings(await deps.models.resolve(t.tenantId, row.agent.model), row.agent);
      const secrets = openSecrets(deps.box, t.tenantId, t.sessionId, row.secrets);
      const bearers = await mcpBearers({ db: deps.db, box: deps.box, tenantFetch: deps.conductor.tenantFetch }, t.tenantId, row);
      // the runner's call waits a minute longer than the deadline, so it ends with the deadline's answer, not a timeout
      const mcpServers = runMcpServers({ selfUrl: deps.selfUrl, sessionId: t.sessionId, agent: row.agent, secrets, bearers, callTimeoutMs: turnDeadlineMs + 60_000, environment: t.environment });
      const profile = sessionProfile(row.profile_name, row.agent, row.environment, model.model);
      const body = { id: runId, profile: row.profile_name, sessionId: t.sessionId, prompt: promptOf(messages), ...endUserOf(row.metadata) };
      const keySource = deps.models.parse(row.agent.model).kind === 'byok' ? 'tenant' : 'platform';
      await deps.conductor.runs.create(t.tenantId, body, { profile, extras: { model, mcpServers, ...environmentExtras(t) }, keySource, tenantMcp: agentMcpUrls(row.agent) });
    } catch (err) {
      await finish(t, 'failed', turnError(describeError(err)));
      return;
    }
    t.runId = runId;
    await tx(t.tenantId, (q) => updateTurn(q, t.turnId, { runId }));
    void follow(t, runId);
  }

  /**
   * Follows a run of the turn to its terminal event. The run goes on whatever happens to our reading of it: a failed
   * read (the database) is resumed from the last event seen while the turn is live here, and only a run that is
   * gone ends the turn from here.
   */
  async function follow(t: LiveTurn, runId: string): Promise<void> {
    const keepAliveMs = deps.followKeepAliveMs ?? 30_000;
    let terminal: RunEvent | undefined;
    let after = 0;
    while (!terminal && !t.stop.signal.aborted) {
      try {
        const events = await deps.conductor.runs.follow(t.tenantId, runId, after, { keepAliveMs, signal: t.stop.signal });
        for await (const e of events) {
          if (!e) continue;
          after = e.seq;
          io.emit(t, t.translator.handle(e.event));
          if (e.event.type === 'approval_required' || e.event.type === 'approval_decided') {
            const ev = e.event;
            await locked(t.sessionId, () => approvalSeen(t, runId, ev, { turnId: t.turnId })).catch((err) => deps.log.warn('showing an approval failed', { sessionId: t.sessionId, error: String(err) }));
          }
          if (e.event.type === 'result' || e.event.type === 'error') {
            terminal = e.event;
            break;
          }
        }
        break; // ended without a terminal event: the turn stopped following (cancelled, session deleted, closing)
      } catch (err) {
        if (isAppError(err) && err.status === 404) {
          terminal = { type: 'error', message: `following the run failed: ${describeError(err)}`, ts: new Date().toISOString() };
          break;
        }
        deps.log.warn('following a run failed; resuming', { sessionId: t.sessionId, runId, error: describeError(err) });
        await delay(Math.min(keepAliveMs, 1000), undefined, { signal: t.stop.signal }).catch(() => {});
      }
    }
    if (!terminal || live.get(t.sessionId) !== t) return; // the turn ended another way (session deleted)
    const end = terminal;
    await locked(t.sessionId, () => afterRun(t, end)).catch((err) => deps.log.error('ending a turn failed', { sessionId: t.sessionId, error: String(err) }));
  }

  /** A call of the turn's run, or of one of its subagents' runs, to an `always_ask` tool (tool-approvals.ts). */
  async function approvalSeen(t: LiveTurn, runId: string, ev: RunEvent, where: ApprovalSite): Promise<void> {
    if (live.get(t.sessionId) !== t || t.cancelling) return;
    await seeApproval(deps.db, io, t, runId, ev, where);
  }

  async function afterRun(t: LiveTurn, terminal: RunEvent): Promise<void> {
    if (live.get(t.sessionId) !== t) return;
    t.runId = undefined;
    if (t.cancelling) return finish(t, 'cancelled', null);
    if (terminal.type === 'error') return finish(t, 'failed', turnError(terminal.message ?? 'the run failed'));
    if (t.queued.length === 0) return finish(t, 'completed', null);
    const row = await tx(t.tenantId, (q) => getSessionRow(q, t.sessionId));
    if (row) await launch(t, row, t.queued.splice(0));
  }

  /** The end of a turn: its terminal event, then `agent.session.idle` (or `.failed`: `sessionFails`), in that order (spec §8.4). */
  async function finish(t: LiveTurn, status: 'completed' | 'failed' | 'cancelled', error: SessionTurnError | null, sessionFails = false): Promise<void> {
    io.emit(t, t.translator.finish(status));
    for (const call of t.pending.values()) call.answer({ success: false, error: `the turn was ${status === 'cancelled' ? 'cancelled' : 'ended'}` });
    t.pending.clear();
    t.approvals.clear(); // what the run left pending was cancelled with it
    await t.itemWrites;
    if (deps.onTurnEnd) await deps.onTurnEnd(t.tenantId, t.sessionId, t.turnId).catch((err) => deps.log.warn('after-turn work failed', { sessionId: t.sessionId, error: String(err) }));
    const usage = t.translator.usage();
    const turn = await tx(t.tenantId, (q) => updateTurn(q, t.turnId, { status, error, usage, completed: true }));
    const before = await tx(t.tenantId, (q) => getSessionRow(q, t.sessionId));
    if (error && !sessionFails && before) await deps.environments?.turnFailed(t, before.environment, error.code, (bodies) => io.emit(t, bodies)).catch(() => {});
    const end = sessionFails ? { status: 'failed' as const, error: error?.message ?? 'the session failed' } : { status: 'idle' as const };
    const row = await io.patchSession(t.tenantId, t.sessionId, { ...end, active_turn_id: null, required_actions: [], usage: addUsage(before?.usage ?? null, usage) });
    live.delete(t.sessionId);
    t.stop.abort();
    if (live.size === 0) idle.wake();
    io.emit(t, [{ type: `agent.session.turn.${status}`, session_id: t.sessionId, turn_id: t.turnId, turn, usage }]);
    if (row) io.emit(t, [io.snapshot(sessionFails ? 'agent.session.failed' : 'agent.session.idle', row)]);
    if (row && !sessionFails && t.afterCancel.length) await start(row, t.afterCancel);
  }

  async function cancel(t: LiveTurn): Promise<void> {
    if (t.cancelling) return;
    t.cancelling = true;
    t.queued = [];
    for (const call of t.pending.values()) call.answer({ success: false, error: 'the turn was cancelled' });
    t.pending.clear();
    if (t.runId) await deps.conductor.runs.cancel(t.tenantId, t.runId);
    else await finish(t, 'cancelled', null);
  }

  /**
   * A turn whose driver is gone (this conductor restarted, or another one stopped) is ended `failed` once its run is
   * no longer running, with the usual terminal event and `agent.session.idle`. A turn owned by another live replica,
   * or whose run still runs, is driven elsewhere: `strict` callers (input) are refused, readers see it as it is. A
   * failure to tell (the database) is thrown, never taken for "abandoned".
   */
  async function recoverStale(row: SessionRow, strict: boolean): Promise<SessionRow> {
    if (!row.active_turn_id || live.has(row.id)) return row;
    const driver = await tx(row.tenant_id, (q) => turnDriver(q, row.active_turn_id!));
    // between its runs a turn has no running run: only its owner's lapsed lease says it was abandoned
    const owner = driver?.ownerId;
    let drivenElsewhere = Boolean(owner && owner !== deps.conductor.runs.ownerId && (await deps.conductor.runs.ownerAlive(owner)));
    if (!drivenElsewhere) {
      const lastRun = driver?.runIds.at(-1);
      const status = lastRun ? (await deps.conductor.runs.get(row.tenant_id, lastRun).catch(undefinedIfNotFound))?.status : undefined;
      drivenElsewhere = status === 'running' || status === 'waiting';
    }
    if (drivenElsewhere) {
      if (!strict) return row;
      if (deps.signals) throw new DrivenElsewhere();
      throw new AppError(409, "the session's turn is driven by another conductor; retry there", { headers: { 'x-should-retry': 'false' } });
    }
    const t = newLiveTurn(row, row.active_turn_id, new Set());
    live.set(row.id, t);
    await finish(t, 'failed', { code: 'internal_error', message: 'the turn was interrupted: the conductor driving it stopped' });
    return (await tx(row.tenant_id, (q) => getSessionRow(q, row.id))) ?? row;
  }

  const inbox = deps.signals && createTurnInbox({ db: deps.db, signals: deps.signals, ownerId: deps.conductor.runs.ownerId, log: deps.log, isLive: (id) => live.has(id), ownerAlive: (o) => deps.conductor.runs.ownerAlive(o), admitHere, callHere });

  function admitHere(tenantId: string, sessionId: string, events: InputEvent[]): Promise<void> {
      return locked(sessionId, async () => {
        let row = await tx(tenantId, (q) => getSessionRow(q, sessionId));
        if (!row) throw notFound(`No session found with id '${sessionId}'.`);
        row = await recoverStale(row, true);
        // Tool results are checked before anything is applied, so a bad batch changes nothing.
        for (const ev of events) {
          if (ev.type === 'agent.session.input.tool_approval') {
            if (!live.get(sessionId)?.approvals.has(ev.id)) throw new AppError(400, `Unknown pending tool approval: ${ev.id}`, { code: 'invalid_request_error' });
            continue;
          }
          if (ev.type !== 'agent.session.input.tool_result') continue;
          const t = live.get(sessionId);
          // the call of the session's own turn or of one of its subagents' turns: `turn_id` says which
          if (!t || t.pending.get(ev.call_id)?.site.turnId !== ev.turn_id) throw unknownPendingCall(ev.call_id);
        }
        for (const ev of events) {
          const t = live.get(sessionId);
          if (ev.type === 'agent.session.input.message') {
            if (!t) {
              if (row.status === 'failed') throw new AppError(400, `the session failed and can no longer run: ${row.error ?? 'unknown error'}; create a new session`, { code: 'invalid_request_error' });
              // a refused turn (402) answers the request and leaves the session as it was
              await gateTurn(deps, tenantId, { model: row.agent.model, profileName: row.profile_name, sessionId });
              await start(row, ev.input);
            } else if (t.cancelling) t.afterCancel.push(...ev.input);
            else {
              t.queued.push(...ev.input);
              io.emit(t, io.userItems(t, ev.input));
            }
          } else if (ev.type === 'agent.session.input.cancel') {
            if (t) await cancel(t);
          } else if (ev.type === 'agent.session.input.tool_approval') {
            const runId = t?.approvals.get(ev.id)?.runId;
            // the approval may have been decided elsewhere meanwhile (its event not read yet): 409 as on /api
            if (runId) await deps.conductor.approvals.decide(tenantId, `agent-session:${sessionId}`, runId, ev.id, { decision: ev.approve ? 'approve' : 'deny', ...(ev.message ? { message: ev.message } : {}) });
          } else if (t) await answerCall(deps.db, io, t, ev);
        }
      });
  }

  function siteOf(tenantId: string, sessionId: string, runId: string): { turn: LiveTurn; site: CallSite } | undefined {
    const t = live.get(sessionId);
    if (!t || t.cancelling || t.tenantId !== tenantId) return undefined;
    const site = t.runId === runId ? rootSite(t, io) : t.subRuns.get(runId);
    return site && { turn: t, site };
  }

  async function callHere(tenantId: string, sessionId: string, runId: string, name: string, args: unknown, signal: AbortSignal): Promise<{ text: string; isError: boolean }> {
    const registered = await locked(sessionId, async () => {
      const found = siteOf(tenantId, sessionId, runId);
      return found && announceCall(deps.db, io, found.turn, found.site, name, args);
    });
    if (!registered) return { text: 'this function call does not belong to a live turn of the session', isError: true };
    const abandoned = new Promise<ToolAnswer>((resolve) => signal.addEventListener('abort', () => resolve({ success: false, error: 'the call was abandoned' }), { once: true }));
    // past the turn's deadline the call is answered as failed (recorded like a client's failed tool_result)
    const timer = setTimeout(() => {
      const error = `no tool_result arrived within the turn's deadline (${Math.round(turnDeadlineMs / 1000)} s)`;
      void locked(sessionId, async () => {
        const t = live.get(sessionId);
        const call = t?.pending.get(registered.callId);
        if (t && call) await answerCall(deps.db, io, t, { type: 'agent.session.input.tool_result', turn_id: call.site.turnId, call_id: registered.callId, success: false, error });
      }).catch((err) => deps.log.warn('ending an unanswered function call failed', { sessionId, error: String(err) }));
    }, turnDeadlineMs);
    try {
      return answerText(await Promise.race([registered.answered, abandoned]));
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async admit(tenantId, sessionId, events) {
      try {
        await admitHere(tenantId, sessionId, events);
      } catch (err) {
        // the turn is driven by another replica: hand the events to it through PostgreSQL
        if (err instanceof DrivenElsewhere && inbox) return inbox.handOff(tenantId, sessionId, events);
        throw err;
      }
    },

    async callFunction(tenantId, sessionId, runId, name, args, signal) {
      // the worker's call reached a replica that does not drive the turn (a Service in front of the replicas)
      if (!live.has(sessionId) && inbox) return inbox.handOffCall(tenantId, sessionId, { runId, name, args }, signal);
      return callHere(tenantId, sessionId, runId, name, args, signal);
    },

    callSite: siteOf,

    endCalls(tenantId, sessionId, turnId) {
      return locked(sessionId, async () => {
        const t = live.get(sessionId);
        if (!t || t.tenantId !== tenantId) return;
        for (const call of [...t.pending.values()].filter((c) => c.site.turnId === turnId)) {
          await answerCall(deps.db, io, t, { type: 'agent.session.input.tool_result', turn_id: turnId, call_id: call.callId, success: false, error: 'the turn that made the call ended' });
        }
        await dropApprovals(deps.db, io, t, turnId);
      });
    },

    approvalSeen(tenantId, sessionId, runId, ev, where) {
      return locked(sessionId, async () => {
        const t = live.get(sessionId);
        if (t && t.tenantId === tenantId) await approvalSeen(t, runId, ev, where);
      });
    },

    forget(sessionId) {
      return locked(sessionId, async () => {
        const t = live.get(sessionId);
        if (!t) return;
        live.delete(sessionId);
        t.stop.abort();
        for (const call of t.pending.values()) call.answer({ success: false, error: 'the session was deleted' });
        if (t.runId) await deps.conductor.runs.cancel(t.tenantId, t.runId).catch(() => {});
      });
    },

    async recover(row) {
      if (row && live.has(row.id)) return;
      const rows = row
        ? [row]
        : await withSystem(deps.db, (q) => sessionsWithActiveTurns(q));
      for (const r of rows) {
        await locked(r.id, async () => {
          const fresh = await tx(r.tenant_id, (q) => getSessionRow(q, r.id));
          if (fresh) await recoverStale(fresh, false);
        }).catch((err) => deps.log.warn('recovering a session turn failed', { sessionId: r.id, error: String(err) }));
      }
    },

    settled(timeoutMs) {
      return idle.settled(live.size === 0, timeoutMs);
    },

    async start() {
      await inbox?.start();
    },

    async close() {
      await inbox?.stop();
      for (const t of live.values()) t.stop.abort();
    },
  };
}
