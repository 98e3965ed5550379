import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { AppError, notFound } from '../../../shared/errors.ts';
import { parseJsonBody, parseWith } from '../../../shared/http.ts';
import type { AgentsEnv } from '../context.ts';
import { doc } from '../../../shared/route-doc.ts';
import { canonicalInput, EventsBody, SessionEvent } from '../sessions/session.schema.ts';
import { READ_ERRORS, WRITE_ERRORS } from '../wire.schema.ts';
import { getSessionRow } from '../sessions/sessions.repo.ts';
import type { TurnEngine } from '../turns/engine.ts';
import { parseEventId, type EventStore } from './event-store.ts';
import { sseResponse, subscribe } from './event-stream.ts';
import { deleteIdempotencyKey, idempotencyBodyHash, insertIdempotencyKey } from './events.repo.ts';

/**
 * Routes 14-15: `POST …/events` admits input events (204; `Idempotency-Key` per spec §8.8: a repeat of an admitted
 * key is 204 without re-applying, a refused request does not keep its key) and `GET …/events` streams the session's
 * events (§8.1, 8.2, 8.9, 8.10).
 */
export interface EventsDeps {
  db: Kysely<DB>;
  engine: TurnEngine;
  store: EventStore;
  keepAliveMs: number;
}

/** Claims an Idempotency-Key for this body; false when the same request was admitted before. */
async function claimKey(db: Kysely<DB>, tenantId: string, sessionId: string, key: string, bodyHash: string): Promise<boolean> {
  return withTenant(db, tenantId, async (tx) => {
    if (await insertIdempotencyKey(tx, { tenantId, sessionId, key, bodyHash })) return true;
    const prior = await idempotencyBodyHash(tx, sessionId, key);
    if (prior !== undefined && prior !== bodyHash) {
      throw new AppError(422, `Idempotency-Key ${key} was already used with a different request body`, { code: 'idempotency_key_reused', headers: { 'x-should-retry': 'false' } });
    }
    return false;
  });
}

async function releaseKey(db: Kysely<DB>, tenantId: string, sessionId: string, key: string): Promise<void> {
  await withTenant(db, tenantId, (tx) => deleteIdempotencyKey(tx, sessionId, key)).catch(() => {});
}

const DOCS = {
  send: doc({
    summary: 'Send input to a session',
    description:
      'Admits input events in order: a user message (starts a turn, or joins the live one), a cancel of the live turn, or the result of a function call the session waits on. Answers 204 with no body. With an `Idempotency-Key` header a repeat of an admitted request is 204 again, not applied twice (422 when the key was used with another body).',
    body: EventsBody,
    status: 204,
    // 402: no credit for the turn a message starts; 409: the turn is driven by another server; 422: a reused Idempotency-Key; 503: retry
    errors: [402, ...WRITE_ERRORS, 409, 422, 503],
  }),
  stream: doc({
    summary: "Stream a session's events",
    description:
      "A server-sent event stream of the session's events from now on (`event:` the type, `id:` the event id, `data:` the JSON event below); with a `Last-Event-ID` header the events after that one are replayed first. Comment lines keep the connection alive. A turn ends with its terminal turn event, then `agent.session.idle` or `agent.session.failed`.",
    responds: 'text/event-stream',
    response: SessionEvent,
    errors: READ_ERRORS,
  }),
};

export function eventRoutes(deps: EventsDeps): Hono<AgentsEnv> {
  return new Hono<AgentsEnv>()
    .post('/:session_id/events', DOCS.send, async (c) => {
      const tenantId = c.get('principal').tenantId;
      const sessionId = c.req.param('session_id');
      const events = parseWith(EventsBody, parseJsonBody(await c.req.text())).events.map(canonicalInput);
      const session = await withTenant(deps.db, tenantId, (tx) => getSessionRow(tx, sessionId));
      if (!session) throw notFound(`No session found with id '${sessionId}'.`);
      const key = c.req.header('idempotency-key')?.trim();
      if (key && !(await claimKey(deps.db, tenantId, sessionId, key, createHash('sha256').update(JSON.stringify(events)).digest('hex')))) {
        return c.body(null, 204);
      }
      try {
        await deps.engine.admit(tenantId, sessionId, events);
      } catch (err) {
        if (key) await releaseKey(deps.db, tenantId, sessionId, key);
        throw err;
      }
      return c.body(null, 204);
    })
    .get('/:session_id/events', DOCS.stream, async (c) => {
      const tenantId = c.get('principal').tenantId;
      const sessionId = c.req.param('session_id');
      const session = await withTenant(deps.db, tenantId, (tx) => getSessionRow(tx, sessionId));
      if (!session) throw notFound(`No session found with id '${sessionId}'.`);
      const last = c.req.header('last-event-id');
      const afterSeq = last ? parseEventId(sessionId, last) : undefined;
      const abort = new AbortController();
      const events = await subscribe(deps.store, tenantId, sessionId, { afterSeq, keepAliveMs: deps.keepAliveMs, signal: abort.signal });
      return sseResponse(c, sessionId, events, abort);
    });
}
