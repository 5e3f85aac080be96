import pg from 'pg'
import { noAnswer, type Operation, storeError } from './errors.js'

/** How long connecting may take (TCP, startup, login), in ms, unless `connectTimeoutMs` says otherwise. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000
/** How long a statement waits for an answer before the server is probed, in ms (`queryTimeoutMs`). */
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000
/** The server-side `statement_timeout`, in ms (`statementTimeoutMs`). */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 60_000

/** The connection settings of a {@link Db}. */
export interface DriverOptions {
  url: string
  poolSize: number
  applicationName: string
  connectTimeoutMs: number
  queryTimeoutMs: number
  statementTimeoutMs: number
}

/** A query of the store: text with parameters, or a named (prepared) statement. */
export type Query = string | { name: string; text: string }

/** The `query(text, values)` of a `pg` pool, as the readers use it (a `Db` bound to an operation gives one). */
export interface Queryable {
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>
}

/** Runs statements on one checked-out connection (a transaction), with the same deadlines. */
export type Run = <R extends pg.QueryResultRow>(
  query: Query,
  values?: unknown[],
) => Promise<pg.QueryResult<R>>

/** Called once with a statement's answer or its failure. */
type Done<R extends pg.QueryResultRow> = (
  error: Error | undefined,
  result: pg.QueryResult<R> | undefined,
) => void

/** A statement waiting for its answer: whether it was answered (or abandoned), its deadline timer. */
interface Flight {
  settled: boolean
  timer: ReturnType<typeof setTimeout> | undefined
  readonly started: number
}

/** Where the server is, for messages: `PostgreSQL at host:port/db`, never the password. */
export function describeServer(url: string): string {
  try {
    const u = new URL(url)
    return `PostgreSQL at ${u.hostname || 'localhost'}:${u.port || '5432'}${u.pathname.length > 1 ? u.pathname : ''}`
  } catch {
    return 'PostgreSQL'
  }
}

/** The socket under a `pg` client, to close it when its statement is abandoned. */
function destroySocket(client: pg.ClientBase): void {
  ;(client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy()
}

const ignore = (): void => {}

/** Whether `failure` leaves its connection unusable: a statement the server refused does not; any other failure does. */
function breaks(failure: unknown): boolean {
  return !isServerError(failure)
}

/** Gives `client` back to the pool, or, after a failure that `breaks` it, closes it. */
function releaseClient(client: pg.PoolClient, broken: Error | undefined): void {
  if (broken !== undefined) destroySocket(client)
  client.release(broken)
}

/**
 * The store's one connection pool, with every wait bounded and every failure typed:
 * - connecting (TCP, startup, login) takes at most `connectTimeoutMs`;
 * - the server cancels a statement after `statementTimeoutMs` (`statement_timeout`);
 * - a statement with no answer after `queryTimeoutMs` makes the store probe the server with a
 *   fresh connection (bounded by `connectTimeoutMs`): if the probe gets no answer either, the
 *   statement is abandoned — its connection closed — with `STORE_UNAVAILABLE`; if it does, the
 *   server is alive and busy and the statement goes on waiting, up to `statementTimeoutMs`
 *   plus `queryTimeoutMs` in all. A frozen server is so reported after about
 *   `queryTimeoutMs + connectTimeoutMs`, while a long load on a live one may finish.
 * Waiting for a free pooled connection has no timer of its own: every connection in use is
 * bounded as above, so that wait is too. Driver errors become `StoreUnavailable` or
 * `StoreQueryFailed` (`errors.ts`); an abandoned connection is never reused.
 */
export class Db {
  readonly where: string
  readonly #options: DriverOptions
  readonly #pool: pg.Pool
  readonly #clients = new Set<pg.ClientBase>()
  #probe: Promise<boolean> | undefined

  constructor(options: DriverOptions, where = describeServer(options.url)) {
    this.#options = options
    this.where = where
    const connectTimeoutMs = options.connectTimeoutMs
    // The pool's own `connectionTimeoutMillis` would also bound the wait for a free
    // connection (seconds under load are normal there): bound the connect of each client instead.
    class TimedClient extends pg.Client {
      constructor(config?: pg.ClientConfig) {
        super({ ...config, connectionTimeoutMillis: connectTimeoutMs })
      }
    }
    this.#pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize,
      application_name: options.applicationName,
      statement_timeout: options.statementTimeoutMs,
      idle_in_transaction_session_timeout: options.statementTimeoutMs,
      keepAlive: true,
      Client: TimedClient,
    })
    this.#pool.on('error', ignore) // an idle client's connection dropped: the pool replaces it
    this.#pool.on('connect', (client) => {
      this.#clients.add(client)
      client.on('error', ignore) // surfaces through the statement that was running, if any
    })
    this.#pool.on('remove', (client) => this.#clients.delete(client))
  }

  /** `query(text, values)` for `op`, as the readers take it. */
  for(op: Operation): Queryable {
    return { query: (text, values) => this.query(op, text, values) }
  }

  /**
   * Runs one statement on a pooled connection. Rejects with a typed error. (Callbacks
   * inside, one promise outside: this runs for every append.)
   */
  query<R extends pg.QueryResultRow>(
    op: Operation,
    query: Query,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>> {
    return new Promise((resolve, reject) => {
      this.#pool.connect((error, client) => {
        if (error || client === undefined) {
          reject(storeError(error, this.where, op))
          return
        }
        this.#statement<R>(client, op, query, values, (failure, result) => {
          releaseClient(client, failure !== undefined && breaks(failure) ? failure : undefined)
          if (failure === undefined) resolve(result!)
          else reject(storeError(failure, this.where, op))
        })
      })
    })
  }

  /**
   * Runs `body` on one checked-out connection (`run` executes a statement with the store's
   * deadlines). With `wrap`, inside `BEGIN` … `COMMIT` (rolled back on failure).
   */
  async transaction<T>(op: Operation, body: (run: Run) => Promise<T>, wrap = true): Promise<T> {
    let client: pg.PoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      throw storeError(error, this.where, op)
    }
    let broken: unknown
    const run: Run = <R extends pg.QueryResultRow>(query: Query, values?: unknown[]) =>
      new Promise<pg.QueryResult<R>>((resolve, reject) => {
        this.#statement<R>(client, op, query, values, (failure, result) => {
          if (failure === undefined) return resolve(result!)
          if (breaks(failure)) broken = failure
          reject(failure)
        })
      })
    try {
      if (!wrap) return await body(run)
      await run('BEGIN')
      try {
        const result = await body(run)
        await run('COMMIT')
        return result
      } catch (error) {
        if (broken === undefined) await run('ROLLBACK').catch(ignore)
        throw error
      }
    } catch (error) {
      throw storeError(error, this.where, op)
    } finally {
      releaseClient(client, broken as Error | undefined)
    }
  }

  /**
   * Sends one statement on `client` and calls `done` once: with its answer, or with
   * `STORE_UNAVAILABLE` when it got none in time (see the class comment).
   */
  #statement<R extends pg.QueryResultRow>(
    client: pg.PoolClient,
    op: Operation,
    query: Query,
    values: unknown[] | undefined,
    done: Done<R>,
  ): void {
    const flight: Flight = { settled: false, timer: undefined, started: Date.now() }
    flight.timer = setTimeout(
      () => void this.#overdue(client, op, flight, done),
      this.#options.queryTimeoutMs,
    )
    // A submittable `Query` with a callback: `client.query(config)` would copy the config
    // (property descriptors and all) and chain two promises of its own per statement.
    const statement = new pg.Query<R>(
      typeof query === 'string' ? query : query.text,
      values,
      (error, result) => {
        clearTimeout(flight.timer)
        if (flight.settled) return
        flight.settled = true
        // the driver answers success with a null error
        if (error) done(error, undefined)
        else done(undefined, result)
      },
    )
    if (typeof query !== 'string') (statement as { name?: string }).name = query.name
    try {
      client.query(statement)
    } catch (error) {
      clearTimeout(flight.timer)
      flight.settled = true
      done(error as Error, undefined)
    }
  }

  /**
   * A statement got no answer for `queryTimeoutMs`: if the server answers a fresh
   * connection it is alive and busy, and the statement waits on (up to `statementTimeoutMs`
   * plus `queryTimeoutMs` in all); otherwise it is abandoned, its connection closed.
   */
  async #overdue<R extends pg.QueryResultRow>(
    client: pg.PoolClient,
    op: Operation,
    flight: Flight,
    done: Done<R>,
  ): Promise<void> {
    const { queryTimeoutMs, statementTimeoutMs } = this.#options
    const waited = Date.now() - flight.started
    const alive = waited < statementTimeoutMs + queryTimeoutMs && (await this.#alive())
    if (flight.settled) return
    if (alive) {
      flight.timer = setTimeout(() => void this.#overdue(client, op, flight, done), queryTimeoutMs)
      return
    }
    flight.settled = true
    destroySocket(client)
    done(noAnswer(this.where, op, Date.now() - flight.started), undefined)
  }

  /**
   * Whether the server answers `SELECT 1` on a fresh connection within `connectTimeoutMs`
   * (twice that for connect and answer). Concurrent callers share one probe.
   */
  #alive(): Promise<boolean> {
    this.#probe ??= (async () => {
      const ms = this.#options.connectTimeoutMs
      const probe = new pg.Client({ connectionString: this.#options.url, connectionTimeoutMillis: ms })
      probe.on('error', ignore)
      let timer: ReturnType<typeof setTimeout> | undefined
      let answered = false
      try {
        answered = await Promise.race([
          probe
            .connect()
            .then(() => probe.query('SELECT 1'))
            .then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), 2 * ms)
          }),
        ])
      } catch {
        answered = false // refused or broken: not alive either
      } finally {
        clearTimeout(timer)
        if (answered) void probe.end().catch(ignore)
        else destroySocket(probe)
        this.#probe = undefined
      }
      return answered
    })()
    return this.#probe
  }

  /**
   * Ends the pool. A connection the server never lets close (a frozen server does not
   * answer the goodbye) is destroyed after `connectTimeoutMs`, so it does not keep the
   * process alive.
   */
  async end(): Promise<void> {
    await this.#pool.end()
    if (this.#clients.size === 0) return
    const timer = setTimeout(() => {
      for (const client of this.#clients) destroySocket(client)
      this.#clients.clear()
    }, this.#options.connectTimeoutMs)
    timer.unref()
  }
}

/** Whether `error` is the server's refusal of a statement (a SQLSTATE), the connection intact. */
function isServerError(error: unknown): boolean {
  const e = error as { severity?: unknown; code?: unknown } | null
  return (
    typeof e?.severity === 'string' &&
    typeof e.code === 'string' &&
    !e.code.startsWith('08') &&
    !e.code.startsWith('57P')
  )
}
