import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { badRequest } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import type { SessionEvent, SessionEventBody } from '../wire.ts';
import { insertSessionEvents, reserveEventSeqs, sessionEventSeq, sessionEventsAfter } from './events.repo.ts';

/**
 * The durable event log of agent sessions. Events of one session are numbered by a per-session sequence
 * (`agent_sessions.event_seq`, taken in the same transaction as the insert, so replicas never collide), written in
 * call order in small batches, and published to in-process subscribers only after they are durable: whatever a
 * subscriber sees can be resumed from. `event_id` (`evt_<session key>_<seq>`) is the resume handle (`Last-Event-ID`).
 */
export interface StoredSessionEvent {
  seq: number;
  event: SessionEvent;
}

export type SessionListener = (e: StoredSessionEvent) => void;

export interface EventStore {
  /** Persists and then publishes; resolves with the stored event (undefined when the session is gone). Never rejects. */
  emit(tenantId: string, sessionId: string, body: SessionEventBody): Promise<SessionEvent | undefined>;
  subscribe(sessionId: string, listener: SessionListener): () => void;
  after(tenantId: string, sessionId: string, seq: number): Promise<StoredSessionEvent[]>;
  maxSeq(tenantId: string, sessionId: string): Promise<number>;
  /** Resolves once every event emitted so far for the session is durable and published. */
  flushed(sessionId: string): Promise<void>;
  forget(sessionId: string): void;
  /** Aborted when the store closes: every subscription ends (the server is going away). */
  readonly closing: AbortSignal;
  /**
   * Aborted once the database is gone for good (its reason names why): nothing is written or published any more, and
   * every subscription ends with an error naming the cause (no log remains to resume from).
   */
  readonly lost: AbortSignal;
  close(): Promise<void>;
}

const sessionKey = (sessionId: string) => sessionId.slice(sessionId.lastIndexOf('-') + 1).replace(/[^a-z0-9]/gi, '');

export function eventId(sessionId: string, seq: number): string {
  return `evt_${sessionKey(sessionId)}_${seq}`;
}

/** The sequence number a `Last-Event-ID` names; 400 when it is not an event id of this session. */
export function parseEventId(sessionId: string, id: string): number {
  const m = /^evt_([a-z0-9]+)_(\d{1,9})$/i.exec(id.trim());
  if (!m || m[1] !== sessionKey(sessionId)) throw badRequest(`Last-Event-ID: "${id}" is not an event id of session ${sessionId}`, 'invalid_event_cursor');
  return Number(m[2]);
}

interface Pending {
  body: SessionEventBody;
  resolve(e: SessionEvent | undefined): void;
}

export function createEventStore(deps: { db: Kysely<DB>; log: Logger; databaseLost?: AbortSignal }): EventStore {
  const writers = new Map<string, { tenantId: string; queue: Pending[]; done: Promise<void> }>();
  const listeners = new Map<string, Set<SessionListener>>();
  const closing = new AbortController();
  const lost = deps.databaseLost ?? new AbortController().signal;

  async function write(tenantId: string, sessionId: string, batch: Pending[]): Promise<StoredSessionEvent[] | undefined> {
    return withTenant(deps.db, tenantId, async (tx) => {
      const last = await reserveEventSeqs(tx, sessionId, batch.length);
      if (last === undefined) return undefined;
      const first = last - batch.length + 1;
      const stored = batch.map((p, i) => ({ seq: first + i, event: { event_id: eventId(sessionId, first + i), ...p.body } as SessionEvent }));
      await insertSessionEvents(tx, tenantId, sessionId, stored);
      return stored;
    });
  }

  async function drain(sessionId: string): Promise<void> {
    const w = writers.get(sessionId)!;
    while (w.queue.length) {
      const batch = w.queue.splice(0);
      let stored: StoredSessionEvent[] | undefined;
      try {
        // a database lost for good takes no more writes: the subscriptions end with the cause instead
        if (!lost.aborted) stored = await write(w.tenantId, sessionId, batch);
      } catch (err) {
        if (!lost.aborted) deps.log.error('writing session events failed', { sessionId, events: batch.length, error: String(err) });
      }
      batch.forEach((p, i) => {
        const s = stored?.[i];
        if (s) for (const fn of listeners.get(sessionId) ?? []) fn(s);
        p.resolve(s?.event);
      });
    }
    writers.delete(sessionId);
  }

  return {
    emit(tenantId, sessionId, body) {
      return new Promise((resolve) => {
        let w = writers.get(sessionId);
        const pending = { body, resolve };
        if (w) {
          w.queue.push(pending);
          return;
        }
        w = { tenantId, queue: [pending], done: Promise.resolve() };
        writers.set(sessionId, w);
        w.done = drain(sessionId);
      });
    },
    subscribe(sessionId, listener) {
      let set = listeners.get(sessionId);
      if (!set) listeners.set(sessionId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(sessionId);
      };
    },
    async after(tenantId, sessionId, seq) {
      const rows = await withTenant(deps.db, tenantId, (tx) => sessionEventsAfter(tx, sessionId, seq));
      return rows.map((r) => ({ seq: r.seq, event: r.event as unknown as SessionEvent }));
    },
    async maxSeq(tenantId, sessionId) {
      return (await withTenant(deps.db, tenantId, (tx) => sessionEventSeq(tx, sessionId))) ?? 0;
    },
    flushed: async (sessionId) => writers.get(sessionId)?.done,
    forget(sessionId) {
      listeners.delete(sessionId);
    },
    closing: closing.signal,
    lost,
    async close() {
      await Promise.all([...writers.values()].map((w) => w.done));
      closing.abort();
    },
  };
}
