import { Kysely, sql } from 'kysely';
import postgres from 'postgres';
import { createLogger } from '../shared/log.ts';
import { PipelinedPostgresJSDialect } from './pipelined.ts';
import { startCluster, type EmbeddedCluster } from './embedded/index.ts';
import type { DB } from './types.ts';

/**
 * One database handle for the conductor: Kysely over postgres.js, the driver's multi-statement path for migrations,
 * and LISTEN/NOTIFY. The same engine everywhere: a PostgreSQL server (`DATABASE_URL=postgres://…`) or the embedded
 * cluster svc starts itself (unset: `<SVC_DATA_DIR>/pg`; `memory`: a throwaway one). Either way the app connects as
 * an unprivileged role (`svc_app` on the embedded cluster), so row-level security applies.
 */
export interface Database {
  db: Kysely<DB>;
  /** The embedded cluster, when svc started one (undefined on a server). */
  embedded: EmbeddedCluster | undefined;
  /**
   * Aborted (its reason an Error naming the cause) once the database is gone for good: a throwaway cluster
   * (`DATABASE_URL=memory`) whose PostgreSQL died, taking recent commits with it. Writes stop retrying then, and the
   * server stops. Never aborted for a server or a cluster on disk, which come back with every commit.
   */
  lost: AbortSignal;
  /** Runs multi-statement SQL text inside a transaction holding the migration advisory lock. */
  execLocked(lockKey: number, fn: (exec: (text: string) => Promise<void>, query: <R>(text: string, params?: unknown[]) => Promise<R[]>) => Promise<void>): Promise<void>;
  /**
   * SQL text from a library that brings its own (the job queue): with `values`, one parameterised statement; without,
   * any number of statements on one connection, its own BEGIN…COMMIT included. Several statements answer an array of
   * row arrays (postgres.js gives one to each statement that answers rows or a count: BEGIN and COMMIT get none).
   * It has connections of its own (up to 3), apart from the pool behind `db`.
   */
  executeText(text: string, values?: readonly unknown[]): Promise<Array<Record<string, unknown>> | Array<Array<Record<string, unknown>>>>;
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

export { APP_ROLE } from './embedded/index.ts';

export interface OpenOptions {
  /** DATABASE_URL: undefined (embedded under dataDir), 'memory' (throwaway embedded) or a postgres:// URL. */
  url: string | undefined;
  dataDir: string;
  /** The embedded cluster's OS user when svc is root, and setting overrides (SVC_PG_OS_USER, SVC_PG_SETTINGS). */
  embedded?: { osUser: string; settings: readonly string[] };
  /**
   * What a new embedded cluster starts with (asked for only when one is created): `key` names it exactly, `install`
   * puts it in. It is baked once into the template the cluster is copied from, so a first boot has nothing to migrate.
   */
  schema?: () => Promise<DatabaseSchema>;
  /** Called once an embedded cluster's postmaster is spawned (at once on a server, where there is none). */
  onLaunch?(): void;
}

export interface DatabaseSchema {
  key: string;
  install(database: Database): Promise<void>;
}

type Connection = string | postgres.Options<Record<string, never>>;

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  if (opts.url && opts.url !== 'memory') {
    opts.onLaunch?.();
    return openPostgres(connectionOf(opts.url), undefined);
  }
  const cluster = await startCluster({
    dataDir: opts.url === 'memory' ? undefined : opts.dataDir,
    osUser: opts.embedded?.osUser ?? 'nobody',
    settings: opts.embedded?.settings ?? [],
    schema: opts.schema && (async () => {
      const schema = await opts.schema!();
      return {
        key: schema.key,
        async install(connection) {
          const database = openPostgres(connection, undefined);
          try {
            await schema.install(database);
          } finally {
            await database.close();
          }
        },
      };
    }),
    onLaunch: opts.onLaunch,
    log: createLogger('db'),
  });
  return openPostgres(cluster.connection(), cluster);
}

/**
 * postgres.js reads the socket folder only from its `host` option, while libpq (psql, pg_dump) spells it
 * `?host=/folder` in a URL, as `svc db url` prints it: such a URL is taken apart here.
 */
export function connectionOf(url: string): Connection {
  const u = new URL(url);
  const host = u.searchParams.get('host');
  if (!host?.startsWith('/')) return url;
  const user = u.searchParams.get('user') ?? decodeURIComponent(u.username);
  return {
    host,
    port: Number(u.searchParams.get('port') ?? (u.port || 5432)),
    user,
    password: u.searchParams.get('password') ?? (decodeURIComponent(u.password) || undefined),
    database: decodeURIComponent(u.pathname.slice(1)) || user,
  };
}

function openPostgres(connection: Connection, embedded: EmbeddedCluster | undefined): Database {
  const options = { onnotice: () => {}, connection: { application_name: 'svc' } } as const;
  const connect = (max: number) => (typeof connection === 'string' ? postgres(connection, { ...options, max }) : postgres({ ...connection, ...options, max }));
  const client = connect(10);
  const db = new Kysely<DB>({ dialect: new PipelinedPostgresJSDialect({ postgres: client }) });
  let listener: ReturnType<typeof postgres> | undefined;
  // The job queue's own connections (executeText is its driver): its start and polling never wait behind the app's
  // pool, whose transactions may be waiting for the queue (a run that ends while the queue is still starting).
  let queue: ReturnType<typeof postgres> | undefined;
  const lost = embedded?.lost ?? new AbortController().signal;
  return {
    db,
    embedded,
    lost,
    async execLocked(lockKey, fn) {
      await client.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(${lockKey})`;
        await fn(
          async (text) => void (await tx.unsafe(text)),
          async (text, params) => (await tx.unsafe(text, (params ?? []) as never[])) as never[],
        );
      });
    },
    async executeText(text, values) {
      queue ??= connect(3);
      if (values?.length) return [...(await queue.unsafe(text, values as never[]))];
      // postgres.js refuses a BEGIN on a pooled connection it may hand to someone else mid-transaction: reserve one.
      const reserved = await queue.reserve();
      try {
        const result = (await reserved.unsafe(text).catch(async (err) => {
          // A script that failed between its BEGIN and COMMIT leaves the transaction open and aborted: end it before
          // the connection serves anyone else (a harmless notice when there was none). Only when PostgreSQL refused
          // it: a connection that broke has no transaction left.
          if (err instanceof postgres.PostgresError) await reserved.unsafe('ROLLBACK').catch(() => {});
          throw err;
        })) as unknown as Array<Record<string, unknown>> | Array<Array<Record<string, unknown>>>;
        return result.length > 0 && result.every(Array.isArray) ? (result as Array<Array<Record<string, unknown>>>).map((r) => [...r]) : [...(result as Array<Record<string, unknown>>)];
      } finally {
        reserved.release();
      }
    },
    async listen(channel, onPayload) {
      listener ??= connect(1);
      const sub = await listener.listen(channel, onPayload);
      return () => sub.unlisten();
    },
    async notify(channel, payload) {
      await sql`select pg_notify(${channel}, ${payload})`.execute(db);
    },
    async close() {
      try {
        // End with a timeout first: Kysely's destroy() ends the client without one, which waits forever on a
        // connection that a late query still holds. end() is memoised, so destroy() then shares this bounded end.
        // A database lost for good answers no late query: nothing to wait for.
        const timeout = lost.aborted ? 0 : 5;
        await client.end({ timeout });
        await db.destroy();
        await listener?.end({ timeout });
        await queue?.end({ timeout });
      } finally {
        await embedded?.stop();
      }
    },
  };
}
