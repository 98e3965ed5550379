import { sql, type Compilable, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { announceRead, COMMIT_WITH_NEXT, SEND_WITH_NEXT } from './pipelined.ts';
import type { DB } from './types.ts';

/**
 * Tenant-scoped transactions: every query on a tenant table runs inside one, with the per-transaction setting
 * `app.tenant_id` that the row-level security policies read. A query that forgets its tenant filter still only
 * sees the tenant's rows.
 */
export type Tx = Transaction<DB>;

export async function withTenant<T>(db: Kysely<DB>, tenantId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    await sql`select set_config('app.tenant_id', ${tenantId}, true)`.execute(tx);
    return fn(tx);
  });
}

/**
 * withTenant for a transaction of exactly one statement (`fn` sends one and nothing after it): begin, scope, the
 * statement and commit go out in one write (pipelined.ts COMMIT_WITH_NEXT), one round trip instead of two. A second
 * statement is refused. Row security holds as in withTenant: the statement runs inside the transaction, after the scope.
 */
export async function withTenantStatement<T>(db: Kysely<DB>, tenantId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    await sql`select set_config('app.tenant_id', ${tenantId}, true)`.execute(tx);
    await commitWithNext(tx);
    return fn(tx);
  });
}

/**
 * The transaction's next statement is its last: its commit goes out with it (pipelined.ts COMMIT_WITH_NEXT), one round
 * trip fewer. Only where nothing after that statement could want the transaction rolled back: once it is answered,
 * the transaction has committed (or, if it failed, rolled back), and another statement is refused.
 */
export async function commitWithNext(tx: Tx): Promise<void> {
  await sql.raw(COMMIT_WITH_NEXT).execute(tx);
}

/**
 * The transaction's next statement is held and written with the one after it (or with the commit), one round trip
 * fewer (pipelined.ts SEND_WITH_NEXT): only for a statement whose answer nobody reads, as it is answered as empty at
 * once. If it fails, the statement after it fails with its error and the transaction rolls back.
 */
export async function sendWithNext(tx: Tx): Promise<void> {
  await sql.raw(SEND_WITH_NEXT).execute(tx);
}

/**
 * A read held to go in one write with the transaction's next statement (pipelined.ts READ_WITH_NEXT): its rows come
 * with that statement's answer. Send that statement, or end the transaction, before awaiting `rows`; a read whose
 * transaction failed rejects (nothing need await it then).
 */
export async function readWithNext<R>(tx: Tx, query: Compilable<R> | RawBuilder<R>): Promise<{ rows: Promise<R[]> }> {
  let resolve!: (rows: R[]) => void;
  let reject!: (err: unknown) => void;
  const rows = new Promise<R[]>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  rows.catch(() => {}); // its transaction failed: the caller saw that error already
  await sql.raw(announceRead({ resolve: (r) => resolve(r.rows as R[]), reject })).execute(tx);
  await ('isRawBuilder' in query ? query.execute(tx) : tx.executeQuery(query));
  return { rows };
}

/** Operator scope: the tenants table is readable across tenants (operator routes only). */
export async function withOperator<T>(db: Kysely<DB>, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    await sql`select set_config('app.operator', 'on', true)`.execute(tx);
    return fn(tx);
  });
}

/**
 * System scope for the conductor's own background work across tenants (reconcile loop, orphaned-run sweep). Never
 * used on a request path.
 */
export async function withSystem<T>(db: Kysely<DB>, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    await sql`select set_config('app.system', 'on', true)`.execute(tx);
    return fn(tx);
  });
}

/** Key lookup scope: exactly the api_keys row with this hash is visible, before the tenant is known. */
export async function withKeyLookup<T>(db: Kysely<DB>, keyHash: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    await sql`select set_config('app.key_hash', ${keyHash}, true)`.execute(tx);
    return fn(tx);
  });
}

/** Refuses to run as a role that would bypass row-level security. */
export async function assertUnprivilegedRole(db: Kysely<DB>): Promise<void> {
  const { rows } = await sql<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean }>`
    select rolname, rolsuper, rolbypassrls from pg_roles where rolname = current_user`.execute(db);
  const role = rows[0];
  if (role && (role.rolsuper || role.rolbypassrls)) {
    throw new PrivilegedRoleError(role.rolname, role.rolsuper ? 'SUPERUSER' : 'BYPASSRLS');
  }
}

export class PrivilegedRoleError extends Error {
  readonly role: string;
  constructor(role: string, attribute: string) {
    super(
      `database role "${role}" has ${attribute}, which bypasses row-level security; refusing to start. ` +
        `Connect as a plain role instead: run \`svc db init --admin-url postgres://<superuser>@<host>/postgres\` ` +
        `to create one and print its DATABASE_URL, or ALTER ROLE ${role} NOSUPERUSER NOBYPASSRLS.`,
    );
    this.name = 'PrivilegedRoleError';
    this.role = role;
  }
}
