import type { Tx } from '../../../db/index.ts';
import { keysetRows, type CursorQuery } from '../../crud/index.ts';

/** SQL of `agent_session_artifacts` (a deleted artifact keeps its row without bytes) and what publishing compares with. */
export const ARTIFACT_COLUMNS = ['id', 'created_at', 'environment_id', 'path', 'session_id', 'size_bytes', 'turn_id'] as const;

export function environmentWorkspace(tx: Tx, environmentId: string) {
  return tx.selectFrom('agent_environments').select('workspace_directory').where('id', '=', environmentId).executeTakeFirst();
}

/** The environment's input files (they are not artifacts unless changed). */
export function environmentInputs(tx: Tx, environmentId: string) {
  return tx.selectFrom('agent_environment_files').select(['path', 'content']).where('environment_id', '=', environmentId).execute();
}

/** Path and hash of every artifact the session ever published (deleted ones included: they are not published again). */
export function publishedArtifacts(tx: Tx, sessionId: string) {
  return tx.selectFrom('agent_session_artifacts').select(['path', 'sha256']).where('session_id', '=', sessionId).execute();
}

/** 1 when stored, 0 when the same path and bytes were published already (the unique index settles races). */
export async function insertArtifact(
  tx: Tx,
  a: { id: string; tenantId: string; sessionId: string; environmentId: string; turnId: string; path: string; sha256: string; content: Uint8Array },
): Promise<number> {
  const res = await tx
    .insertInto('agent_session_artifacts')
    .values({ id: a.id, tenant_id: a.tenantId, session_id: a.sessionId, environment_id: a.environmentId, turn_id: a.turnId, path: a.path, size_bytes: a.content.byteLength, sha256: a.sha256, content: a.content })
    .onConflict((oc) => oc.columns(['session_id', 'path', 'sha256']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n);
}

export function lastTurnId(tx: Tx, sessionId: string) {
  return tx.selectFrom('agent_turns').select('id').where('session_id', '=', sessionId).orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirst();
}

export function selectArtifacts(tx: Tx, sessionId: string, cursor: CursorQuery, environmentId: string | undefined) {
  let query = tx.selectFrom('agent_session_artifacts').select(ARTIFACT_COLUMNS).where('session_id', '=', sessionId).where('deleted_at', 'is', null);
  if (environmentId !== undefined) query = query.where('environment_id', '=', environmentId);
  return keysetRows(query, 'agent_session_artifacts', cursor);
}

export function selectArtifact(tx: Tx, sessionId: string, id: string) {
  return tx.selectFrom('agent_session_artifacts').select(ARTIFACT_COLUMNS).where('id', '=', id).where('session_id', '=', sessionId).where('deleted_at', 'is', null).executeTakeFirst();
}

export function selectArtifactContent(tx: Tx, sessionId: string, id: string) {
  return tx.selectFrom('agent_session_artifacts').select(['path', 'content']).where('id', '=', id).where('session_id', '=', sessionId).where('deleted_at', 'is', null).executeTakeFirst();
}

/** Drops the record's bytes and marks it deleted; false when there was no live artifact. */
export async function softDeleteArtifact(tx: Tx, sessionId: string, id: string): Promise<boolean> {
  const res = await tx.updateTable('agent_session_artifacts').set({ deleted_at: new Date(), content: null }).where('id', '=', id).where('session_id', '=', sessionId).where('deleted_at', 'is', null).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** The newest artifact of each path the session published, with its bytes (null for a deleted one), by path. */
export function latestArtifacts(tx: Tx, sessionId: string) {
  return tx
    .selectFrom('agent_session_artifacts')
    .distinctOn('path')
    .select(['path', 'content'])
    .where('session_id', '=', sessionId)
    .orderBy('path')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}
