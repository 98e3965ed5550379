import { sql, type Kysely } from 'kysely';
import type { DB, Tx } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { notFound } from '../../../shared/errors.ts';
import { randomId } from '../../../shared/ids.ts';
import { seconds } from '../deps.ts';
import { keysetRows } from '../../crud/index.ts';
import { cursorPage, type CursorPage, type CursorQuery } from '../../crud/index.ts';

/**
 * The Files resource (`client.files`): uploaded bytes stored in the database, served back byte for byte. A file with
 * `expires_after` is gone (404, absent from lists) once its `expires_at` passes; expired rows are purged on upload.
 */
export const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

export interface FileObject {
  id: string;
  bytes: number;
  created_at: number;
  filename: string;
  object: 'file';
  purpose: string;
  status: 'processed';
  expires_at?: number;
}

const COLUMNS = ['id', 'filename', 'purpose', 'bytes', 'created_at', 'expires_at'] as const;
type FileRow = { id: string; filename: string; purpose: string; bytes: number; created_at: Date; expires_at: Date | null };

function toObject(r: FileRow): FileObject {
  const file: FileObject = { id: r.id, bytes: r.bytes, created_at: seconds(r.created_at), filename: r.filename, object: 'file', purpose: r.purpose, status: 'processed' };
  if (r.expires_at) file.expires_at = seconds(r.expires_at);
  return file;
}

const live = sql<boolean>`(agent_files.expires_at is null or agent_files.expires_at > now())`;

export async function createFile(
  db: Kysely<DB>,
  tenantId: string,
  input: { filename: string; purpose: FilePurpose; content: Uint8Array; expiresAfterSeconds?: number },
): Promise<FileObject> {
  const now = new Date();
  return withTenant(db, tenantId, async (tx) => {
    await tx.deleteFrom('agent_files').where('expires_at', '<=', now).execute();
    const row = await tx
      .insertInto('agent_files')
      .values({
        id: `file-${randomId(24)}`,
        tenant_id: tenantId,
        filename: input.filename,
        purpose: input.purpose,
        bytes: input.content.byteLength,
        content: input.content,
        created_at: now,
        expires_at: input.expiresAfterSeconds === undefined ? null : new Date(now.getTime() + input.expiresAfterSeconds * 1000),
      })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
    return toObject(row);
  });
}

export async function getFile(db: Kysely<DB>, tenantId: string, id: string): Promise<FileObject> {
  const row = await withTenant(db, tenantId, (tx) => tx.selectFrom('agent_files').select(COLUMNS).where('id', '=', id).where(live).executeTakeFirst());
  if (!row) throw noSuchFile(id);
  return toObject(row);
}

export async function listFiles(db: Kysely<DB>, tenantId: string, cursor: CursorQuery, purpose: string | undefined): Promise<CursorPage<FileObject>> {
  const rows = await withTenant(db, tenantId, (tx) => {
    let q = tx.selectFrom('agent_files').select(COLUMNS).where(live);
    if (purpose !== undefined) q = q.where('purpose', '=', purpose);
    return keysetRows(q, 'agent_files', cursor);
  });
  return cursorPage(rows.map(toObject), cursor.limit);
}

export async function deleteFile(db: Kysely<DB>, tenantId: string, id: string): Promise<{ id: string; deleted: true; object: 'file' }> {
  const gone = await withTenant(db, tenantId, (tx) => tx.deleteFrom('agent_files').where('id', '=', id).where(live).returning('id').executeTakeFirst());
  if (!gone) throw noSuchFile(id);
  return { id, deleted: true, object: 'file' };
}

/** The stored bytes of a live file, inside the caller's tenant transaction (environment files copy from here). */
export async function readFileContent(tx: Tx, id: string): Promise<{ filename: string; content: Uint8Array } | undefined> {
  return tx.selectFrom('agent_files').select(['filename', 'content']).where('id', '=', id).where(live).executeTakeFirst();
}

export async function fileContent(db: Kysely<DB>, tenantId: string, id: string): Promise<{ filename: string; content: Uint8Array }> {
  const row = await withTenant(db, tenantId, (tx) => readFileContent(tx, id));
  if (!row) throw noSuchFile(id);
  return row;
}

function noSuchFile(id: string) {
  return notFound(`No such File object: ${id}`);
}
