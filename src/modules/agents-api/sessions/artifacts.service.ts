import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { notFound } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/log.ts';
import { seconds } from '../deps.ts';
import { collectSandboxFiles, sandboxPath, sandboxRunner, sha256, workspacePath, type SandboxDeps } from '../environments/sandbox.ts';
import { cursorPage, deletedObject, findOr404, type CursorPage, type CursorQuery } from '../../crud/index.ts';
import { environmentInputs, environmentWorkspace, insertArtifact, lastTurnId, publishedArtifacts, selectArtifact, selectArtifactContent, selectArtifacts, softDeleteArtifact } from './artifacts.repo.ts';
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
    const env = await environmentWorkspace(tx, environmentId);
    const workspace = env?.workspace_directory ?? '/workspace';
    const inputs = env ? await environmentInputs(tx, environmentId) : [];
    const known = new Set(inputs.map((f) => `${sandboxPath(workspace, f.path)}\0${sha256(f.content)}`));
    const published = await publishedArtifacts(tx, sessionId);
    for (const p of published) known.add(`${p.path}\0${p.sha256}`);
    let added = 0;
    for (const f of files) {
      const path = workspacePath(workspace, f.rel);
      if (known.has(`${f.rel}\0${f.sha256}`) || known.has(`${path}\0${f.sha256}`)) continue;
      added += await insertArtifact(tx, { id: prefixedId('artifact', 24), tenantId, sessionId, environmentId, turnId, path, sha256: f.sha256, content: f.content });
    }
    return added;
  });
}

/** On demand (listing): an idle sandboxed session publishes what is new since its last turn, as that turn's. */
export async function refreshArtifacts(deps: ArtifactsDeps, tenantId: string, sessionId: string): Promise<void> {
  const row = await withTenant(deps.db, tenantId, (tx) => getSessionRow(tx, sessionId));
  if (!row || row.active_turn_id || row.environment.type === 'none') return;
  const last = await withTenant(deps.db, tenantId, (tx) => lastTurnId(tx, sessionId));
  if (!last) return;
  await publishArtifacts(deps, tenantId, sessionId, last.id).catch((err) => deps.log.warn('publishing artifacts failed', { sessionId, error: String(err) }));
}

export async function listArtifacts(deps: ArtifactsDeps, tenantId: string, sessionId: string, q: CursorQuery, environmentId: string | undefined): Promise<CursorPage<SessionArtifact>> {
  const rows = await withTenant(deps.db, tenantId, (tx) => selectArtifacts(tx, sessionId, q, environmentId));
  return cursorPage(rows.map(toArtifact), q.limit);
}

export async function getArtifact(deps: ArtifactsDeps, tenantId: string, sessionId: string, id: string): Promise<SessionArtifact> {
  return toArtifact(await findOr404(withTenant(deps.db, tenantId, (tx) => selectArtifact(tx, sessionId, id)), () => noSuchArtifact(id)));
}

export async function artifactContent(deps: ArtifactsDeps, tenantId: string, sessionId: string, id: string): Promise<{ path: string; content: Uint8Array }> {
  const row = await withTenant(deps.db, tenantId, (tx) => selectArtifactContent(tx, sessionId, id));
  if (!row?.content) throw noSuchArtifact(id);
  return { path: row.path, content: row.content };
}

/** Removes the artifact record and its stored bytes; the live workspace file and any source Files object stay. */
export async function deleteArtifact(deps: ArtifactsDeps, tenantId: string, sessionId: string, id: string): Promise<{ id: string; deleted: true; object: 'agent.session.artifact.deleted' }> {
  await findOr404(withTenant(deps.db, tenantId, (tx) => softDeleteArtifact(tx, sessionId, id)), () => noSuchArtifact(id));
  return deletedObject(id, 'agent.session.artifact.deleted');
}
