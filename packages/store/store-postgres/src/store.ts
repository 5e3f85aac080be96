import { KeelError } from '@keel/base'
import { SESSION_FORMAT_VERSION, type SessionEvent, type SessionHeader } from '@keel/session'
import {
  BackendStore,
  ConcurrentAppend,
  checkFormatVersion,
  HOST,
  type ListOptions,
  type LockHolder,
  type LogWriter,
  migratedNotice,
  migrateStored,
  type PendingEvent,
  SessionExists,
  SessionLocked,
  SessionNotFound,
  type SessionSummary,
  type StoreBackend,
  type StoredLog,
  type StoreNotice,
  type StoreOptions,
  summaryOf,
} from '@keel/store'
import pg from 'pg'
import { migrate, quoteSchema } from './migrations.js'

/** Options of {@link PostgresStore}. */
export interface PostgresStoreOptions extends StoreOptions {
  /** Connection string; default `$KEEL_PG_URL`. */
  url?: string
  /** The schema holding the tables (created on first use). Default `keel`. */
  schema?: string
  /** Pool size for reads, lists and low-level appends (each open handle has its own connection). Default 4. */
  poolSize?: number
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
 * Sessions in PostgreSQL: `<schema>.sessions` (header as jsonb, format version, event
 * count) and `<schema>.events` (primary key `(session_id, seq)`, type, time, payload),
 * created by a versioned migration on first use. Each batch is one transaction that
 * checks the stored next seq, so a second writer's conflicting append is refused with
 * `ConcurrentAppend` and changes nothing. The exclusive writer of an open session holds a
 * session-level advisory lock on its own connection (released if the process dies).
 */
export class PostgresStore extends BackendStore {
  constructor(options: PostgresStoreOptions = {}) {
    super(new PostgresBackend(options), options)
  }
}

interface EventRow {
  seq: number
  type: string
  time: number
  payload: unknown
  envelope: Record<string, unknown> | null
}

function envelopeExtras(event: SessionEvent): string | null {
  const e = event as { ignorable?: true; surfaceOp?: unknown; sourceEventSeqs?: unknown }
  if (e.ignorable === undefined && e.surfaceOp === undefined && e.sourceEventSeqs === undefined) return null
  const extras: Record<string, unknown> = {}
  if (e.ignorable !== undefined) extras.ignorable = e.ignorable
  if (e.surfaceOp !== undefined) extras.surfaceOp = e.surfaceOp
  if (e.sourceEventSeqs !== undefined) extras.sourceEventSeqs = e.sourceEventSeqs
  return JSON.stringify(extras)
}

class PostgresBackend implements StoreBackend {
  readonly kind = 'postgres'
  readonly where: string
  readonly #url: string
  readonly #schema: string
  readonly #s: string
  readonly #pool: pg.Pool
  #ready: Promise<void> | undefined

  constructor(options: PostgresStoreOptions) {
    const url = options.url ?? process.env.KEEL_PG_URL
    if (!url) throw new PostgresUrlMissing()
    this.#url = url
    this.#schema = options.schema ?? 'keel'
    this.#s = quoteSchema(this.#schema)
    this.where = `PostgreSQL schema ${this.#schema}`
    this.#pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 4 })
    this.#pool.on('error', () => {}) // an idle client's connection dropped: the pool replaces it
  }

  #init(): Promise<void> {
    this.#ready ??= (async () => {
      const client = await this.#pool.connect()
      try {
        await migrate(client, this.#schema)
      } finally {
        client.release()
      }
    })().catch((error) => {
      this.#ready = undefined
      throw error
    })
    return this.#ready
  }

  /** A dedicated connection holding the session's advisory lock, or SessionLocked. */
  async #lock(id: string): Promise<pg.Client> {
    await this.#init()
    const client = new pg.Client({ connectionString: this.#url })
    client.on('error', () => {})
    await client.connect()
    try {
      const { rows } = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok',
        [`keel-session:${this.#schema}:${id}`],
      )
      if (!rows[0]?.ok) {
        const holder = await client.query<{ writer: LockHolder | null }>(
          `SELECT writer FROM ${this.#s}.sessions WHERE id = $1`,
          [id],
        )
        throw new SessionLocked(
          id,
          holder.rows[0]?.writer ?? {},
          'close it there first (the lock is released when that connection ends)',
        )
      }
      return client
    } catch (error) {
      await client.end().catch(() => {})
      throw error
    }
  }

  #writer(id: string, client: pg.Client): LogWriter {
    let closed = false
    return {
      append: (batch) => this.#insert(client, id, batch),
      close: async () => {
        if (closed) return
        closed = true
        try {
          await client.query(`UPDATE ${this.#s}.sessions SET writer = NULL WHERE id = $1`, [id])
        } finally {
          await client.end().catch(() => {})
        }
      },
    }
  }

  /** One transaction: check the stored next seq, insert the batch, bump the count. */
  async #insert(client: pg.ClientBase, id: string, batch: readonly PendingEvent[]): Promise<void> {
    const first = batch[0]!.event.seq
    const seqs: number[] = []
    const types: string[] = []
    const times: number[] = []
    const payloads: string[] = []
    const envelopes: (string | null)[] = []
    for (const { event } of batch) {
      seqs.push(event.seq)
      types.push(event.type)
      times.push(event.time)
      payloads.push(JSON.stringify(event.data))
      envelopes.push(envelopeExtras(event))
    }
    await client.query('BEGIN')
    try {
      const { rows } = await client.query<{ event_count: number }>(
        `SELECT event_count FROM ${this.#s}.sessions WHERE id = $1 FOR UPDATE`,
        [id],
      )
      const stored = rows[0]?.event_count
      if (stored === undefined) throw new SessionNotFound(id, this.where)
      if (stored !== first) throw new ConcurrentAppend(id, first, stored)
      await client.query(
        `INSERT INTO ${this.#s}.events (session_id, seq, type, time, payload, envelope)
         SELECT $1, * FROM unnest($2::integer[], $3::text[], $4::double precision[], $5::jsonb[], $6::jsonb[])`,
        [id, seqs, types, times, payloads, envelopes],
      )
      await client.query(`UPDATE ${this.#s}.sessions SET event_count = $2 WHERE id = $1`, [
        id,
        first + batch.length,
      ])
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      if ((error as { code?: string }).code === '23505') throw new ConcurrentAppend(id, first, undefined)
      throw error
    }
  }

  async create(header: SessionHeader, initial: readonly PendingEvent[]) {
    await this.#init()
    const existing = await this.#pool.query(`SELECT 1 FROM ${this.#s}.sessions WHERE id = $1`, [header.id])
    if (existing.rowCount) throw new SessionExists(header.id, this.where)
    const client = await this.#lock(header.id)
    try {
      const writer = { pid: process.pid, host: HOST, since: Date.now() }
      try {
        await client.query(
          `INSERT INTO ${this.#s}.sessions (id, format_version, header, created_at, cwd, event_count, writer)
           VALUES ($1, $2, $3, $4, $5, 0, $6)`,
          [
            header.id,
            SESSION_FORMAT_VERSION,
            JSON.stringify(header),
            header.createdAt,
            header.cwd ?? null,
            writer,
          ],
        )
      } catch (error) {
        if ((error as { code?: string }).code === '23505') throw new SessionExists(header.id, this.where)
        throw error
      }
      if (initial.length > 0) await this.#insert(client, header.id, initial)
      return { writer: this.#writer(header.id, client), notices: [] as StoreNotice[] }
    } catch (error) {
      await client.end().catch(() => {})
      throw error
    }
  }

  async openForWrite(id: string) {
    await this.#init()
    await this.#header(this.#pool, id) // SessionNotFound before taking a connection
    const client = await this.#lock(id)
    try {
      const log = await this.#read(client, id)
      await client.query(`UPDATE ${this.#s}.sessions SET writer = $2 WHERE id = $1`, [
        id,
        { pid: process.pid, host: HOST, since: Date.now() },
      ])
      return { log, writer: this.#writer(id, client), notices: [] as StoreNotice[] }
    } catch (error) {
      await client.end().catch(() => {})
      throw error
    }
  }

  async read(id: string): Promise<StoredLog> {
    await this.#init()
    return this.#read(this.#pool, id)
  }

  async #header(
    db: pg.Pool | pg.ClientBase,
    id: string,
  ): Promise<{ header: SessionHeader; migratedFrom: number | undefined }> {
    const { rows } = await db.query<{ format_version: number; header: SessionHeader }>(
      `SELECT format_version, header FROM ${this.#s}.sessions WHERE id = $1`,
      [id],
    )
    const row = rows[0]
    if (!row) throw new SessionNotFound(id, this.where)
    const migratedFrom = checkFormatVersion(id, row.format_version, this.where)
    const header =
      migratedFrom === undefined ? row.header : { ...row.header, version: SESSION_FORMAT_VERSION }
    return { header, migratedFrom }
  }

  async #read(db: pg.Pool | pg.ClientBase, id: string): Promise<StoredLog> {
    const { header, migratedFrom } = await this.#header(db, id)
    const { rows } = await db.query<EventRow>(
      `SELECT seq, type, time, payload, envelope FROM ${this.#s}.events WHERE session_id = $1 ORDER BY seq`,
      [id],
    )
    const table = `${this.#schema}.events`
    const events = (function* () {
      for (const row of rows) {
        const event: Record<string, unknown> = {
          type: row.type,
          seq: row.seq,
          time: row.time,
          data: row.payload,
        }
        if (row.envelope) Object.assign(event, row.envelope)
        yield event
      }
    })()
    return {
      header,
      events: migratedFrom === undefined ? events : migrateStored(events, migratedFrom),
      notices: migratedFrom === undefined ? [] : [migratedNotice(id, migratedFrom)],
      ...(migratedFrom === undefined ? {} : { migratedFrom }),
      where: (seq) => (seq < 0 ? { file: `${this.#schema}.sessions` } : { file: table, seq }),
    }
  }

  async appendStored(id: string, build: (log: StoredLog) => { firstSeq: number; pending: PendingEvent[] }) {
    const log = await this.read(id)
    const { pending } = build(log)
    if (pending.length === 0) return
    const client = await this.#pool.connect()
    try {
      await this.#insert(client, id, pending)
    } finally {
      client.release()
    }
  }

  async list(options: ListOptions & { limit: number }): Promise<SessionSummary[]> {
    await this.#init()
    const { rows } = await this.#pool.query<{ header: SessionHeader; event_count: number }>(
      `SELECT header, event_count FROM ${this.#s}.sessions
       WHERE ($1::text IS NULL OR cwd = $1) ORDER BY created_at DESC, id LIMIT $2`,
      [options.cwd ?? null, options.limit],
    )
    return rows.map((r) => summaryOf(r.header, r.event_count))
  }

  async readRaw(): Promise<string | undefined> {
    return undefined
  }

  async close(): Promise<void> {
    await this.#pool.end()
  }
}
