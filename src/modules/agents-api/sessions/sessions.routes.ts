import { doc } from '../../../shared/route-doc.ts';
import { Hono, type Context } from 'hono';
import { withTenant } from '../../../db/index.ts';
import { notFound } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { AgentsEnv } from '../context.ts';
import { subscribe, sseResponse } from '../events/event-stream.ts';
import { cursorPage, readCursor } from '../../crud/index.ts';
import type { SessionEvent } from '../wire.ts';
import { inputMessages, SessionCreateParams, SessionUpdateParams } from './session.schema.ts';
import { binary } from '../binary.ts';
import { artifactContent, deleteArtifact, getArtifact, listArtifacts, refreshArtifacts } from './artifacts.service.ts';
import { getSubagent, listSubagents, toSubagent } from '../subagents/subagents.repo.ts';
import { getTurn, listItems, listTurns } from './sessions.repo.ts';
import { createSession, deleteSession, getSession, listSessions, requireSession, updateSessionMetadata, type SessionsDeps } from './sessions.service.ts';

/**
 * Routes 6-13 and 16-25 under `/agents/sessions`: sessions, their items and turns, and the artifact and subagent
 * families. Artifacts come from the sandbox of a hosted environment (artifacts.service.ts); subagents are spawned by
 * the session's model (subagents/subagents.service.ts). The session's `items` are its own conversation only; a
 * subagent's items are listed under the subagent, its turns both there and among the session's turns.
 */
const tenantOf = (c: Context<AgentsEnv>) => c.get('principal').tenantId;
const TURN_END = new Set(['agent.session.turn.completed', 'agent.session.turn.failed', 'agent.session.turn.cancelled']);

/** `stream: true`: the creation events, and with `input` the first turn, ending at the idle (or failed) after it. */
async function createStreaming(c: Context<AgentsEnv>, deps: SessionsDeps & { keepAliveMs: number }, p: SessionCreateParams): Promise<Response> {
  const tenantId = tenantOf(c);
  const session = await createSession(deps, tenantId, { ...p, input: null }, { turnFollows: !!p.input });
  const lastCreationEvent = session.environment.type === 'none' ? 'agent.session.created' : 'agent.session.environment.connected';
  let turnEnded = false;
  const until = (e: SessionEvent) => {
    if (!p.input) return e.type === lastCreationEvent;
    if (TURN_END.has(e.type)) turnEnded = true;
    return e.type === 'agent.session.failed' || (turnEnded && e.type === 'agent.session.idle');
  };
  const abort = new AbortController();
  const events = await subscribe(deps.store, tenantId, session.id, { afterSeq: 0, keepAliveMs: deps.keepAliveMs, signal: abort.signal, until });
  if (p.input) {
    try {
      await deps.engine.admit(tenantId, session.id, [{ type: 'agent.session.input.message', input: inputMessages(p.input) }]);
    } catch (err) {
      await events.return(undefined);
      throw err;
    }
  }
  return sseResponse(c, session.id, events, abort);
}

export function sessionRoutes(deps: SessionsDeps & { keepAliveMs: number }): Hono<AgentsEnv> {
  const requireSessionOf = (c: Context<AgentsEnv>) => requireSession(deps.db, tenantOf(c), c.req.param('session_id')!);
  const requireSubagentOf = async (c: Context<AgentsEnv>) => {
    const session = await requireSessionOf(c);
    const sub = await withTenant(deps.db, tenantOf(c), (tx) => getSubagent(tx, session.id, c.req.param('subagent_id')!));
    if (!sub) throw notFound(`No subagent found with id '${c.req.param('subagent_id')}' in session '${session.id}'.`);
    return sub;
  };
  const requireSubagentTurnOf = async (c: Context<AgentsEnv>) => {
    const sub = await requireSubagentOf(c);
    const turn = await withTenant(deps.db, tenantOf(c), (tx) => getTurn(tx, sub.session_id, c.req.param('turn_id')!));
    if (!turn || turn.subagent_id !== sub.id) throw notFound(`No turn found with id '${c.req.param('turn_id')}' for subagent '${sub.id}'.`);
    return turn;
  };

  return new Hono<AgentsEnv>()
    .post('/', doc({ body: SessionCreateParams }), async (c) => {
      const p = await readJson(c, SessionCreateParams);
      if (p.stream) return createStreaming(c, deps, p);
      return c.json(await createSession(deps, tenantOf(c), p));
    })
    .get('/', async (c) => c.json(await listSessions(deps, tenantOf(c), readCursor(c), c.req.query('agent_id') || undefined)))
    .get('/:session_id', async (c) => c.json(await getSession(deps, tenantOf(c), c.req.param('session_id'))))
    .post('/:session_id', doc({ body: SessionUpdateParams }), async (c) => {
      const { metadata } = await readJson(c, SessionUpdateParams);
      return c.json(await updateSessionMetadata(deps, tenantOf(c), c.req.param('session_id'), metadata));
    })
    .delete('/:session_id', async (c) => c.json(await deleteSession(deps, tenantOf(c), c.req.param('session_id'))))
    .get('/:session_id/items', async (c) => {
      const q = readCursor(c);
      await requireSessionOf(c);
      return c.json(cursorPage(await withTenant(deps.db, tenantOf(c), (tx) => listItems(tx, c.req.param('session_id'), q)), q.limit));
    })
    .get('/:session_id/turns', async (c) => {
      const q = readCursor(c);
      await requireSessionOf(c);
      return c.json(cursorPage(await withTenant(deps.db, tenantOf(c), (tx) => listTurns(tx, c.req.param('session_id'), q)), q.limit));
    })
    .get('/:session_id/turns/:turn_id', async (c) => {
      await requireSessionOf(c);
      const turn = await withTenant(deps.db, tenantOf(c), (tx) => getTurn(tx, c.req.param('session_id'), c.req.param('turn_id')));
      if (!turn) throw notFound(`No turn found with id '${c.req.param('turn_id')}' in session '${c.req.param('session_id')}'.`);
      return c.json(turn);
    })
    .get('/:session_id/artifacts', async (c) => {
      const q = readCursor(c);
      const sessionId = c.req.param('session_id');
      await requireSessionOf(c);
      await refreshArtifacts(deps, tenantOf(c), sessionId);
      return c.json(await listArtifacts(deps, tenantOf(c), sessionId, q, c.req.query('environment_id') || undefined));
    })
    .get('/:session_id/artifacts/:artifact_id', async (c) => {
      await requireSessionOf(c);
      return c.json(await getArtifact(deps, tenantOf(c), c.req.param('session_id'), c.req.param('artifact_id')));
    })
    .delete('/:session_id/artifacts/:artifact_id', async (c) => {
      await requireSessionOf(c);
      return c.json(await deleteArtifact(deps, tenantOf(c), c.req.param('session_id'), c.req.param('artifact_id')));
    })
    .get('/:session_id/artifacts/:artifact_id/content', async (c) => {
      await requireSessionOf(c);
      const { path, content } = await artifactContent(deps, tenantOf(c), c.req.param('session_id'), c.req.param('artifact_id'));
      return binary(c, content, 'application/octet-stream', path.split('/').at(-1) || 'artifact');
    })
    .get('/:session_id/subagents', async (c) => {
      const q = readCursor(c);
      await requireSessionOf(c);
      return c.json(cursorPage(await withTenant(deps.db, tenantOf(c), (tx) => listSubagents(tx, c.req.param('session_id'), q)), q.limit));
    })
    .get('/:session_id/subagents/:subagent_id', async (c) => c.json(toSubagent(await requireSubagentOf(c))))
    .get('/:session_id/subagents/:subagent_id/items', async (c) => {
      const q = readCursor(c);
      const sub = await requireSubagentOf(c);
      return c.json(cursorPage(await withTenant(deps.db, tenantOf(c), (tx) => listItems(tx, sub.session_id, q, { subagentId: sub.id })), q.limit));
    })
    .get('/:session_id/subagents/:subagent_id/turns', async (c) => {
      const q = readCursor(c);
      const sub = await requireSubagentOf(c);
      return c.json(cursorPage(await withTenant(deps.db, tenantOf(c), (tx) => listTurns(tx, sub.session_id, q, sub.id)), q.limit));
    })
    .get('/:session_id/subagents/:subagent_id/turns/:turn_id', async (c) => c.json(await requireSubagentTurnOf(c)))
    .get('/:session_id/subagents/:subagent_id/turns/:turn_id/items', async (c) => {
      const q = readCursor(c);
      const turn = await requireSubagentTurnOf(c);
      return c.json(cursorPage(await withTenant(deps.db, tenantOf(c), (tx) => listItems(tx, turn.session_id, q, { subagentId: turn.subagent_id!, turnId: turn.id })), q.limit));
    });
}
