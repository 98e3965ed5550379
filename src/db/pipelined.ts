import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, type TransactionSettings } from 'kysely';
import { PostgresJSDialect } from 'kysely-postgres-js';
import { decodeValue, encodeValue } from './storable.ts';

/**
 * Kysely over postgres.js with a transaction's prelude pipelined: `begin` and the scope's `select set_config('app.…')`
 * (tenant.ts) are not sent on their own but written to the socket together with the transaction's first real
 * statement, in order, on the transaction's one connection (postgres.js pipelines queries on a connection). A scoped
 * transaction thus takes one round trip fewer per step: begin + scope + first statement in one, commit in another,
 * against four before. The statements and their order are unchanged, so row security holds exactly as before: the
 * first statement runs after the scope is set, inside the transaction. If the begin or the scope fails, the statement
 * behind it fails too (aborted transaction), and the first error is what the caller sees. A transaction that sent
 * nothing but its prelude sends nothing at all.
 *
 * A transaction that knows its last statement says so with COMMIT_WITH_NEXT before it (tenant.ts `commitWithNext`,
 * `withTenantStatement`): its commit goes out with that statement, one round trip fewer (a transaction of one statement
 * is then one write and one round trip). A statement that fails makes PostgreSQL answer that COMMIT with a rollback; a
 * COMMIT that fails is the caller's error. A statement after that one is refused (it would run outside the transaction
 * and its scope).
 *
 * A statement whose answer nobody reads (an insert or update whose result the caller ignores) can ride along too: with
 * SEND_WITH_NEXT before it (tenant.ts `sendWithNext`) it is held, answered as empty at once, and written in order with
 * the transaction's next statement (or its commit). If it fails, the statements behind it fail too (aborted
 * transaction) and its error is what the caller sees there: the transaction rolls back as if that one had failed.
 *
 * What rides along in another statement's write carries PIPELINED in its text, so PostgreSQL's statement log tells the
 * statements that waited on an answer (round trips) from those that did not (bench/run-sql.ts counts them so).
 *
 * Every statement's parameters and rows also pass the storage encoding here (storable.ts): what PostgreSQL cannot hold
 * (NUL, lone surrogates) goes in escaped and comes back as it was, whoever sent the statement (Kysely, or the job
 * queue inside a caller's transaction).
 */
export class PipelinedPostgresJSDialect extends PostgresJSDialect {
  override createDriver(): Driver {
    return new PipelinedDriver(super.createDriver());
  }
}

/** A marker, never sent: the transaction's next statement is its last, and its commit goes out with it. */
export const COMMIT_WITH_NEXT = '/* svc: commit with the next statement */';

/** A marker, never sent: the transaction's next statement is held and written with the one after it. */
export const SEND_WITH_NEXT = '/* svc: send with the next statement */';

/** In the text of a statement written with another one, its answer not waited on by itself (see above). */
export const PIPELINED = '/* svc: pipelined */';

const riding = (query: CompiledQuery): CompiledQuery => ({ ...query, sql: `${query.sql} ${PIPELINED}` });

/** The scope statements of tenant.ts: `select set_config('app.<name>', $1 | 'on', true)`. */
const SCOPE = /^select set_config\('app\.[a-z_]+', (?:\$1|'on'), true\)$/;

class PipelinedConnection implements DatabaseConnection {
  readonly inner: DatabaseConnection;
  /** Queries held back to go with the next one: the deferred `begin`, then the scope. */
  private prelude: CompiledQuery[] = [];
  /** Statements held back (SEND_WITH_NEXT) to go with the next one, after the prelude. */
  private held: CompiledQuery[] = [];
  private commitWithNext = false;
  private holdNext = false;
  /** The transaction's commit has been sent (COMMIT_WITH_NEXT): nothing more belongs to it. */
  ended = false;

  constructor(inner: DatabaseConnection) {
    this.inner = inner;
  }

  deferBegin(): void {
    this.prelude = [CompiledQuery.raw(`begin ${PIPELINED}`)];
  }

  /** True when the transaction has sent nothing and holds nothing to send; the prelude is dropped. */
  dropPrelude(): boolean {
    const had = this.prelude.length > 0 && this.held.length === 0;
    if (had) this.prelude = [];
    return had;
  }

  /** Forgets whatever was not sent (a rollback, a released connection); true when the transaction sent nothing. */
  dropUnsent(): boolean {
    const unsent = this.prelude.length > 0;
    this.prelude = [];
    this.held = [];
    this.holdNext = false;
    this.commitWithNext = false;
    return unsent;
  }

  /** Sends what is held with the commit, in one write. False when nothing is held (the caller commits as usual). */
  async commitHeld(): Promise<boolean> {
    if (this.held.length === 0) return false;
    this.commitWithNext = true;
    const last = this.held.pop()!;
    await this.send({ ...last, sql: last.sql.slice(0, -PIPELINED.length - 1) });
    return true;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.ended) throw new Error("a statement after the one its transaction's commit went out with");
    if (query.sql === COMMIT_WITH_NEXT) {
      this.commitWithNext = true;
      return { rows: [] };
    }
    if (query.sql === SEND_WITH_NEXT) {
      this.holdNext = true;
      return { rows: [] };
    }
    if (this.holdNext && !this.commitWithNext) {
      this.holdNext = false;
      this.held.push(riding(encodeQuery(query)));
      return { rows: [] };
    }
    this.holdNext = false;
    return decodeResult(await this.send<R>(encodeQuery(query)));
  }

  private async send<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.prelude.length === 0 && this.held.length === 0 && !this.commitWithNext) return this.inner.executeQuery<R>(query);
    if (this.prelude.length > 0 && this.held.length === 0 && SCOPE.test(query.sql)) {
      this.prelude.push(riding(query));
      return { rows: [] };
    }
    const queries = [...this.prelude.splice(0), ...this.held.splice(0), query];
    const last = this.commitWithNext;
    if (last) {
      queries.push(CompiledQuery.raw(`commit ${PIPELINED}`));
      this.ended = true;
    }
    // all written now, answered in order; every promise is awaited, so none rejects unhandled
    const settled = await Promise.allSettled(queries.map((q) => this.inner.executeQuery<R>(q)));
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    return (settled.at(last ? -2 : -1) as PromiseFulfilledResult<QueryResult<R>>).value;
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (this.ended) throw new Error("a statement after the one its transaction's commit went out with");
    this.holdNext = false;
    const before = [...this.prelude.splice(0), ...this.held.splice(0)];
    for (const q of before) await this.inner.executeQuery(q);
    for await (const chunk of this.inner.streamQuery<R>(encodeQuery(query), chunkSize)) yield decodeResult(chunk);
  }
}

function encodeQuery(query: CompiledQuery): CompiledQuery {
  const parameters = encodeValue(query.parameters);
  return parameters === query.parameters ? query : { ...query, parameters };
}

function decodeResult<R>(result: QueryResult<R>): QueryResult<R> {
  const rows = decodeValue(result.rows);
  return rows === result.rows ? result : { ...result, rows };
}

class PipelinedDriver implements Driver {
  readonly #inner: Driver;

  constructor(inner: Driver) {
    this.#inner = inner;
  }

  init(...args: Parameters<Driver['init']>) {
    return this.#inner.init(...args);
  }

  async acquireConnection(...args: Parameters<Driver['acquireConnection']>): Promise<DatabaseConnection> {
    return new PipelinedConnection(await this.#inner.acquireConnection(...args));
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as PipelinedConnection;
    if (settings.isolationLevel || settings.accessMode) return this.#inner.beginTransaction(c.inner, settings);
    c.deferBegin();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as PipelinedConnection;
    if (c.dropPrelude()) return; // nothing was sent: there is nothing to commit
    if (c.ended) return; // committed with its one statement
    if (await c.commitHeld()) return; // the statements held went with the commit
    return this.#inner.commitTransaction(c.inner);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as PipelinedConnection;
    if (c.dropUnsent()) return;
    if (c.ended) return; // its commit went out already (a failed statement made it a rollback)
    // Sent here, not through Kysely's PostgresDriver.rollbackTransaction: when the rollback fails (the backend died)
    // that one marks the connection for discard through a method of Kysely's own connection class, which a
    // postgres.js connection does not have, and the caller got that TypeError instead of the database's error.
    await c.inner.executeQuery(CompiledQuery.raw('rollback'));
  }

  savepoint(connection: DatabaseConnection, ...rest: [string, Parameters<NonNullable<Driver['savepoint']>>[2]]): Promise<void> {
    return this.#inner.savepoint!(connection, ...rest);
  }

  rollbackToSavepoint(connection: DatabaseConnection, ...rest: [string, Parameters<NonNullable<Driver['rollbackToSavepoint']>>[2]]): Promise<void> {
    return this.#inner.rollbackToSavepoint!(connection, ...rest);
  }

  releaseSavepoint(connection: DatabaseConnection, ...rest: [string, Parameters<NonNullable<Driver['releaseSavepoint']>>[2]]): Promise<void> {
    return this.#inner.releaseSavepoint!(connection, ...rest);
  }

  releaseConnection(connection: DatabaseConnection, ...rest: [Parameters<Driver['releaseConnection']>[1]?]): Promise<void> {
    const c = connection as PipelinedConnection;
    c.dropUnsent();
    return this.#inner.releaseConnection(c.inner, ...rest);
  }

  destroy(...args: Parameters<Driver['destroy']>) {
    return this.#inner.destroy(...args);
  }
}
