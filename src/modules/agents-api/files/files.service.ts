import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withTenant } from '../../../db/index.ts';
import { notFound } from '../../../shared/errors.ts';
import { randomId } from '../../../shared/ids.ts';
import { seconds } from '../deps.ts';
import { cursorPage, deletedObject, findOr404, type CursorPage, type CursorQuery } from '../../crud/index.ts';
import { deleteLiveFile, insertFile, purgeExpiredFiles, readFileContent, selectFile, selectFiles } from './files.repo.ts';

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

type FileRow = { id: string; filename: string; purpose: string; bytes: number; created_at: Date; expires_at: Date | null };

function toObject(r: FileRow): FileObject {
  const file: FileObject = { id: r.id, bytes: r.bytes, created_at: seconds(r.created_at), filename: r.filename, object: 'file', purpose: r.purpose, status: 'processed' };
  if (r.expires_at) file.expires_at = seconds(r.expires_at);
  return file;
}

export async function createFile(
  db: Kysely<DB>,
  tenantId: string,
  input: { filename: string; purpose: FilePurpose; content: Uint8Array; expiresAfterSeconds?: number },
): Promise<FileObject> {
  const now = new Date();
  return withTenant(db, tenantId, async (tx) => {
    await purgeExpiredFiles(tx, now);
    const expiresAt = input.expiresAfterSeconds === undefined ? null : new Date(now.getTime() + input.expiresAfterSeconds * 1000);
    return toObject(await insertFile(tx, { id: `file-${randomId(24)}`, tenantId, filename: input.filename, purpose: input.purpose, content: input.content, createdAt: now, expiresAt }));
  });
}

export async function getFile(db: Kysely<DB>, tenantId: string, id: string): Promise<FileObject> {
  return toObject(await findOr404(withTenant(db, tenantId, (tx) => selectFile(tx, id)), () => noSuchFile(id)));
}

export async function listFiles(db: Kysely<DB>, tenantId: string, cursor: CursorQuery, purpose: string | undefined): Promise<CursorPage<FileObject>> {
  const rows = await withTenant(db, tenantId, (tx) => selectFiles(tx, cursor, purpose));
  return cursorPage(rows.map(toObject), cursor.limit);
}

export async function deleteFile(db: Kysely<DB>, tenantId: string, id: string): Promise<{ id: string; deleted: true; object: 'file' }> {
  await findOr404(withTenant(db, tenantId, (tx) => deleteLiveFile(tx, id)), () => noSuchFile(id));
  return deletedObject(id, 'file');
}

export { readFileContent };

export async function fileContent(db: Kysely<DB>, tenantId: string, id: string): Promise<{ filename: string; content: Uint8Array }> {
  return findOr404(withTenant(db, tenantId, (tx) => readFileContent(tx, id)), () => noSuchFile(id));
}

function noSuchFile(id: string) {
  return notFound(`No such File object: ${id}`);
}
