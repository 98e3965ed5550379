import { Hono } from 'hono';
import { badRequest } from '../../../shared/errors.ts';
import type { AgentsEnv } from '../context.ts';
import type { ResourceDeps } from '../deps.ts';
import { fileParts, isMultipart, readParts, textField } from '../multipart.ts';
import { readCursor } from '../../crud/index.ts';
import { binary } from '../binary.ts';
import { createFile, deleteFile, fileContent, FILE_PURPOSES, getFile, listFiles, type FilePurpose } from './files.service.ts';

const MIN_EXPIRY = 3600;
const MAX_EXPIRY = 2_592_000;

/** Routes 43–47: `POST|GET /files`, `GET|DELETE /files/{file_id}`, `GET /files/{file_id}/content` (no beta header). */
export function filesRoutes(deps: ResourceDeps): Hono<AgentsEnv> {
  return new Hono<AgentsEnv>()
    .post('/', async (c) => {
      if (!isMultipart(c)) throw badRequest('file: expected a multipart/form-data upload with `file` and `purpose`');
      const parts = await readParts(c);
      const files = fileParts(parts, 'file');
      if (files.length !== 1) throw badRequest(files.length === 0 ? 'file: a file part is required' : 'file: exactly one file part is allowed');
      const purpose = textField(parts, 'purpose');
      if (purpose === undefined || purpose === '') throw badRequest(`purpose: required, one of ${FILE_PURPOSES.join(', ')}`);
      if (!(FILE_PURPOSES as readonly string[]).includes(purpose)) throw badRequest(`purpose: expected one of ${FILE_PURPOSES.join(', ')}, received "${purpose}"`);
      const expiresAfterSeconds = readExpiry(textField(parts, 'expires_after[anchor]'), textField(parts, 'expires_after[seconds]'));
      const [file] = files;
      const content = new Uint8Array(await file.arrayBuffer());
      return c.json(await createFile(deps.db, c.get('principal').tenantId, { filename: file.name || 'file', purpose: purpose as FilePurpose, content, expiresAfterSeconds }));
    })
    .get('/', async (c) => {
      const purpose = c.req.query('purpose') || undefined;
      return c.json(await listFiles(deps.db, c.get('principal').tenantId, readCursor(c), purpose));
    })
    .get('/:file_id', async (c) => c.json(await getFile(deps.db, c.get('principal').tenantId, c.req.param('file_id'))))
    .delete('/:file_id', async (c) => c.json(await deleteFile(deps.db, c.get('principal').tenantId, c.req.param('file_id'))))
    .get('/:file_id/content', async (c) => {
      const file = await fileContent(deps.db, c.get('principal').tenantId, c.req.param('file_id'));
      return binary(c, file.content, 'application/octet-stream', file.filename);
    });
}

function readExpiry(anchor: string | undefined, rawSeconds: string | undefined): number | undefined {
  if (anchor === undefined && rawSeconds === undefined) return undefined;
  if (anchor !== 'created_at') throw badRequest(`expires_after[anchor]: expected "created_at"${anchor === undefined ? ' (missing)' : `, received "${anchor}"`}`);
  const n = rawSeconds === undefined ? NaN : Number(rawSeconds);
  if (!Number.isInteger(n) || n < MIN_EXPIRY || n > MAX_EXPIRY) throw badRequest(`expires_after[seconds]: expected an integer from ${MIN_EXPIRY} to ${MAX_EXPIRY}`);
  return n;
}
