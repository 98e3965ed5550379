import { Kysely, sql } from 'kysely';
import { PGlite } from '@electric-sql/pglite';
import { PGliteDialect } from 'kysely-pglite-dialect';
import { PostgresJSDialect } from 'kysely-postgres-js';
import postgres from 'postgres';
import { mkdirSync } from 'node:fs';
import type { DB } from './types.ts';

/**
 * One database handle for the conductor: Kysely for queries, plus the driver's multi-statement path for migrations
 * (PGlite `exec`, postgres.js `unsafe`). Embedded PGlite runs as the unprivileged role `svc_app`, like a server would.
 */
export interface Database {
  kind: 'pglite' | 'postgres';
  db: Kysely<DB>;
  /** Runs multi-statement SQL text inside a transaction holding the migration advisory lock. */
  execLocked(lockKey: number, fn: (exec: (text: string) => Promise<void>, query: <R>(text: string, params?: unknown[]) => Promise<R[]>) => Promise<void>): Promise<void>;
  /** LISTEN/NOTIFY on a server; undefined on the embedded database (one process, in-process hub). */
  listen?: (channel: string, onPayload: (payload: string) => void) => Promise<() => Promise<void>>;
  notify?: (channel: string, payload: string) => Promise<void>;
  close(): Promise<void>;
}

export const APP_ROLE = 'svc_app';

export async function openDatabase(opts: { url: string | undefined; dataDir: string }): Promise<Database> {
  if (opts.url && opts.url !== 'memory') return openPostgres(opts.url);
  return openPglite(opts.url === 'memory' ? undefined : `${opts.dataDir}/pgdata`);
}

async function openPglite(dir: string | undefined): Promise<Database> {
  if (dir) mkdirSync(dir, { recursive: true });
  const pg = new PGlite(dir);
  await pg.waitReady;
  // The embedded database is created by its superuser; the app itself acts as a plain role so RLS applies.
  await pg.exec(`
    DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${APP_ROLE}') THEN
        CREATE ROLE ${APP_ROLE} NOSUPERUSER NOBYPASSRLS NOCREATEROLE NOCREATEDB LOGIN;
      END IF;
    END $$;
    GRANT ALL ON SCHEMA public TO ${APP_ROLE};
    SET SESSION AUTHORIZATION ${APP_ROLE};
  `);
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pg) });
  let chain: Promise<unknown> = Promise.resolve();
  return {
    kind: 'pglite',
    db,
    async execLocked(_lockKey, fn) {
      // One process owns an embedded database; serialize within it.
      const run = chain.then(() =>
        pg.transaction(async (tx) => {
          await fn(
            async (text) => void (await tx.exec(text)),
            async (text, params) => (await tx.query(text, params)).rows as never[],
          );
        }),
      );
      chain = run.catch(() => {});
      await run;
    },
    async close() {
      await db.destroy();
    },
  };
}

async function openPostgres(url: string): Promise<Database> {
  const client = postgres(url, {
    max: 10,
    onnotice: () => {},
    connection: { application_name: 'svc' },
  });
  const db = new Kysely<DB>({ dialect: new PostgresJSDialect({ postgres: client }) });
  let listener: ReturnType<typeof postgres> | undefined;
  return {
    kind: 'postgres',
    db,
    async execLocked(lockKey, fn) {
      await client.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(${lockKey})`;
        await fn(
          async (text) => void (await tx.unsafe(text)),
          async (text, params) => (await tx.unsafe(text, (params ?? []) as never[])) as never[],
        );
      });
    },
    async listen(channel, onPayload) {
      listener ??= postgres(url, { max: 1, onnotice: () => {} });
      const sub = await listener.listen(channel, onPayload);
      return () => sub.unlisten();
    },
    async notify(channel, payload) {
      await sql`select pg_notify(${channel}, ${payload})`.execute(db);
    },
    async close() {
      // End with a timeout first: Kysely's destroy() ends the client without one, which waits forever on a connection
      // that a late query still holds. end() is memoised, so destroy() then shares this bounded end.
      await client.end({ timeout: 5 });
      await db.destroy();
      await listener?.end({ timeout: 5 });
    },
  };
}
