import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { JsonObject } from '@keel/base'
import { KeelError } from '@keel/base'
import {
  migrateEvent,
  migrationChain,
  SESSION_FORMAT_VERSION,
  Session,
  SessionError,
  type SessionEvent,
  type SessionHeader,
  type SessionHeaderInit,
  type SessionOptions,
} from '@keel/session'
import {
  ConcurrentAppend,
  EventTooLarge,
  SessionCorrupt,
  SessionFormatUnsupported,
  SessionHandleClosed,
  SessionLocked,
  SessionWriteFailed,
  type StoreLocation,
  UnknownRequiredEvent,
} from './errors.js'
import type {
  CreateSessionInit,
  ForkOptions,
  ListOptions,
  SessionHandle,
  SessionInspection,
  SessionStore,
  SessionSummary,
  StoreNotice,
  StoreOptions,
} from './store.js'

/** One committed event and its stored JSON form (serialized once, at the size check). */
export interface PendingEvent {
  readonly event: SessionEvent
  /** `JSON.stringify(event)`: exactly the JSONL line, without the newline. */
  readonly json: string
  /**
   * Set when the event's line is over the line cap: `json` is then the stub envelope
   * `{ type, seq, time, blob: { sha256, bytes } }` and the full event JSON is stored beside
   * the log under its SHA-256 (hex of the UTF-8 bytes), in the same write as the stub.
   */
  readonly blob?: { readonly sha256: string; readonly json: string }
}

/** A stored log as a backend reads it, before validation. */
export interface StoredLog {
  /** The logical header, already checked for format version (and migrated). */
  readonly header: SessionHeader
  /**
   * The stored events in order, as raw envelopes fresh from `JSON.parse` that nothing else
   * references (they are frozen in place, not copied). May be a lazy, streaming iterable; it may
   * throw `SessionCorrupt` while iterating and may push to `notices` (a dropped torn tail).
   */
  readonly events: Iterable<unknown>
  /** What the backend noticed while reading (filled while `events` is consumed). */
  readonly notices: StoreNotice[]
  /**
   * Set when the log was stored in an older format and `events` are upgraded on the fly
   * by the registered migration chain; `open` then rewrites it in the current format.
   */
  readonly migratedFrom?: number
  /** Where the event of `seq` is stored (`-1`: the header), for error messages. */
  where(seq: number): StoreLocation
}

/** The exclusive writer of one session, returned by a backend with the lock held. */
export interface LogWriter {
  /** The folder holding this session's files, when the backend keeps one (JSONL). */
  readonly directory?: string
  /**
   * Replaces the stored log by `events` in the current format (after a migration), durably
   * and atomically, before `prepare`. A backend without it cannot open migrated logs for writing.
   */
  rewrite?(header: SessionHeader, events: readonly PendingEvent[]): Promise<void>
  /** Called once after the log was read and validated, before the first append (repairs a torn tail). */
  prepare?(): Promise<void>
  /**
   * Writes one batch durably (fsync / commit) before resolving. Batches arrive in seq
   * order, never concurrently. Rejects with `ConcurrentAppend` when the stored log moved.
   */
  append(batch: readonly PendingEvent[]): Promise<void>
  /** Releases the lock and any resource; called once. */
  close(): Promise<void>
}

/**
 * What a storage backend implements; {@link BackendStore} turns it into a full
 * {@link SessionStore} (handles, batching, flush, validation, interrupted-turn closure).
 */
export interface StoreBackend {
  readonly kind: string
  /** Where sessions live, for messages (`/home/me/.keel/sessions`, `postgres schema keel`). */
  readonly where: string
  /** Atomically stores a new session (header and initial events) and returns its writer. */
  create(
    header: SessionHeader,
    initial: readonly PendingEvent[],
  ): Promise<{ writer: LogWriter; notices: StoreNotice[] }>
  /** Takes the writer lock, then reads the log. `SessionNotFound`, `SessionLocked`. */
  openForWrite(id: string): Promise<{ log: StoredLog; writer: LogWriter; notices: StoreNotice[] }>
  /** Reads the log without a lock. `SessionNotFound`. */
  read(id: string): Promise<StoredLog>
  /**
   * Low-level append: reads the log (under the lock where the backend has one), lets
   * `build` validate and serialize the new events, and writes them in one batch, refusing
   * with `ConcurrentAppend` if the stored next seq is not `firstSeq`.
   */
  appendStored(
    id: string,
    build: (log: StoredLog) => { firstSeq: number; pending: PendingEvent[] },
  ): Promise<void>
  list(options: Required<Pick<ListOptions, 'limit'>> & ListOptions): Promise<SessionSummary[]>
  readRaw(id: string): Promise<string | undefined>
  close(): Promise<void>
}

/** The default per-event cap: 1 MiB. */
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024

/** This host's name, as lock holders record it. */
export const HOST = hostname()

/** A fresh session id. */
export function newSessionId(): string {
  return randomUUID()
}

/**
 * Checks a stored format version before any event is parsed. Returns undefined for the
 * current version, and the stored version when it is older and the registered migration
 * chain (`registerMigration` in `@keel/session`) reaches the current one; throws
 * `SessionFormatUnsupported` with `direction: 'newer'` or `'no-migration'` otherwise.
 */
export function checkFormatVersion(id: string, found: unknown, where: string): number | undefined {
  if (found === SESSION_FORMAT_VERSION) return undefined
  const version = typeof found === 'number' && Number.isInteger(found) ? found : undefined
  if (version !== undefined && version > SESSION_FORMAT_VERSION) {
    throw new SessionFormatUnsupported(id, found, SESSION_FORMAT_VERSION, 'newer', where)
  }
  if (version === undefined || version < 1) {
    throw new SessionFormatUnsupported(id, found, SESSION_FORMAT_VERSION, 'no-migration', where)
  }
  try {
    migrationChain(version, SESSION_FORMAT_VERSION)
  } catch (error) {
    throw new SessionFormatUnsupported(id, found, SESSION_FORMAT_VERSION, 'no-migration', where, {
      cause: error,
    })
  }
  return version
}

/**
 * Upgrades stored events of format `from` through the migration chain, lazily; seqs are
 * renumbered contiguously (a step may split or drop events).
 */
export function* migrateStored(events: Iterable<unknown>, from: number): Generator<unknown> {
  let seq = 0
  for (const raw of events) {
    for (const event of migrateEvent(raw as JsonObject, from, SESSION_FORMAT_VERSION))
      yield { ...event, seq: seq++ }
  }
}

/** The notice a backend adds when it upgrades a log on read. */
export function migratedNotice(id: string, from: number): StoreNotice {
  return {
    code: 'FORMAT_MIGRATED',
    message: `session ${id} is stored in format ${from}; upgraded to format ${SESSION_FORMAT_VERSION} while reading (opening it for writing rewrites it in the new format)`,
  }
}

/** The header fields to pass to `Session.create` (everything but the id). */
export function headerInit(header: SessionHeader): SessionHeaderInit {
  const { id: _id, ...rest } = header
  return rest
}

/** Builds a validated `Session` from a stored log, turning validation failures into store errors. */
export function materialize(id: string, log: StoredLog, options: SessionOptions = {}): Session {
  try {
    return Session.create(id, headerInit(log.header), log.events, { ...options, parsedSeed: true })
  } catch (error) {
    throw toStoreError(error, id, log)
  }
}

function toStoreError(error: unknown, id: string, log: StoredLog): unknown {
  if (!(error instanceof SessionError)) return error
  const seq = typeof error.details.seq === 'number' ? error.details.seq : undefined
  if (error.code === 'UNKNOWN_REQUIRED_EVENT' && seq !== undefined) {
    return new UnknownRequiredEvent(id, String(error.details.type), seq, log.where(seq), { cause: error })
  }
  return new SessionCorrupt(id, log.where(seq ?? -1), error.message, { cause: error })
}

/**
 * A {@link SessionStore} over a {@link StoreBackend}: the logic every backend shares.
 * Handles subscribe to their session; appended events are serialized (and size-checked)
 * before commit, batched for `batchWindowMs`, and written one batch at a time.
 */
export class BackendStore implements SessionStore {
  readonly kind: string
  readonly backend: StoreBackend
  readonly maxEventBytes: number
  readonly batchWindowMs: number
  readonly #handles = new Map<string, StoreHandle>()

  constructor(backend: StoreBackend, options: StoreOptions = {}) {
    this.kind = backend.kind
    this.backend = backend
    this.maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES
    this.batchWindowMs = options.batchWindowMs ?? 2
  }

  async create(init: CreateSessionInit = {}): Promise<SessionHandle> {
    const id = init.id ?? init.from?.id ?? newSessionId()
    const link = new HookLink()
    const options: SessionOptions = { beforeCommit: link.hook }
    const session = init.from
      ? Session.create(id, headerInit(init.from.header), init.from.events, options)
      : Session.create(id, init.header ?? {}, undefined, options)
    const initial = session.events.map((event) => this.serialize(id, event))
    const { writer, notices } = await this.backend.create(session.header, initial)
    return this.#adopt(new StoreHandle(this, session, writer, notices), link)
  }

  async open(id: string): Promise<SessionHandle> {
    this.#refuseOpenHere(id)
    const opened = await this.backend.openForWrite(id)
    const link = new HookLink()
    let session: Session
    try {
      session = materialize(id, opened.log, { beforeCommit: link.hook })
      if (opened.log.migratedFrom === undefined) await opened.writer.prepare?.()
    } catch (error) {
      await opened.writer.close().catch(() => {})
      throw error
    }
    const notices = [...opened.notices, ...opened.log.notices]
    if (opened.log.migratedFrom !== undefined) {
      try {
        if (!opened.writer.rewrite) {
          throw new SessionFormatUnsupported(
            id,
            opened.log.migratedFrom,
            SESSION_FORMAT_VERSION,
            'no-migration',
            `${this.backend.where} (this backend reads upgraded logs but cannot rewrite them; load it read-only)`,
          )
        }
        await opened.writer.rewrite(
          session.header,
          session.events.map((event) => this.serialize(id, event)),
        )
        await opened.writer.prepare?.()
      } catch (error) {
        await opened.writer.close().catch(() => {})
        throw error
      }
    }
    const handle = this.#adopt(new StoreHandle(this, session, opened.writer, notices), link)
    const open = session.openTurn
    if (open) {
      try {
        if (open.step !== null) session.append('step/end', { turn: open.turn, step: open.step })
        session.append('turn/end', { turn: open.turn, reason: 'interrupted' })
        await handle.flush()
      } catch (error) {
        await handle.close().catch(() => {})
        throw error
      }
      notices.push({
        code: 'INTERRUPTED_TURN_CLOSED',
        message: `turn ${open.turn} of session ${id} had no turn/end (the writer stopped mid-turn); closed it with turn/end { reason: 'interrupted' }${open.step !== null ? ` after step/end of step ${open.step}` : ''}`,
      })
    }
    return handle
  }

  async load(id: string): Promise<Session> {
    return materialize(id, await this.backend.read(id))
  }

  async inspect(id: string): Promise<SessionInspection> {
    const log = await this.backend.read(id)
    const session = materialize(id, log)
    const notices = [...log.notices]
    const open = session.openTurn
    if (open) {
      notices.push({
        code: 'INTERRUPTED_TURN',
        message: `turn ${open.turn} has no turn/end (the writer stopped mid-turn); opening the session closes it with turn/end { reason: 'interrupted' }`,
      })
    }
    const inspection: SessionInspection = { header: session.header, events: session.events, notices }
    return open ? { ...inspection, interruptedTurn: open.turn } : inspection
  }

  list(options: ListOptions = {}): Promise<SessionSummary[]> {
    return this.backend.list({ ...options, limit: options.limit ?? 50 })
  }

  readRaw(id: string): Promise<string | undefined> {
    return this.backend.readRaw(id)
  }

  async append(id: string, events: readonly unknown[]): Promise<number> {
    this.#refuseOpenHere(id)
    let next = 0
    await this.backend.appendStored(id, (log) => {
      let existing = 0
      const first = (events[0] as { seq?: unknown } | undefined)?.seq
      const all = function* (): Generator<unknown> {
        for (const event of log.events) {
          existing++
          yield event
        }
        if (events.length > 0 && first !== existing) {
          throw new ConcurrentAppend(id, typeof first === 'number' ? first : -1, existing)
        }
        yield* events
      }
      let session: Session
      try {
        session = Session.create(id, headerInit(log.header), all())
      } catch (error) {
        // Errors in the stored part are corruption; errors in the new events are bad input.
        const seq = error instanceof SessionError ? error.details.seq : undefined
        if (typeof seq === 'number' && seq >= existing && error instanceof SessionError) {
          if (error.code === 'UNKNOWN_REQUIRED_EVENT') {
            throw new UnknownRequiredEvent(id, String(error.details.type), seq, {}, { cause: error })
          }
          throw error
        }
        throw toStoreError(error, id, log)
      }
      next = session.nextSeq
      return {
        firstSeq: existing,
        pending: session.events.slice(existing).map((event) => this.serialize(id, event)),
      }
    })
    return next
  }

  async fork(id: string, options: ForkOptions = {}): Promise<SessionHandle> {
    const parent = await this.load(id)
    const child = parent.fork(options.childId ?? newSessionId(), options.atSeq)
    return this.create({ from: child })
  }

  async close(): Promise<void> {
    const results = await Promise.allSettled([...this.#handles.values()].map((h) => h.close()))
    await this.backend.close()
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed) throw failed.reason
  }

  /** Serializes one event and enforces the size cap. */
  serialize(id: string, event: SessionEvent): PendingEvent {
    const json = JSON.stringify(event)
    // A UTF-16 code unit takes at most 3 UTF-8 bytes: count exactly only near the cap.
    if (json.length * 3 > this.maxEventBytes) {
      const bytes = Buffer.byteLength(json)
      if (bytes > this.maxEventBytes)
        throw new EventTooLarge(id, event.type, event.seq, bytes, this.maxEventBytes)
    }
    return { event, json }
  }

  /** @internal */
  forget(handle: StoreHandle): void {
    if (this.#handles.get(handle.session.id) === handle) this.#handles.delete(handle.session.id)
  }

  #adopt(handle: StoreHandle, link: HookLink): StoreHandle {
    link.target = handle
    this.#handles.set(handle.session.id, handle)
    return handle
  }

  #refuseOpenHere(id: string): void {
    if (this.#handles.has(id)) {
      throw new SessionLocked(
        id,
        { pid: process.pid, host: HOST },
        'this store already has it open; use that handle, or close it first',
      )
    }
  }
}

/** Forwards a session's `beforeCommit` to its handle, which exists only after the session. */
class HookLink {
  target: StoreHandle | undefined
  readonly hook = (event: SessionEvent): void => {
    if (!this.target) throw new KeelError('SESSION_HANDLE_NOT_READY', 'the store handle is not ready yet')
    this.target.check(event)
  }
}

class StoreHandle implements SessionHandle {
  readonly session: Session
  readonly directory?: string
  readonly notices: StoreNotice[]
  readonly #store: BackendStore
  readonly #writer: LogWriter
  readonly #unsubscribe: () => void
  #pending: PendingEvent[] = []
  #inflight: Promise<void> | null = null
  #timer: ReturnType<typeof setTimeout> | undefined
  #failure: KeelError | undefined
  #closed = false
  #closing: Promise<void> | undefined
  /** The event the size check just serialized, so the subscriber does not serialize twice. */
  #checked: PendingEvent | undefined

  constructor(store: BackendStore, session: Session, writer: LogWriter, notices: StoreNotice[]) {
    if (writer.directory !== undefined) this.directory = writer.directory
    this.#store = store
    this.session = session
    this.#writer = writer
    this.notices = notices
    this.#unsubscribe = session.subscribe((event) => this.#onCommit(event))
  }

  /** The session's `beforeCommit`: refuses appends that could not be persisted. */
  check(event: SessionEvent): void {
    if (this.#closed) throw new SessionHandleClosed(this.session.id)
    if (this.#failure) throw this.#failure
    this.#checked = this.#store.serialize(this.session.id, event)
  }

  #onCommit(event: SessionEvent): void {
    const checked = this.#checked
    this.#checked = undefined
    this.#pending.push(checked?.event === event ? checked : { event, json: JSON.stringify(event) })
    if (this.#timer === undefined && this.#inflight === null) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined
        void this.#drain()
      }, this.#store.batchWindowMs)
    }
  }

  #drain(): Promise<void> {
    if (this.#inflight) return this.#inflight
    if (this.#pending.length === 0 || this.#failure) return Promise.resolve()
    const batch = this.#pending
    this.#pending = []
    this.#inflight = (async () => {
      try {
        await this.#writer.append(batch)
      } catch (error) {
        this.#failure =
          error instanceof ConcurrentAppend
            ? error
            : new SessionWriteFailed(
                this.session.id,
                batch[0]!.event.seq,
                batch[batch.length - 1]!.event.seq,
                {
                  cause: error,
                },
              )
      } finally {
        this.#inflight = null
      }
      if (this.#pending.length > 0 && !this.#failure && this.#timer === undefined) void this.#drain()
    })()
    return this.#inflight
  }

  async flush(): Promise<void> {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer)
      this.#timer = undefined
    }
    while (!this.#failure && (this.#inflight || this.#pending.length > 0)) {
      await (this.#inflight ?? this.#drain())
    }
    if (this.#failure) throw this.#failure
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true
      let failure: unknown
      try {
        await this.flush()
      } catch (error) {
        failure = error
      }
      this.#unsubscribe()
      try {
        await this.#writer.close()
      } catch (error) {
        failure ??= error
      }
      this.#store.forget(this)
      if (failure !== undefined) throw failure
    })()
    return this.#closing
  }
}
