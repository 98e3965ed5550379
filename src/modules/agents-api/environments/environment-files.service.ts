import { withTenant } from '../../../db/index.ts';
import { badRequest } from '../../../shared/errors.ts';
import type { ResourceDeps } from '../deps.ts';
import { readFileContent } from '../files/files.service.ts';
import { decodeBase64, isInside, normalizeAbsolute } from '../validation.ts';
import { findEnvironment, writeFile } from './environments.service.ts';
import { environmentFileSizes } from './environments.repo.ts';

/**
 * Files of an environment's workspace (routes 27–28). An added file is stored here and written into the session's
 * sandbox before its next turn. Listing is a token page (spec §4.2): `next` is an opaque
 * token the SDK sends back as `page`; order is by case-sensitive path components (`/w/a/b` before `/w/a-b`),
 * `desc` by default; `path` restricts the listing to one directory and everything below it.
 */
export interface EnvironmentFile {
  environment_id: string;
  object: 'agent.environment.file';
  path: string;
  size_bytes: number;
}

export interface TokenPage<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next: string | null;
}

export type FileInput = { type: 'inline'; path: string; data: string } | { type: 'file_id'; path: string; file_id: string };

export async function addEnvironmentFile(deps: ResourceDeps, tenantId: string, environmentId: string, input: FileInput): Promise<EnvironmentFile> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const env = await findEnvironment(tx, environmentId);
    // a file added now reaches the session's sandbox before its next turn (workspace-sync.ts), even while the
    // environment is still pending (not set up yet) or disconnected (its runner is back by then, or the turn says so)
    if (env.status === 'failed' || env.status === 'expired') throw badRequest(`environment_id: environment ${environmentId} is ${env.status}; its session can no longer run, so files can no longer be added`, 'environment_not_connected');
    const path = normalizeAbsolute(input.path);
    if (!path || !isInside(path, env.workspace_directory)) throw badRequest(`path: expected an absolute path inside ${env.workspace_directory}`);
    let content: Uint8Array;
    if (input.type === 'inline') content = decodeBase64(input.data);
    else {
      const file = await readFileContent(tx, input.file_id);
      if (!file) throw badRequest(`file_id: No such File object: ${input.file_id}`);
      content = file.content;
    }
    await writeFile(tx, tenantId, environmentId, path, content, input.type === 'file_id' ? input.file_id : null);
    return { environment_id: environmentId, object: 'agent.environment.file', path, size_bytes: content.byteLength };
  });
}

export async function listEnvironmentFiles(
  deps: ResourceDeps,
  tenantId: string,
  environmentId: string,
  q: { page: string | undefined; limit: number; order: 'asc' | 'desc'; path: string | undefined },
): Promise<TokenPage<EnvironmentFile>> {
  const dir = q.path === undefined ? undefined : normalizeAbsolute(q.path);
  if (q.path !== undefined && dir === undefined) throw badRequest('path: expected an absolute workspace directory');
  const after = q.page === undefined ? undefined : decodeToken(q.page);
  const rows = await withTenant(deps.db, tenantId, async (tx) => {
    await findEnvironment(tx, environmentId);
    return environmentFileSizes(tx, environmentId);
  });
  const sign = q.order === 'asc' ? 1 : -1;
  const sorted = rows.filter((r) => dir === undefined || isInside(r.path, dir)).sort((a, b) => sign * comparePaths(a.path, b.path));
  const rest = after === undefined ? sorted : sorted.filter((r) => sign * comparePaths(r.path, after) > 0);
  const data = rest.slice(0, q.limit).map((r): EnvironmentFile => ({ environment_id: environmentId, object: 'agent.environment.file', path: r.path, size_bytes: r.size_bytes }));
  const hasMore = rest.length > q.limit;
  return { object: 'list', data, has_more: hasMore, next: hasMore ? encodeToken(data[data.length - 1].path) : null };
}

/** Case-sensitive comparison by path components (UTF-16 code units), a parent before its children. */
export function comparePaths(a: string, b: string): number {
  const pa = a.split('/');
  const pb = b.split('/');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] !== pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return pa.length - pb.length;
}

function encodeToken(path: string): string {
  return Buffer.from(JSON.stringify({ after: path }), 'utf8').toString('base64url');
}

function decodeToken(token: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof parsed.after === 'string') return parsed.after;
  } catch {
    // fall through
  }
  throw badRequest('page: not a page token returned by this list');
}
