import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/log.ts';
import { seconds } from '../deps.ts';
import { collectSandboxFiles, sandboxPath, sandboxRunner, sha256, workspacePath, type SandboxDeps } from '../environments/sandbox.ts';
import { keysetRows } from '../../crud/index.ts';
import { cursorPage, type CursorPage, type CursorQuery } from '../../crud/index.ts';
import { getSessionRow } from './sessions.repo.ts';

/**
 * Session artifacts (routes 16–19, spec §1.3 and §2.8): the files a turn left in a sandboxed session's `/work`. After
 * each turn (and when the artifacts of an idle session are listed) the sandbox is read back and every file whose
 * (path, content) is new is published as an immutable artifact of that turn, bytes copied into the database so they
 * stay downloadable after the environment or runner session is gone. The workspace files the environment was created
 * with are inputs, not artifacts, until they change. Deleting an artifact keeps a tombstone row (no content), so the
 * unchanged live file — which deletion must not touch — is not published again.
 */
export interface SessionArtifact {
  id: string;
  created_at: number;
  environment_id: string;
  object: 'agent.session.artifact';
  path: string;
  session_id: string;
  size_bytes: number;
  turn_id: string;
}

export interface ArtifactsDeps extends SandboxDeps {
  db: Kysely<DB>;
  log: Logger;
}

const COLUMNS = ['id', 'created_at', 'environment_id', 'path', 'session_id', 'size_bytes', 'turn_id'] as const;
type ArtifactRow = { id: string; created_at: Date; environment_id: string; path: string; session_id: string; size_bytes: number; turn_id: string };

function toArtifact(r: ArtifactRow): SessionArtifact {
  return { id: r.id, created_at: seconds(r.created_at), environment_id: r.environment_id, object: 'agent.session.artifact', path: r.path, session_id: r.session_id, size_bytes: r.size_bytes, turn_id: r.turn_id };
}

const noSuchArtifact = (id: string) => notFound(`No artifact found with id '${id}'.`);

/** One publication at a time per session in this process (the unique index settles races across processes). */
const publishing = new Map<string, Promise<number>>();

/** Publishes the new files of the session's sandbox as artifacts of `turnId`; resolves with how many were new. */
export function publishArtifacts(deps: ArtifactsDeps, tenantId: string, sessionId: string, turnId: string): Promise<number> {
  const prev = publishing.get(sessionId) ?? Promise.resolve(0);
  const next = prev.catch(() => 0).then(() => publishNow(deps, tenantId, sessionId, turnId));
  publishing.set(sessionId, next);
  void next.finally(() => publishing.get(sessionId) === next && publishing.delete(sessionId)).catch(() => {});
  return next;
}

async function publishNow(deps: ArtifactsDeps, tenantId: string, sessionId: string, turnId: string): Promise<number> {
  const row = await withTenant(deps.db, tenantId, (tx) => getSessionRow(tx, sessionId));
  if (!row || row.environment.type === 'none' || !('id' in row.environment) || !row.environment.id) return 0;
  const environmentId = row.environment.id;
  const client = await sandboxRunner(deps, tenantId, sessionId);
  if (!client) return 0;
  const files = await collectSandboxFiles(client, tenantId, sessionId);
  if (files.length === 0) return 0;
  return withTenant(deps.db, tenantId, async (tx) => {
    const env = await tx.selectFrom('agent_environments').select('workspace_directory').where('id', '=', environmentId).executeTakeFirst();
    const workspace = env?.workspace_directory ?? '/workspace';
    const inputs = env ? await tx.selectFrom('agent_environment_files').select(['path', 'content']).where('environment_id', '=', environmentId).execute() : [];
    const known = new Set(inputs.map((f) => `${sandboxPath(workspace, f.path)}\0${sha256(f.content)}`));
    const published = await tx.selectFrom('agent_session_artifacts').select(['path', 'sha256']).where('session_id', '=', sessionId).execute();
    for (const p of published) known.add(`${p.path}\0${p.sha256}`);
    let added = 0;
    for (const f of files) {
      const path = workspacePath(workspace, f.rel);
      if (known.has(`${f.rel}\0${f.sha256}`) || known.has(`${path}\0${f.sha256}`)) continue;
      const res = await tx
        .insertInto('agent_session_artifacts')
        .values({ id: prefixedId('artifact', 24), tenant_id: tenantId, session_id: sessionId, environment_id: environmentId, turn_id: turnId, path, size_bytes: f.content.byteLength, sha256: f.sha256, content: f.content })
        .onConflict((oc) => oc.columns(['session_id', 'path', 'sha256']).doNothing())
        .executeTakeFirst();
      added += Number(res.numInsertedOrUpdatedRows ?? 0n);
    }
    return added;
  });
}

/** On demand (listing): an idle sandboxed session publishes what is new since its last turn, as that turn's. */
export async function refreshArtifacts(deps: ArtifactsDeps, tenantId: string, sessionId: string): Promise<void> {
  const row = await withTenant(deps.db, tenantId, (tx) => getSessionRow(tx, sessionId));
  if (!row || row.active_turn_id || row.environment.type === 'none') return;
  const last = await withTenant(deps.db, tenantId, (tx) =>
    tx.selectFrom('agent_turns').select('id').where('session_id', '=', sessionId).orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirst(),
  );
  if (!last) return;
  await publishArtifacts(deps, tenantId, sessionId, last.id).catch((err) => deps.log.warn('publishing artifacts failed', { sessionId, error: String(err) }));
}

export async function listArtifacts(deps: ArtifactsDeps, tenantId: string, sessionId: string, q: CursorQuery, environmentId: string | undefined): Promise<CursorPage<SessionArtifact>> {
  const rows = await withTenant(deps.db, tenantId, (tx) => {
    let query = tx.selectFrom('agent_session_artifacts').select(COLUMNS).where('session_id', '=', sessionId).where('deleted_at', 'is', null);
    if (environmentId !== undefined) query = query.where('environment_id', '=', environmentId);
    return keysetRows(query, 'agent_session_artifacts', q);
  });
  return cursorPage(rows.map(toArtifact), q.limit);
}

export async function getArtifact(deps: ArtifactsDeps, tenantId: string, sessionId: string, id: string): Promise<SessionArtifact> {
  const row = await withTenant(deps.db, tenantId, (tx) =>
    tx.selectFrom('agent_session_artifacts').select(COLUMNS).where('id', '=', id).where('session_id', '=', sessionId).where('deleted_at', 'is', null).executeTakeFirst(),
  );
  if (!row) throw noSuchArtifact(id);
  return toArtifact(row);
}

export async function artifactContent(deps: ArtifactsDeps, tenantId: string, sessionId: string, id: string): Promise<{ path: string; content: Uint8Array }> {
  const row = await withTenant(deps.db, tenantId, (tx) =>
    tx.selectFrom('agent_session_artifacts').select(['path', 'content']).where('id', '=', id).where('session_id', '=', sessionId).where('deleted_at', 'is', null).executeTakeFirst(),
  );
  if (!row?.content) throw noSuchArtifact(id);
  return { path: row.path, content: row.content };
}

/** Removes the artifact record and its stored bytes; the live workspace file and any source Files object stay. */
export async function deleteArtifact(deps: ArtifactsDeps, tenantId: string, sessionId: string, id: string): Promise<{ id: string; deleted: true; object: 'agent.session.artifact.deleted' }> {
  const res = await withTenant(deps.db, tenantId, (tx) =>
    tx.updateTable('agent_session_artifacts').set({ deleted_at: new Date(), content: null }).where('id', '=', id).where('session_id', '=', sessionId).where('deleted_at', 'is', null).executeTakeFirst(),
  );
  if (!Number(res.numUpdatedRows)) throw noSuchArtifact(id);
  return { id, deleted: true, object: 'agent.session.artifact.deleted' };
}
