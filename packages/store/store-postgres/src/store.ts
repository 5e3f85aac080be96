import { KeelError } from '@keel/base'
import { SESSION_FORMAT_VERSION, type SessionHeader } from '@keel/session'
import {
  BackendStore,
  type CheckpointInput,
  ConcurrentAppend,
  checkSessionId,
  encodeCheckpoint,
  type IntegrityMark,
  type ListOptions,
  type LockHolder,
  type LogWriter,
  linesCrc,
  migratedNotice,
  migrateStored,
  type PendingEvent,
  type ReadOptions,
  SessionExists,
  SessionLocked,
  SessionNotFound,
  type SessionSummary,
  type StoreBackend,
  type StoredLog,
  type StoreNotice,
  type StoreOptions,
  TIE_LINES,
} from '@keel/store'
import {
  Db,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_QUERY_TIMEOUT_MS,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  type Query,
} from './driver.js'
import { isUniqueViolation } from './errors.js'
import { type Lease, Leases, LOCKED_HINT } from './lease.js'
import { listSessions } from './list.js'
import { migrate, quoteSchema } from './migrations.js'
import { prefixReader } from './prefix.js'
import { type ReadLog, readLog, type Tables } from './read.js'
import { SyncQueries } from './sync-reader.js'
import { textStorable } from './text-storable.js'
import { appendSql, batchParams, checkpointSql, createSql, markParams } from './write.js'

/** Options of {@link PostgresStore}. */
export interface PostgresStoreOptions extends StoreOptions {
  /** Connection string; default `$KEEL_PG_URL`. */
  url?: string
  /** The schema holding the tables (created on first use). Default `keel`. */
  schema?: string
  /**
   * Connections of the store's one pool, shared by every open session, read and list
   * (no connection is held per session). Default 10.
   */
  poolSize?: number
  /**
   * How long a writer's lease lasts without renewal, in ms (default 30 000). Open handles
   * renew it every third of that; a writer that stops without closing is taken over after
   * it expires (at once when it ran on this host and its process is gone).
   */
  leaseTtlMs?: number
  /**
   * How long connecting to the server may take (TCP, startup, login), in ms. Default
   * 5 000. A server that is down fails at once (`STORE_UNAVAILABLE`, connection refused);
   * one that does not answer, after this.
   */
  connectTimeoutMs?: number
  /**
   * How long a statement waits for the server's answer before the store checks, with a
   * fresh connection, whether the server is alive, in ms. Default 10 000. A server that
   * answers neither (frozen, or the network gone) ends the statement with
   * `STORE_UNAVAILABLE` after about `queryTimeoutMs + connectTimeoutMs`; a live, busy one
   * lets it go on, up to `statementTimeoutMs`.
   */
  queryTimeoutMs?: number
  /**
   * The server's `statement_timeout` for this store's connections, in ms: the longest any
   * statement may run (a load of a huge session included). Default 60 000.
   */
  statementTimeoutMs?: number
}

/** No connection string: neither `url` nor `$KEEL_PG_URL`. */
export class PostgresUrlMissing extends KeelError<'KEEL_PG_URL_MISSING'> {
  constructor() {
    super(
      'KEEL_PG_URL_MISSING',
      'the PostgreSQL store needs a connection string: set KEEL_PG_URL (postgres://user:pass@host:5432/db) or pass { url }',
    )
  }
}

/**
 * Sessions in PostgreSQL: `<schema>.sessions` (header text, format version, event count,
 * writer lease) and `<schema>.events` (primary key `(session_id, seq)`, the exact JSON
 * line), plus `<schema>.blobs`, created by versioned migrations on first use. Each batch
 * is one statement that checks the stored next seq and the writer's fencing token, so a
 * second writer's append is refused and changes nothing. Writers hold a lease row renewed
 * by one heartbeat per store; connections come from one bounded pool.
 */
export class PostgresStore extends BackendStore {
  constructor(options: PostgresStoreOptions = {}) {
    super(new PostgresBackend(options), options)
  }
}

class PostgresBackend implements StoreBackend {
  readonly kind = 'postgres'
  readonly where: string
  readonly #schema: string
  readonly #s: string
  readonly #tables: Tables
  readonly #db: Db
  readonly #leases: Leases
  /** The append of a batch of events, and of a batch of only an integrity record. */
  readonly #appendSql: { readonly events: Query; readonly mark: Query }
  readonly #createSql: string
  readonly #checkpointSql: string
  /** Synchronous reads of events before a checkpoint (started on first use). */
  readonly #sync: SyncQueries
  #ready: Promise<void> | undefined

  constructor(options: PostgresStoreOptions) {
    const url = options.url ?? process.env.KEEL_PG_URL
    if (!url) throw new PostgresUrlMissing()
    this.#schema = options.schema ?? 'keel'
    this.#s = quoteSchema(this.#schema)
    this.where = `PostgreSQL schema ${this.#schema}`
    this.#tables = {
      where: this.where,
      sessions: `${this.#schema}.sessions`,
      events: `${this.#schema}.events`,
      blobs: `${this.#schema}.blobs`,
    }
    this.#db = new Db({
      url,
      poolSize: options.poolSize ?? 10,
      applicationName: `keel:${this.#schema}`,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      queryTimeoutMs: options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS,
      statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    })
    this.#leases = new Leases(this.#db, this.#s, options.leaseTtlMs ?? 30_000)
    // Named statements: parsed and planned once per pooled connection.
    this.#appendSql = {
      events: { name: 'keel-append', text: appendSql(this.#s, true) },
      mark: { name: 'keel-append-mark', text: appendSql(this.#s, false) },
    }
    this.#createSql = createSql(this.#s)
    this.#checkpointSql = checkpointSql(this.#s)
    this.#sync = new SyncQueries(url)
  }

  #init(): Promise<void> {
    this.#ready ??= (async () => {
      const op = { what: `preparing schema ${this.#schema} (migrations)` }
      await this.#db.transaction(op, (run) => migrate({ query: run }, this.#schema), false)
    })().catch((error) => {
      this.#ready = undefined
      throw error
    })
    return this.#ready
  }

  #writer(lease: Lease): LogWriter {
    let closed = false
    return {
      append: (batch, mark) => this.#append(lease.id, batch, lease, 0, mark),
      saveCheckpoint: (doc) => this.#saveCheckpoint(lease, doc),
      // records after the last that held (a log cut or changed behind them) go: the chain continues there
      prepare: async (log) => {
        const last = log.integrity?.().last
        await this.#db.query(
          { what: `preparing session ${lease.id} for writing`, id: lease.id },
          `DELETE FROM ${this.#s}.marks m USING ${this.#s}.sessions s
            WHERE m.session_id = $1 AND m.next > $2 AND s.id = m.session_id AND s.lease_token = $3`,
          [lease.id, last?.next ?? 0, lease.token],
        )
      },
      close: async () => {
        if (closed) return
        closed = true
        await this.#leases.release(lease)
      },
    }
  }

  /**
   * Appends one batch in one statement, guarded by the stored next seq and (for a handle)
   * its lease token. Explains a refusal: `ConcurrentAppend` when the log moved,
   * `SessionLocked` when the lease was taken over, `SessionNotFound`. A handle's batch that
   * is found already stored under its own token was written by an earlier attempt whose
   * answer was lost (a frozen or restarting server): only this lease can write with that
   * token, so it is this very batch, and the append succeeds.
   */
  async #append(
    id: string,
    batch: readonly PendingEvent[],
    lease: Lease | undefined,
    token = 0,
    mark?: IntegrityMark,
  ) {
    const first = batch[0]?.event.seq ?? mark!.next
    const p = batchParams(batch)
    const what =
      p.count > 0
        ? `appending events ${first}..${first + p.count - 1} to session ${id}`
        : `storing the integrity record at seq ${first} of session ${id}`
    const op = { what, id }
    let ok: boolean
    try {
      const { rowCount } = await this.#db.query(
        op,
        p.count > 0 ? this.#appendSql.events : this.#appendSql.mark,
        [
          id,
          first,
          lease?.token ?? token,
          p.count,
          this.#leases.ttlMs,
          p.lines,
          p.blobShas,
          p.blobJsons,
          lease !== undefined,
          ...markParams(mark),
          p.lastTime,
        ],
      )
      ok = rowCount === (p.count > 0 ? p.count : 1)
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConcurrentAppend(id, first, undefined)
      throw error
    }
    if (ok) return
    const { rows } = await this.#db.query<{
      event_count: number
      lease_token: number
      writer: LockHolder | null
    }>(op, `SELECT event_count, lease_token, writer FROM ${this.#s}.sessions WHERE id = $1`, [id])
    const row = rows[0]
    if (!row) throw new SessionNotFound(id, this.where)
    if (lease !== undefined && row.lease_token === lease.token && row.event_count === first + p.count) return
    if (row.event_count !== first) throw new ConcurrentAppend(id, first, row.event_count)
    throw new SessionLocked(
      id,
      row.writer ?? {},
      lease !== undefined
        ? `this writer's lease was taken over (it was not renewed in time${this.#leases.lastHeartbeatError ? `: ${String(this.#leases.lastHeartbeatError)}` : ''}); nothing of the batch was written — reopen the session`
        : LOCKED_HINT,
    )
  }

  /**
   * Stores a checkpoint if this writer's lease still holds (a lost one costs a replay only),
   * with the CRC of the lines before it that its tie covers and the blobs of its spilled events.
   */
  async #saveCheckpoint(lease: Lease, { blobs, ...doc }: CheckpointInput): Promise<number> {
    const op = { what: `storing the checkpoint at seq ${doc.seq} of session ${lease.id}`, id: lease.id }
    const tailFrom = Math.max(0, doc.seq - TIE_LINES)
    const { rows: tail } = await this.#db.query<{ line: string }>(
      op,
      `SELECT line FROM ${this.#s}.events WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
      [lease.id, tailFrom, doc.seq],
    )
    const locator = { tailFrom, tailCrc: linesCrc(tail.map((r) => r.line)) }
    const text = encodeCheckpoint({ ...doc, locator, blobs: blobs.map((b) => b.sha256) })
    const { rows } = await this.#db.query<{ ok: number }>(op, this.#checkpointSql, [
      lease.id,
      doc.seq,
      text,
      lease.token,
      blobs.map((b) => b.sha256),
      blobs.map((b) => b.json),
    ])
    if (rows[0]?.ok !== 1) throw new Error(`the writer lease of session ${lease.id} was taken over`)
    return text.length
  }

  async create(header: SessionHeader, initial: readonly PendingEvent[], mark?: IntegrityMark) {
    checkSessionId(header.id, this.where)
    await this.#init()
    const p = batchParams(initial)
    const cwd = header.cwd !== undefined && textStorable(header.cwd) ? header.cwd : null
    const { rows } = await this.#db.query<{ ok: number }>(
      { what: `creating session ${header.id}`, id: header.id },
      this.#createSql,
      [
        header.id,
        0,
        JSON.stringify(header),
        header.createdAt,
        cwd,
        p.lines,
        p.blobShas,
        p.blobJsons,
        this.#leases.holder(),
        this.#leases.ttlMs,
        SESSION_FORMAT_VERSION,
        initial.length,
        ...markParams(mark),
        p.lastTime,
      ],
    )
    if (rows[0]?.ok !== 1) throw new SessionExists(header.id, this.where)
    const lease: Lease = { id: header.id, token: 1 }
    this.#leases.hold(lease)
    return { writer: this.#writer(lease), notices: [] as StoreNotice[] }
  }

  async openForWrite(id: string, options: ReadOptions = {}) {
    checkSessionId(id, this.where)
    await this.#init()
    const { lease, notices } = await this.#leases.acquire(id, this.where)
    try {
      const log = await this.#read(id, options)
      return { log, writer: this.#writer(lease), notices }
    } catch (error) {
      // The read's failure is the one to report; a release that fails with it is kept and
      // retried by the heartbeat (and this store takes the lease back on the next open).
      await this.#leases.release(lease).catch(() => undefined)
      throw error
    }
  }

  async read(id: string, options: ReadOptions = {}): Promise<StoredLog> {
    checkSessionId(id, this.where)
    await this.#init()
    return this.#read(id, options)
  }

  async #read(id: string, options: ReadOptions = {}): Promise<StoredLog> {
    const db = this.#db.for({ what: `loading session ${id}`, id })
    const read: ReadLog = await readLog(db, this.#s, this.#tables, id, options)
    const { header, migratedFrom, events } = read
    const log: StoredLog = {
      header,
      events: migratedFrom === undefined ? events : migrateStored(events, migratedFrom),
      notices:
        migratedFrom === undefined ? read.notices : [...read.notices, migratedNotice(id, migratedFrom)],
      ...(migratedFrom === undefined ? {} : { migratedFrom }),
      where: (seq) => (seq < 0 ? { file: this.#tables.sessions } : { file: this.#tables.events, seq }),
      integrity: () => read.integrity,
      ...(read.trusted ? { trusted: read.trusted } : {}),
    }
    if (!read.checkpoint) return log
    const prefix = prefixReader(this.#sync, this.#s, this.#tables, id)
    return { ...log, checkpoint: { doc: read.checkpoint, prefix, bytes: read.checkpointBytes ?? 0 } }
  }

  async appendStored(id: string, build: (log: StoredLog) => { firstSeq: number; pending: PendingEvent[] }) {
    checkSessionId(id, this.where)
    await this.#init()
    // Refused up front while a writer holds the session; the token fences the check.
    const lease = await this.#leases.row(id, this.where)
    if (this.#leases.holds(lease)) throw new SessionLocked(id, lease.writer ?? {}, LOCKED_HINT)
    const log = await this.#read(id)
    const { pending } = build(log)
    if (pending.length === 0) return
    await this.#append(id, pending, undefined, lease.lease_token)
  }

  async list(options: ListOptions & { limit: number }): Promise<SessionSummary[]> {
    await this.#init()
    return listSessions(this.#db, this.#s, this.#tables, options)
  }

  async readRaw(id: string): Promise<string | undefined> {
    checkSessionId(id, this.where)
    return undefined
  }

  async close(): Promise<void> {
    await this.#leases.stop()
    this.#sync.close()
    await this.#db.end()
  }
}
