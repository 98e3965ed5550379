import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { randomId } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/log.ts';
import type { EventStore } from '../events/event-store.ts';
import type { InputMessage } from '../sessions/session.schema.ts';
import { createTurnTranslator } from './translate.ts';
import { saveItem, toSession, updateSession, type SessionPatch, type SessionRow } from '../sessions/sessions.repo.ts';
import type { SessionEventBody, SessionItem } from '../wire.ts';
import type { CallSite, LiveTurn } from './turn-state.ts';

/**
 * How the turn engine writes: session events in order (items stored as they are added and done), session snapshots,
 * and session row updates that also mark the session active.
 */
export interface TurnIo {
  emit(t: LiveTurn, bodies: SessionEventBody[]): void;
  snapshot(type: string, row: SessionRow): SessionEventBody;
  patchSession(tenantId: string, sessionId: string, p: SessionPatch): Promise<SessionRow | undefined>;
  userItems(t: LiveTurn, messages: InputMessage[]): SessionEventBody[];
}

export function createTurnIo(deps: { db: Kysely<DB>; store: EventStore; log: Logger }): TurnIo {
  return {
    emit(t, bodies) {
      for (const body of bodies) {
        void deps.store.emit(t.tenantId, t.sessionId, body);
        if (body.type === 'agent.session.turn.item.added' || body.type === 'agent.session.turn.item.done') {
          const item = body.item as SessionItem;
          t.itemWrites = t.itemWrites
            .then(() => withTenant(deps.db, t.tenantId, (tx) => saveItem(tx, t.tenantId, t.sessionId, item)))
            .catch((err) => deps.log.warn('saving a session item failed', { sessionId: t.sessionId, error: String(err) }));
        }
      }
    },
    snapshot: (type, row) => ({ type, session: toSession(row) }),
    patchSession: (tenantId, sessionId, p) => withTenant(deps.db, tenantId, (tx) => updateSession(tx, sessionId, { ...p, touch: true })),
    userItems: (t, messages) =>
      messages.map((m) => ({
        type: 'agent.session.turn.item.added',
        session_id: t.sessionId,
        turn_id: t.turnId,
        item: { type: 'message', id: `msg_${randomId(24)}`, role: 'user', content: m.content, phase: null, status: 'completed', turn_id: t.turnId },
        output_index: null,
      })),
  };
}

/** A fresh live turn; `functionNames` are the tools announced by the function-tool endpoint, not the translator. */
export function newLiveTurn(row: Pick<SessionRow, 'tenant_id' | 'id' | 'agent'>, turnId: string, functionNames: ReadonlySet<string>): LiveTurn {
  return {
    tenantId: row.tenant_id,
    sessionId: row.id,
    turnId,
    agentId: row.agent.id,
    runId: undefined,
    subRuns: new Map(),
    queued: [],
    afterCancel: [],
    pending: new Map(),
    approvals: new Map(),
    cancelling: false,
    stop: new AbortController(),
    itemWrites: Promise.resolve(),
    translator: createTurnTranslator({ sessionId: row.id, turnId, isFunctionTool: (n) => functionNames.has(n) }),
  };
}

/** The session's own turn as the place its runs' calls are announced. */
export function rootSite(t: LiveTurn, io: TurnIo): CallSite {
  return { turnId: t.turnId, agentId: t.agentId, depth: 0, emit: (bodies) => io.emit(t, bodies), translator: t.translator };
}
