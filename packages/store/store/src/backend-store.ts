import { SESSION_FORMAT_VERSION, Session, type SessionEvent, type SessionOptions } from '@keel/session'
import {
  HOST,
  type LogWriter,
  newSessionId,
  type PendingEvent,
  type ReadOptions,
  type StoreBackend,
  type StoredLog,
} from './backend.js'
import { DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_LINE_BYTES } from './blob.js'
import { DEFAULT_CHECKPOINT_EVERY, DEFAULT_CHECKPOINT_MIN_EVENTS } from './checkpoint-file.js'
import { SessionFormatUnsupported, SessionLocked } from './errors.js'
import { type HandleStart, HookLink, StoreHandle } from './handle.js'
import { headerRoot, type IntegrityMark, type IntegrityStart, IntegrityTracker } from './integrity.js'
import { closeInterruptedTurnNoticed, interruptedTurnNotice } from './interrupted-turn.js'
import { type LoadedSession, loadSession, verifySession } from './load.js'
import { serializeEvent } from './serialize.js'
import type {
  CreateSessionInit,
  ForkOptions,
  ListOptions,
  SessionHandle,
  SessionInspection,
  SessionStore,
  SessionSummary,
  SessionVerification,
  StoreNotice,
  StoreOptions,
} from './store.js'
import { headerInit, validateAppend } from './validate.js'

/**
 * A {@link SessionStore} over a {@link StoreBackend}: the logic every backend shares.
 * Handles subscribe to their session; appended events are serialized (and size-checked)
 * before commit, written at each flush, and each batch that ends a turn carries an
 * integrity record; checkpoints are written at turn ends and on close, and loads start
 * from the latest one that holds.
 */
export class BackendStore implements SessionStore {
  readonly kind: string
  readonly backend: StoreBackend
  readonly maxEventBytes: number
  readonly maxLineBytes: number
  readonly batchWindowMs: number | undefined
  readonly checkpoints: { readonly every: number; readonly minEvents: number } | false
  readonly #handles = new Map<string, StoreHandle>()

  constructor(backend: StoreBackend, options: StoreOptions = {}) {
    this.kind = backend.kind
    this.backend = backend
    this.maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES
    this.maxLineBytes = Math.min(options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, this.maxEventBytes)
    this.batchWindowMs = options.batchWindowMs
    const policy = options.checkpoints
    this.checkpoints =
      policy === false
        ? false
        : {
            every: policy?.every ?? DEFAULT_CHECKPOINT_EVERY,
            minEvents: policy?.minEvents ?? DEFAULT_CHECKPOINT_MIN_EVENTS,
          }
  }

  /** How a load reads the log first: from the latest checkpoint, vouching for covered lines. */
  get #readFirst(): ReadOptions {
    return { checkpoint: this.checkpoints !== false, trust: true }
  }

  async create(init: CreateSessionInit = {}): Promise<SessionHandle> {
    const id = init.id ?? init.from?.id ?? newSessionId()
    const link = new HookLink()
    const options: SessionOptions = { beforeCommit: link.hook }
    const session = init.from
      ? Session.create(id, headerInit(init.from.header), init.from.events, options)
      : Session.create(id, init.header ?? {}, undefined, options)
    const initial = session.events.map((event) => this.serialize(id, event))
    const { mark, start } = covering(session, initial)
    const { writer, notices } = await this.backend.create(session.header, initial, mark)
    return this.#adopt(
      new StoreHandle(this, session, writer, notices, {
        integrity: start,
        checkpointSeq: 0,
        checkpointBytes: 0,
      }),
      link,
    )
  }

  async open(id: string): Promise<SessionHandle> {
    this.#refuseOpenHere(id)
    const opened = await this.backend.openForWrite(id, this.#readFirst)
    const link = new HookLink()
    let loaded: LoadedSession
    let start: HandleStart
    try {
      loaded = await loadSession(id, opened.log, (o) => this.backend.read(id, o), { beforeCommit: link.hook })
      this.#noticeMissing(loaded)
      if (loaded.log.migratedFrom === undefined) {
        await opened.writer.prepare?.(loaded.log)
        start = handleStart(loaded)
      } else start = await this.#rewriteMigrated(id, loaded.session, loaded.log, opened.writer)
    } catch (error) {
      await releaseWhileFailing(opened.writer)
      throw error
    }
    const notices = [...opened.notices, ...loaded.notices]
    const handle = this.#adopt(new StoreHandle(this, loaded.session, opened.writer, notices, start), link)
    let closed: ReturnType<typeof closeInterruptedTurnNoticed>
    try {
      closed = closeInterruptedTurnNoticed(loaded.session)
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
    return (await this.#load(id)).session
  }

  async inspect(id: string): Promise<SessionInspection> {
    // A view, not a run: events whose plugin is not loaded are kept as stored and said so.
    const { session, notices } = await this.#load(id, { keepUnknownEvents: true })
    const unknown = unknownEventsNotice(session)
    if (unknown) notices.push(unknown)
    const open = session.openTurn
    if (open) notices.push(interruptedTurnNotice(open.turn))
    const inspection: SessionInspection = { header: session.header, events: session.events, notices }
    return open ? { ...inspection, interruptedTurn: open.turn } : inspection
  }

  verify(id: string): Promise<SessionVerification> {
    return verifySession(id, (o) => this.backend.read(id, o))
  }

  async #load(id: string, options: SessionOptions = {}): Promise<LoadedSession> {
    const first = await this.backend.read(id, this.#readFirst)
    const loaded = await loadSession(id, first, (o) => this.backend.read(id, o), options)
    this.#noticeMissing(loaded)
    return loaded
  }

  /** Says so when a log long enough to have a checkpoint was replayed because it has none. */
  #noticeMissing(loaded: LoadedSession): void {
    const policy = this.checkpoints
    const { session, log, notices } = loaded
    if (!policy || log.checkpoint || !log.integrity || session.nextSeq < policy.minEvents) return
    if (notices.some((n) => n.code === 'CHECKPOINT_IGNORED')) return
    notices.push({
      code: 'CHECKPOINT_MISSING',
      message: `session ${session.id} has no checkpoint; all ${session.nextSeq} events were replayed (a writer writes one at its next turn end or on close)`,
    })
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
  async #rewriteMigrated(
    id: string,
    session: Session,
    log: StoredLog,
    writer: LogWriter,
  ): Promise<HandleStart> {
    if (!writer.rewrite) {
      throw new SessionFormatUnsupported(
        id,
        log.migratedFrom,
        SESSION_FORMAT_VERSION,
        'no-migration',
        `${this.backend.where} (this backend reads upgraded logs but cannot rewrite them; load it read-only)`,
      )
    }
    const events = session.events.map((event) => this.serialize(id, event))
    const { mark, start } = covering(session, events)
    await writer.rewrite(session.header, events, mark)
    await writer.prepare?.({ ...log, integrity: () => start })
    return { integrity: start, checkpointSeq: 0, checkpointBytes: 0 }
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

/** The integrity record covering a whole new log (`events` of `session`), and where its writer continues. */
function covering(
  session: Session,
  events: readonly PendingEvent[],
): { mark: IntegrityMark | undefined; start: IntegrityStart } {
  const root = { chain: headerRoot(session.header), from: 0, crc: 0 }
  const tracker = new IntegrityTracker(root, 0)
  for (const item of events) tracker.add(item.json)
  const mark = tracker.mark()
  if (!mark) return { mark, start: root }
  return { mark, start: { chain: mark.chain, from: mark.next, crc: 0, last: mark } }
}

/** Where the handle of a loaded session starts: the integrity chain and the checkpoint it resumed from. */
function handleStart(loaded: LoadedSession): HandleStart {
  return {
    integrity: loaded.log.integrity?.(),
    checkpointSeq: loaded.log.checkpoint?.doc.seq ?? 0,
    checkpointBytes: loaded.log.checkpoint?.bytes ?? 0,
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
  // only the opaque seqs are read (a resumed session's events before its checkpoint are read on demand)
  for (const seq of session.opaqueSeqs()) {
    const event = session.events[seq]!
    if (event.ignorable) continue
    counts.set(event.type, (counts.get(event.type) ?? 0) + 1)
  }
  if (counts.size === 0) return undefined
  const list = [...counts].map(([type, n]) => `${type} (${n})`).join(', ')
  return {
    code: 'UNKNOWN_EVENTS_KEPT',
    message: `events no loaded plugin owns, shown as stored: ${list}; the session opens only with their plugin installed`,
  }
}
