import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APP_DATABASE, APP_ROLE } from './template.ts';

/**
 * Where an embedded cluster lives and how it is reached: no TCP port at all, only a unix socket in a folder that
 * only the cluster's OS user (and root) may enter, so other local users cannot connect even though the cluster
 * trusts local connections. svc, `psql` and `pg_dump` connect with `svc db url`.
 */
export const PORT = 5432;

/** The persistent cluster of a data folder. */
export function clusterDir(dataDir: string): string {
  return join(dataDir, 'pg');
}

/**
 * The socket goes into the cluster folder itself, unless that path is too long for a unix socket address (about
 * 100 bytes); then into a folder in the temporary folder named after the cluster, the same on every start.
 */
export function socketDirFor(dir: string): string {
  if (Buffer.byteLength(`${dir}/.s.PGSQL.${PORT}`) <= 100) return dir;
  return join(tmpdir(), `svc-pg-sock-${createHash('sha256').update(dir).digest('hex').slice(0, 16)}`);
}

/** A connection string libpq (psql, pg_dump) and svc's own DATABASE_URL parser both read. */
export function socketUrl(socketDir: string, user = APP_ROLE, database = APP_DATABASE): string {
  const host = encodeURIComponent(socketDir).replace(/%2F/gi, '/');
  return `postgresql:///${database}?host=${host}&port=${PORT}&user=${user}`;
}
