import { sql } from 'kysely';
import type { Tx } from '../../../db/index.ts';
import { keysetRows, type CursorQuery } from '../../crud/index.ts';

/** SQL of `agent_files`. A file past its `expires_at` is not live: absent from every read. */
export const FILE_COLUMNS = ['id', 'filename', 'purpose', 'bytes', 'created_at', 'expires_at'] as const;

const live = sql<boolean>`(agent_files.expires_at is null or agent_files.expires_at > now())`;

export async function purgeExpiredFiles(tx: Tx, now: Date): Promise<void> {
  await tx.deleteFrom('agent_files').where('expires_at', '<=', now).execute();
}

export function insertFile(tx: Tx, f: { id: string; tenantId: string; filename: string; purpose: string; content: Uint8Array; createdAt: Date; expiresAt: Date | null }) {
  return tx
    .insertInto('agent_files')
    .values({ id: f.id, tenant_id: f.tenantId, filename: f.filename, purpose: f.purpose, bytes: f.content.byteLength, content: f.content, created_at: f.createdAt, expires_at: f.expiresAt })
    .returning(FILE_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function selectFile(tx: Tx, id: string) {
  return tx.selectFrom('agent_files').select(FILE_COLUMNS).where('id', '=', id).where(live).executeTakeFirst();
}

export function selectFiles(tx: Tx, cursor: CursorQuery, purpose: string | undefined) {
  let q = tx.selectFrom('agent_files').select(FILE_COLUMNS).where(live);
  if (purpose !== undefined) q = q.where('purpose', '=', purpose);
  return keysetRows(q, 'agent_files', cursor);
}

/** True when a live file was deleted. */
export async function deleteLiveFile(tx: Tx, id: string): Promise<boolean> {
  return (await tx.deleteFrom('agent_files').where('id', '=', id).where(live).returning('id').executeTakeFirst()) !== undefined;
}

/** The stored bytes of a live file, inside the caller's tenant transaction (environment files copy from here). */
export function readFileContent(tx: Tx, id: string): Promise<{ filename: string; content: Uint8Array } | undefined> {
  return tx.selectFrom('agent_files').select(['filename', 'content']).where('id', '=', id).where(live).executeTakeFirst();
}
