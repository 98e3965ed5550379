import { doc } from '../../../shared/route-doc.ts';
import { Hono, type Context } from 'hono';
import { withTenant } from '../../../db/index.ts';
import { notFound } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { AgentsEnv } from '../context.ts';
import { subscribe, sseResponse } from '../events/event-stream.ts';
import { cursorPage, readCursor } from '../../crud/index.ts';
import type { SessionEvent } from '../wire.ts';
import {
  ArtifactDeleted,
  ArtifactListQuery,
  ArtifactObject,
  ArtifactPage,
  inputMessages,
  SessionCreateParams,
  SessionDeleted,
  SessionItemPage,
  SessionListQuery,
  SessionObject,
  SessionPage,
  SessionUpdateParams,
  SubagentObject,
  SubagentPage,
  TurnObject,
  TurnPage,
} from './session.schema.ts';
import { CursorQuery, READ_ERRORS, WRITE_ERRORS } from '../wire.schema.ts';
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
const DOCS = {
  create: doc({
    summary: 'Create a session',
    description:
      "Starts a session of a saved agent (`agent_id`), of an inline agent (`agent` with a `model`), or of a saved agent with overrides for this session, in an environment (`none` or a hosted sandbox). With `input` its first turn starts at once. With `stream: true` the answer is instead a `text/event-stream` of the session's events (its creation, and with `input` the first turn up to the `agent.session.idle` or `agent.session.failed` after it).",
    body: SessionCreateParams,
    response: SessionObject,
    // 402: no credit for the first turn; 404: no such agent_id
    errors: [402, ...WRITE_ERRORS, 404],
  }),
  list: doc({ summary: 'List sessions', description: 'The sessions of the organisation, newest first by default; `agent_id` keeps those of one saved agent.', query: SessionListQuery, response: SessionPage, errors: READ_ERRORS }),
  get: doc({ summary: 'Get a session', description: 'The session: its agent configuration, environment, status, pending required actions and token usage so far.', response: SessionObject, errors: READ_ERRORS }),
  update: doc({ summary: "Update a session's metadata", description: 'Only `metadata` can change: `null` or `{}` clears it, omitted keeps it.', body: SessionUpdateParams, response: SessionObject, errors: WRITE_ERRORS }),
  delete: doc({
    summary: 'Delete a session',
    description: 'Stops a live turn, ends the sandbox and the subagents of the session, and deletes it with its turns, items and events; its saved agent stays.',
    response: SessionDeleted,
    errors: WRITE_ERRORS,
  }),
  items: doc({
    summary: "List a session's items",
    description: "The session's own conversation (user and assistant messages, reasoning, tool calls and their outputs, subagent calls), newest first by default; a subagent's items are listed under the subagent.",
    query: CursorQuery,
    response: SessionItemPage,
    errors: READ_ERRORS,
  }),
  turns: doc({
    summary: "List a session's turns",
    description: "Every turn of the session, its subagents' turns included (those carry a `subagent_id`), by creation time, newest first by default.",
    query: CursorQuery,
    response: TurnPage,
    errors: READ_ERRORS,
  }),
  turn: doc({ summary: 'Get a turn', description: 'One turn of the session: its status, timing, error and token usage.', response: TurnObject, errors: READ_ERRORS }),
  artifacts: doc({
    summary: "List a session's artifacts",
    description: "The files the session's turns left in its hosted sandbox, each published once per path and content by the turn that wrote it; an idle session's sandbox is read again first.",
    query: ArtifactListQuery,
    response: ArtifactPage,
    errors: [...READ_ERRORS, 502, 503],
  }),
  artifact: doc({ summary: 'Get an artifact', description: 'One published file of the session: its path, size and the turn that wrote it.', response: ArtifactObject, errors: READ_ERRORS }),
  deleteArtifact: doc({
    summary: 'Delete an artifact',
    description: 'Deletes the published copy; the live file in the sandbox and any File it came from stay, and the same content is not published again.',
    response: ArtifactDeleted,
    errors: WRITE_ERRORS,
  }),
  artifactContent: doc({ summary: "Download an artifact's content", description: 'The bytes of the published file, downloadable after the sandbox is gone.', responds: 'application/octet-stream', errors: READ_ERRORS }),
  subagents: doc({
    summary: "List a session's subagents",
    description: "The subagents the session's model opened (nested and closed ones included), newest first by default.",
    query: CursorQuery,
    response: SubagentPage,
    errors: READ_ERRORS,
  }),
  subagent: doc({ summary: 'Get a subagent', description: 'One subagent of the session: its name, instructions, parent agent and whether it is active or closed.', response: SubagentObject, errors: READ_ERRORS }),
  subagentItems: doc({ summary: "List a subagent's items", description: "The subagent's own conversation across all its turns, newest first by default.", query: CursorQuery, response: SessionItemPage, errors: READ_ERRORS }),
  subagentTurns: doc({ summary: "List a subagent's turns", description: "The subagent's turns (those after a resume included), newest first by default.", query: CursorQuery, response: TurnPage, errors: READ_ERRORS }),
  subagentTurn: doc({ summary: "Get a subagent's turn", description: 'One turn of the subagent.', response: TurnObject, errors: READ_ERRORS }),
  subagentTurnItems: doc({ summary: "List the items of a subagent's turn", description: 'The items of one turn of the subagent, newest first by default.', query: CursorQuery, response: SessionItemPage, errors: READ_ERRORS }),
};

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
    .post('/', DOCS.create, async (c) => {
      const p = await readJson(c, SessionCreateParams);
      if (p.stream) return createStreaming(c, deps, p);
      return c.json(await createSession(deps, tenantOf(c), p));
    })
    .get('/', DOCS.list, async (c) => c.json(await listSessions(deps, tenantOf(c), readCursor(c), c.req.query('agent_id') || undefined)))
    .get('/:session_id', DOCS.get, async (c) => c.json(await getSession(deps, tenantOf(c), c.req.param('session_id'))))
    .post('/:session_id', DOCS.update, async (c) => {
      const { metadata } = await readJson(c, SessionUpdateParams);
      return c.json(await updateSessionMetadata(deps, tenantOf(c), c.req.param('session_id'), metadata));
    })
    .delete('/:session_id', DOCS.delete, async (c) => c.json(await deleteSession(deps, tenantOf(c), c.req.param('session_id'))))
    .get('/:session_id/items', DOCS.items, async (c) => {
      const q = readCursor(c);
      await requireSessionOf(c);
      return c.json(cursorPage(await withTenant(deps.db, tenantOf(c), (tx) => listItems(tx, c.req.param('session_id'), q)), q.limit));
    })
    .get('/:session_id/turns', DOCS.turns, async (c) => {
      const q = readCursor(c);
      await requireSessionOf(c);
      return c.json(cursorPage(await withTenant(deps.db, tenantOf(c), (tx) => listTurns(tx, c.req.param('session_id'), q)), q.limit));
    })
    .get('/:session_id/turns/:turn_id', DOCS.turn, async (c) => {
      await requireSessionOf(c);
      const turn = await withTenant(deps.db, tenantOf(c), (tx) => getTurn(tx, c.req.param('session_id'), c.req.param('turn_id')));
      if (!turn) throw notFound(`No turn found with id '${c.req.param('turn_id')}' in session '${c.req.param('session_id')}'.`);
      return c.json(turn);
    })
    .get('/:session_id/artifacts', DOCS.artifacts, async (c) => {
      const q = readCursor(c);
      const sessionId = c.req.param('session_id');
      await requireSessionOf(c);
      await refreshArtifacts(deps, tenantOf(c), sessionId);
      return c.json(await listArtifacts(deps, tenantOf(c), sessionId, q, c.req.query('environment_id') || undefined));
    })
    .get('/:session_id/artifacts/:artifact_id', DOCS.artifact, async (c) => {
      await requireSessionOf(c);
      return c.json(await getArtifact(deps, tenantOf(c), c.req.param('session_id'), c.req.param('artifact_id')));
    })
    .delete('/:session_id/artifacts/:artifact_id', DOCS.deleteArtifact, async (c) => {
      await requireSessionOf(c);
      return c.json(await deleteArtifact(deps, tenantOf(c), c.req.param('session_id'), c.req.param('artifact_id')));
    })
    .get('/:session_id/artifacts/:artifact_id/content', DOCS.artifactContent, async (c) => {
      await requireSessionOf(c);
      const { path, content } = await artifactContent(deps, tenantOf(c), c.req.param('session_id'), c.req.param('artifact_id'));
      return binary(c, content, 'application/octet-stream', path.split('/').at(-1) || 'artifact');
    })
    .get('/:session_id/subagents', DOCS.subagents, async (c) => {
      const q = readCursor(c);
      await requireSessionOf(c);
      return c.json(cursorPage(await withTenant(deps.db, tenantOf(c), (tx) => listSubagents(tx, c.req.param('session_id'), q)), q.limit));
    })
    .get('/:session_id/subagents/:subagent_id', DOCS.subagent, async (c) => c.json(toSubagent(await requireSubagentOf(c))))
    .get('/:session_id/subagents/:subagent_id/items', DOCS.subagentItems, async (c) => {
      const q = readCursor(c);
      const sub = await requireSubagentOf(c);
      return c.json(cursorPage(await withTenant(deps.db, tenantOf(c), (tx) => listItems(tx, sub.session_id, q, { subagentId: sub.id })), q.limit));
    })
    .get('/:session_id/subagents/:subagent_id/turns', DOCS.subagentTurns, async (c) => {
      const q = readCursor(c);
      const sub = await requireSubagentOf(c);
      return c.json(cursorPage(await withTenant(deps.db, tenantOf(c), (tx) => listTurns(tx, sub.session_id, q, sub.id)), q.limit));
    })
    .get('/:session_id/subagents/:subagent_id/turns/:turn_id', DOCS.subagentTurn, async (c) => c.json(await requireSubagentTurnOf(c)))
    .get('/:session_id/subagents/:subagent_id/turns/:turn_id/items', DOCS.subagentTurnItems, async (c) => {
      const q = readCursor(c);
      const turn = await requireSubagentTurnOf(c);
      return c.json(cursorPage(await withTenant(deps.db, tenantOf(c), (tx) => listItems(tx, turn.session_id, q, { subagentId: turn.subagent_id!, turnId: turn.id })), q.limit));
    });
}
