import { Hono } from 'hono';
import { doc } from '../../../shared/route-doc.ts';
import { badRequest } from '../../../shared/errors.ts';
import type { AgentsEnv } from '../context.ts';
import type { ResourceDeps } from '../deps.ts';
import { fileParts, isMultipart, readParts, textField } from '../multipart.ts';
import { readCursor } from '../../crud/index.ts';
import { binary } from '../binary.ts';
import { READ_ERRORS, WRITE_ERRORS } from '../wire.schema.ts';
import { FileDeleted, FileListQuery, FileObjectSchema, FilePage } from './files.schema.ts';
import { createFile, deleteFile, fileContent, FILE_PURPOSES, getFile, listFiles, type FilePurpose } from './files.service.ts';

const MIN_EXPIRY = 3600;
const MAX_EXPIRY = 2_592_000;

const DOCS = {
  upload: doc({
    summary: 'Upload a file',
    description: `A multipart/form-data upload: one \`file\` part, a \`purpose\` (${FILE_PURPOSES.join(', ')}), and optionally \`expires_after[anchor]=created_at\` with \`expires_after[seconds]\` (${MIN_EXPIRY} to ${MAX_EXPIRY}), after which the file is gone. The bytes are stored as sent and can be used in environments (\`file_id\`).`,
    form: {
      file: { description: 'The file: its bytes, with its name as the part\'s filename', file: true, required: true },
      purpose: { description: `What the file is for: ${FILE_PURPOSES.join(', ')}`, required: true },
      'expires_after[anchor]': { description: '`created_at`: the file expires that many seconds after its upload' },
      'expires_after[seconds]': { description: `Seconds until the file expires (${MIN_EXPIRY} to ${MAX_EXPIRY})` },
    },
    response: FileObjectSchema,
    errors: [...WRITE_ERRORS, 413],
  }),
  list: doc({ summary: 'List files', description: 'The files of the organisation that have not expired, newest first by default; `purpose` keeps one purpose.', query: FileListQuery, response: FilePage, errors: READ_ERRORS }),
  get: doc({ summary: 'Get a file', description: 'The file object: name, size, purpose and, when it expires, when.', response: FileObjectSchema, errors: READ_ERRORS }),
  delete: doc({ summary: 'Delete a file', description: 'Deletes the file; environments that copied it keep their copy.', response: FileDeleted, errors: WRITE_ERRORS }),
  content: doc({ summary: "Download a file's content", description: 'The bytes of the file, as uploaded.', responds: 'application/octet-stream', errors: READ_ERRORS }),
};

/** Routes 43–47: `POST|GET /files`, `GET|DELETE /files/{file_id}`, `GET /files/{file_id}/content` (no beta header). */
export function filesRoutes(deps: ResourceDeps): Hono<AgentsEnv> {
  return new Hono<AgentsEnv>()
    .post('/', DOCS.upload, async (c) => {
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
    .get('/', DOCS.list, async (c) => {
      const purpose = c.req.query('purpose') || undefined;
      return c.json(await listFiles(deps.db, c.get('principal').tenantId, readCursor(c), purpose));
    })
    .get('/:file_id', DOCS.get, async (c) => c.json(await getFile(deps.db, c.get('principal').tenantId, c.req.param('file_id'))))
    .delete('/:file_id', DOCS.delete, async (c) => c.json(await deleteFile(deps.db, c.get('principal').tenantId, c.req.param('file_id'))))
    .get('/:file_id/content', DOCS.content, async (c) => {
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
