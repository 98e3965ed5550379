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
 * A read can ride along the same way and still be answered (tenant.ts `readWithNext`): it is held like the above, and
 * its answer comes, as a promise, with the write of the next statement. The caller must send that statement (or end
 * the transaction) before it awaits the answer.
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

/** The marker of a held read: READ_WITH_NEXT followed by the read's number in `reads`. */
export const READ_WITH_NEXT = '/* svc: read with the next statement ';
const READ_MARK = /^\/\* svc: read with the next statement (\d+) \*\/$/;

interface Read {
  resolve(result: QueryResult<unknown>): void;
  reject(err: unknown): void;
}

/** Reads announced (tenant.ts readWithNext) and not yet held, by number: the marker statement names one. */
const reads = new Map<number, Read>();
let lastRead = 0;

/** Announces a held read; the marker to send before its statement. */
export function announceRead(read: Read): string {
  const n = ++lastRead;
  reads.set(n, read);
  return `${READ_WITH_NEXT}${n} */`;
}

interface Held {
  query: CompiledQuery;
  read?: Read;
}

const riding = (query: CompiledQuery): CompiledQuery => ({ ...query, sql: `${query.sql} ${PIPELINED}` });

/** The scope statements of tenant.ts: `select set_config('app.<name>', $1 | 'on', true)`. */
const SCOPE = /^select set_config\('app\.[a-z_]+', (?:\$1|'on'), true\)$/;

class PipelinedConnection implements DatabaseConnection {
  readonly inner: DatabaseConnection;
  /** Queries held back to go with the next one: the deferred `begin`, then the scope. */
  private prelude: CompiledQuery[] = [];
  /** Statements held back (SEND_WITH_NEXT, READ_WITH_NEXT) to go with the next one, after the prelude. */
  private held: Held[] = [];
  private commitWithNext = false;
  /** The next statement is held: true, or the read that answers it. */
  private holdNext: boolean | Read = false;
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
    for (const h of this.held) h.read?.reject(new Error('its transaction ended before the read was sent'));
    if (typeof this.holdNext === 'object') this.holdNext.reject(new Error('its transaction ended before the read was sent'));
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
    await this.write(undefined);
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
    const mark = query.sql.startsWith(READ_WITH_NEXT) ? READ_MARK.exec(query.sql) : null;
    if (mark) {
      const read = reads.get(Number(mark[1]));
      reads.delete(Number(mark[1]));
      if (!read) throw new Error('a held read announced twice');
      this.holdNext = read;
      return { rows: [] };
    }
    const hold = this.holdNext;
    this.holdNext = false;
    if (hold !== false && !this.commitWithNext) {
      this.held.push({ query: riding(encodeQuery(query)), ...(hold === true ? {} : { read: hold }) });
      return { rows: [] };
    }
    try {
      const result = decodeResult(await this.send<R>(encodeQuery(query)));
      if (typeof hold === 'object') hold.resolve(result); // a read held as the last statement: answered now
      return result;
    } catch (err) {
      if (typeof hold === 'object') hold.reject(err);
      throw err;
    }
  }

  private async send<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.prelude.length === 0 && this.held.length === 0 && !this.commitWithNext) return this.inner.executeQuery<R>(query);
    if (this.prelude.length > 0 && this.held.length === 0 && SCOPE.test(query.sql)) {
      this.prelude.push(riding(query));
      return { rows: [] };
    }
    return (await this.write<R>(query))!;
  }

  /**
   * One write: the prelude, what is held, `query` and, when the commit goes with it, the commit; the answer of `query`.
   * Without `query`, the commit is the statement waited on (the log counts it so).
   */
  private async write<R>(query: CompiledQuery | undefined): Promise<QueryResult<R> | undefined> {
    const held = this.held.splice(0);
    const queries = [...this.prelude.splice(0), ...held.map((h) => h.query)];
    const first = queries.length - held.length;
    const at = queries.length;
    if (query) queries.push(query);
    const last = this.commitWithNext;
    if (last) {
      queries.push(CompiledQuery.raw(query ? `commit ${PIPELINED}` : 'commit'));
      this.ended = true;
    }
    // all written now, answered in order; every promise is awaited, so none rejects unhandled
    const settled = await Promise.allSettled(queries.map((q) => this.inner.executeQuery<R>(q)));
    held.forEach((h, i) => {
      const s = settled[first + i];
      if (s.status === 'fulfilled') h.read?.resolve(decodeResult(s.value));
      else h.read?.reject(s.reason);
    });
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    return query ? (settled[at] as PromiseFulfilledResult<QueryResult<R>>).value : undefined;
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (this.ended) throw new Error("a statement after the one its transaction's commit went out with");
    if (this.held.length > 0 || this.holdNext !== false) throw new Error('a streamed statement after a held one');
    const prelude = this.prelude.splice(0);
    for (const q of prelude) await this.inner.executeQuery(q);
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
