// The PostgreSQL connection pool (node-postgres) and the one way the store
// writes queries: tagged templates whose values are sent as parameters.
//
// Why node-postgres: a pg Client is one connection for its whole life. When
// the server ends it (a restart, a failover, pg_terminate_backend), every
// query on it fails, the pool drops it, and nothing is ever sent again on
// that session; a transaction cannot go on, half of it, on a new one. Queries
// are pipelined (sent without waiting for the previous answer), as the writer
// sends its bulk statements.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { NoAnswer } from './errors.js';

/** Text inlined into a query as written (a column list, a collation), or a part with its own values. */
export class Fragment {
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}
}

/** SQL text written by the program, never a value: inlined as is. */
export const raw = (text: string): Fragment => new Fragment([text], []);

/** A part of a query with values of its own, for another query to include. */
export const fragment = (strings: TemplateStringsArray, ...values: unknown[]): Fragment => new Fragment(strings, values);

/** Rows as an array, and how many rows the statement touched (an UPDATE's or DELETE's count). */
export type Rows<T> = T & { count: number };

export type Row = Record<string, unknown>;

/** Runs statements: on the pool (any free connection), or on one connection (a transaction, a reserved session). */
export interface Sql {
  <T extends readonly unknown[] = Row[]>(strings: TemplateStringsArray, ...values: unknown[]): Promise<Rows<T>>;
  /** A statement written as text with $1… placeholders. */
  unsafe<T extends readonly unknown[] = Row[]>(text: string, params?: readonly unknown[]): Promise<Rows<T>>;
}

export interface SqlPool extends Sql {
  /** Runs `body` in a transaction on one connection: committed when it resolves, rolled back when it throws. */
  begin<T>(body: (tx: Sql) => Promise<T>): Promise<T>;
  /** Runs `body` on one connection held for it (session-level locks), then gives the connection back. */
  reserve<T>(body: (session: Sql) => Promise<T>): Promise<T>;
  /** SELECT 1; rejects with NoAnswer when no answer came within `ms` (no connection free, or none answering). */
  ping(ms: number): Promise<void>;
  /** Closes every connection; queries in flight finish first, or fail after CLOSE_GRACE_MS. */
  end(): Promise<void>;
  /** The node-postgres pool, for drizzle. */
  readonly pool: pg.Pool;
}

/** Times, sums and ids are bigint in the schema; every one is far below 2^53, so they are read as numbers (sums over them too). */
const BIGINT_ARRAY = 1016;
// node-postgres' parsers are the module's (drizzle reads through them too): this store is their one user in the process.
pg.types.setTypeParser(pg.types.builtins.INT8, Number);
pg.types.setTypeParser(pg.types.builtins.NUMERIC, Number);
// '{1,NULL,3}': digits, signs and NULL only.
pg.types.setTypeParser(BIGINT_ARRAY as never, (text: string) => (text === '{}' ? [] : text.slice(1, -1).split(',').map((v) => (v === 'NULL' ? null : Number(v)))));

/** The text with $n placeholders and the values of a template, fragments flattened. */
function compile(strings: readonly string[], values: readonly unknown[]): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const build = (parts: readonly string[], args: readonly unknown[]): string => {
    let text = parts[0]!;
    args.forEach((value, i) => {
      if (value instanceof Fragment) text += build(value.strings, value.values);
      else {
        params.push(value);
        text += `$${params.length}`;
      }
      text += parts[i + 1]!;
    });
    return text;
  };
  return { text: build(strings, values), params };
}

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** Distinct statement texts the store sends (a few hundred): each is parsed once per connection past this. */
const NAMES_MAX = 2_000;
const names = new Map<string, string>();

/** The prepared statement's name of a text, or undefined (parsed at each send) once NAMES_MAX texts have names. */
function nameOf(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < NAMES_MAX) {
    name = `cb_${createHash('sha1').update(text).digest('hex')}`;
    names.set(text, name);
  }
  return name;
}

/** Sends one statement, prepared once per connection; `deadlineMs` replaces STATEMENT_DEADLINE_MS. */
function run<T>(on: Queryable, text: string, params: readonly unknown[], deadlineMs?: number): Promise<Rows<T>> {
  const config = { text, name: nameOf(text), ...(deadlineMs === undefined ? {} : { query_timeout: deadlineMs }) } as pg.QueryConfig;
  const result = on.query(config, params as unknown[]).then((r) => Object.assign(r.rows, { count: r.rowCount ?? 0 }) as unknown as Rows<T>);
  // A statement sent beside others (Promise.all) may fail before its caller awaits it: the caller still sees the
  // rejection, and the process does not take it for an unhandled one.
  result.catch(() => {});
  return result;
}

/**
 * Statements on `on`. Those of a transaction or reserved session are
 * refused once it is over (`over` says so): a statement that a body's
 * unfinished work sends late must never run outside the transaction, nor
 * inside another one on the same connection.
 */
function sqlOn(on: Queryable, over: () => boolean = () => false): Sql {
  const send = <T>(text: string, params: readonly unknown[]): Promise<Rows<T>> =>
    over() ? Promise.reject(new Error('a statement sent after its transaction was over; not run')) : run<T>(on, text, params);
  const sql = <T extends readonly unknown[]>(strings: TemplateStringsArray, ...values: unknown[]) => {
    const { text, params } = compile(strings, values);
    return send<T>(text, params);
  };
  sql.unsafe = <T extends readonly unknown[]>(text: string, params: readonly unknown[] = []) => send<T>(text, params);
  return sql as Sql;
}

/**
 * Holds one connection for `body`, then gives it back. The pool never hands
 * out again a connection that failed (node-postgres marks it not queryable):
 * `body` calls `discard` for one left in an unknown state, so that it is
 * closed rather than reused.
 */
async function holding<T>(pool: pg.Pool, body: (client: pg.PoolClient, discard: (error: unknown) => void) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let discarded: Error | undefined;
  const discard = (error: unknown) => (discarded ??= error instanceof Error ? error : new Error(String(error)));
  // Without a listener, the server ending the connection between two statements would be thrown from an event.
  client.on('error', discard);
  try {
    return await body(client, discard);
  } finally {
    client.off('error', discard);
    client.release(discarded);
  }
}

/**
 * A statement unanswered this long is taken for a connection lost without a
 * word (a network cut): the connection is closed and the statement fails.
 * Far above any statement of the store on a database that answers.
 */
const STATEMENT_DEADLINE_MS = 30_000;
/**
 * A transaction of this process left open this long (its process cut off
 * from the database mid-transaction) is ended by the server, and with it the
 * advisory locks that other processes' writers wait for.
 */
const IDLE_IN_TRANSACTION_MS = 60_000;

export interface PoolOptions {
  max: number;
  /** Seconds to wait for a connection to open. */
  connectTimeout: number;
}

/**
 * How long closing waits for statements in flight (a write on locked tables)
 * before it ends their connections: the server closes its store after its
 * requests in flight have had their own grace.
 */
const CLOSE_GRACE_MS = 2_000;

/** Ends the pool: statements in flight finish, or after `ms` their connections are ended, failing them. */
async function endWithin(pool: pg.Pool, connections: ReadonlySet<pg.Client>, ms: number): Promise<void> {
  const ending = pool.end();
  let timer: NodeJS.Timeout | undefined;
  const late = await Promise.race([ending.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), ms)))]);
  clearTimeout(timer);
  if (late) {
    // end() would wait for pipelined statements to drain: the socket goes, failing them.
    for (const client of connections) client.connection.stream.destroy();
    // A connection held by something that waits on anything but the database still ends the wait.
    await Promise.race([ending, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);
  }
}

/** A pool of at most `max` connections to `url`. */
export function createPool(url: string, options: PoolOptions): SqlPool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max,
    connectionTimeoutMillis: options.connectTimeout * 1000,
    application_name: 'cachebreak',
    pipeline: true,
    query_timeout: STATEMENT_DEADLINE_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    // A connection cut without a word (a network partition) is found out by TCP keepalive, not only by a write.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle connection the server ended: the pool drops it and opens another when one is wanted.
  pool.on('error', () => {});
  // A connection's failure reaches the statements on it, and the pool drops the connection when it is given back;
  // the event it also emits must not be thrown (node-postgres leaves a checked-out connection without a listener
  // at moments, and an event without one is thrown).
  const connections = new Set<pg.Client>();
  pool.on('connect', (client) => {
    client.on('error', () => {});
    connections.add(client);
    client.once('end', () => connections.delete(client));
  });
  const sql = sqlOn(pool) as SqlPool;
  let ended: Promise<void> | undefined;
  const begin = <T>(body: (tx: Sql) => Promise<T>): Promise<T> =>
    holding(pool, async (client, discard) => {
      await run(client, 'BEGIN', []);
      let over = false;
      let result: T;
      try {
        result = await body(sqlOn(client, () => over));
      } catch (error) {
        over = true;
        // A connection that cannot roll back is closed, and its transaction with it.
        await run(client, 'ROLLBACK', []).catch(discard);
        throw error;
      }
      over = true;
      await run(client, 'COMMIT', []);
      return result;
    });
  return Object.assign(sql, {
    begin,
    reserve: <T>(body: (session: Sql) => Promise<T>) =>
      holding(pool, async (client) => {
        let over = false;
        try {
          return await body(sqlOn(client, () => over));
        } finally {
          over = true;
        }
      }),
    async ping(ms: number) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new NoAnswer(`the database did not answer within ${ms} ms`)), ms);
      });
      try {
        // The statement's own deadline closes a connection that took it and never answered.
        await Promise.race([run(pool, 'SELECT 1', [], ms), deadline]);
      } finally {
        clearTimeout(timer);
      }
    },
    // Closing twice (a store closed by its owner and again at exit) is closing once.
    end: () => (ended ??= endWithin(pool, connections, CLOSE_GRACE_MS)),
    pool,
  });
}
