import * as v from 'valibot';
import { cursorQuery, cursorPageOf, deletedOf, Timestamp, type Describes } from '../wire.schema.ts';
import type { FileObject } from './files.service.ts';

/** The Files resource's answers (spec §2.11): a file is `processed` once stored; `expires_at` only with `expires_after`. */
export const FileObjectSchema = v.object({
  id: v.string(),
  object: v.literal('file'),
  bytes: v.number(),
  created_at: Timestamp,
  filename: v.string(),
  purpose: v.string(),
  status: v.literal('processed'),
  expires_at: v.optional(Timestamp),
});
export const FilePage = cursorPageOf(FileObjectSchema);
/** `object` is `file`, not `file.deleted` (as the `openai` package reads it). */
export const FileDeleted = deletedOf('file');
export const FileListQuery = cursorQuery({ purpose: v.optional(v.pipe(v.string(), v.description('Only the files of this purpose'))) });

export type CheckedFileObject = Describes<typeof FileObjectSchema, FileObject>;
