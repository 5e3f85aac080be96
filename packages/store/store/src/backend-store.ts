import { SESSION_FORMAT_VERSION, Session, type SessionEvent, type SessionOptions } from '@keel/session'
import {
  HOST,
  type LogWriter,
  newSessionId,
  type PendingEvent,
  type StoreBackend,
  type StoredLog,
} from './backend.js'
import { DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_LINE_BYTES } from './blob.js'
import { SessionFormatUnsupported, SessionLocked } from './errors.js'
import { HookLink, StoreHandle } from './handle.js'
import { closeInterruptedTurn, interruptedTurnNotice } from './interrupted-turn.js'
import { serializeEvent } from './serialize.js'
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
import { headerInit, materialize, validateAppend } from './validate.js'

/**
 * A {@link SessionStore} over a {@link StoreBackend}: the logic every backend shares.
 * Handles subscribe to their session; appended events are serialized (and size-checked)
 * before commit, batched for `batchWindowMs`, and written one batch at a time.
 */
export class BackendStore implements SessionStore {
  readonly kind: string
  readonly backend: StoreBackend
  readonly maxEventBytes: number
  readonly maxLineBytes: number
  readonly batchWindowMs: number
  readonly #handles = new Map<string, StoreHandle>()

  constructor(backend: StoreBackend, options: StoreOptions = {}) {
    this.kind = backend.kind
    this.backend = backend
    this.maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES
    this.maxLineBytes = Math.min(options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, this.maxEventBytes)
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
      else await this.#rewriteMigrated(id, session, opened.log, opened.writer)
    } catch (error) {
      await releaseWhileFailing(opened.writer)
      throw error
    }
    const notices = [...opened.notices, ...opened.log.notices]
    const handle = this.#adopt(new StoreHandle(this, session, opened.writer, notices), link)
    let closed: ReturnType<typeof closeInterruptedTurn>
    try {
      closed = closeInterruptedTurn(session)
      if (closed) await handle.flush()
    } catch (error) {
      // Closing the handle flushes again and rejects with this same failure (or, after a
      // refused append, fails releasing the writer): `error` is the one to report.
      await handle.close().catch(() => undefined)
      throw error
    }
    if (closed) notices.push(closed)
    return handle
  }

  async load(id: string): Promise<Session> {
    return materialize(id, await this.backend.read(id))
  }

  async inspect(id: string): Promise<SessionInspection> {
    const log = await this.backend.read(id)
    // A view, not a run: events whose plugin is not loaded are kept as stored and said so.
    const session = materialize(id, log, { keepUnknownEvents: true })
    const notices = [...log.notices]
    const unknown = unknownEventsNotice(session)
    if (unknown) notices.push(unknown)
    const open = session.openTurn
    if (open) notices.push(interruptedTurnNotice(open.turn))
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
      const validated = validateAppend(id, log, events, (event) => this.serialize(id, event))
      next = validated.nextSeq
      return { firstSeq: validated.firstSeq, pending: validated.pending }
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
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (!failed) return this.backend.close()
    // A handle whose events are not durable is the failure to report; the backend failing to
    // release its resources on top of it says nothing about the log and is dropped.
    await this.backend.close().catch(() => undefined)
    throw failed.reason
  }

  /**
   * Serializes one event: its line, or a blob stub and the blob when the line would be over
   * `maxLineBytes`; refuses an event over `maxEventBytes` with `EventTooLarge`.
   */
  serialize(id: string, event: SessionEvent): PendingEvent {
    return serializeEvent(id, event, this)
  }

  /** @internal */
  forget(handle: StoreHandle): void {
    if (this.#handles.get(handle.session.id) === handle) this.#handles.delete(handle.session.id)
  }

  /** Rewrites a log read in an older format in the current one, then lets the writer prepare. */
  async #rewriteMigrated(id: string, session: Session, log: StoredLog, writer: LogWriter): Promise<void> {
    if (!writer.rewrite) {
      throw new SessionFormatUnsupported(
        id,
        log.migratedFrom,
        SESSION_FORMAT_VERSION,
        'no-migration',
        `${this.backend.where} (this backend reads upgraded logs but cannot rewrite them; load it read-only)`,
      )
    }
    await writer.rewrite(
      session.header,
      session.events.map((event) => this.serialize(id, event)),
    )
    await writer.prepare?.()
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

/**
 * Releases a writer while an error of opening is being reported. A failure to release is
 * secondary to that error (which says what went wrong) and is dropped.
 */
async function releaseWhileFailing(writer: LogWriter): Promise<void> {
  await writer.close().catch(() => undefined)
}

/** `UNKNOWN_EVENTS_KEPT` for the events no loaded plugin reads (not ignorable ones), by type. */
function unknownEventsNotice(session: Session): StoreNotice | undefined {
  const counts = new Map<string, number>()
  for (const event of session.events) {
    if (event.ignorable || !session.isOpaque(event.seq)) continue
    counts.set(event.type, (counts.get(event.type) ?? 0) + 1)
  }
  if (counts.size === 0) return undefined
  const list = [...counts].map(([type, n]) => `${type} (${n})`).join(', ')
  return {
    code: 'UNKNOWN_EVENTS_KEPT',
    message: `events no loaded plugin owns, shown as stored: ${list}; the session opens only with their plugin installed`,
  }
}
