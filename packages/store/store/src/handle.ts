import { KeelError } from '@keel/base'
import type { Session, SessionEvent } from '@keel/session'
import type { LogWriter, PendingEvent } from './backend.js'
import { ConcurrentAppend, SessionHandleClosed, SessionWriteFailed, StoreUnavailable } from './errors.js'
import type { SessionHandle, StoreNotice } from './store.js'

/** What a handle needs from the store that made it. */
export interface HandleOwner {
  /** How long appended events wait to be written together, in ms. */
  readonly batchWindowMs: number
  /** Serializes (and size-checks) one event of session `id`. */
  serialize(id: string, event: SessionEvent): PendingEvent
  /** Called once when the handle closed: the session may be opened here again. */
  forget(handle: StoreHandle): void
}

/** Forwards a session's `beforeCommit` to its handle, which exists only after the session. */
export class HookLink {
  target: StoreHandle | undefined
  readonly hook = (event: SessionEvent): void => {
    if (!this.target) throw new KeelError('SESSION_HANDLE_NOT_READY', 'the store handle is not ready yet')
    this.target.check(event)
  }
}

/**
 * The writer side of one open session: events the session commits are queued, written in
 * batches (one at a time, in seq order), and the first failed batch is sticky — it refuses
 * further appends and rejects every later `flush()` and `close()`. Except when the store was
 * only unavailable (`StoreUnavailable`, transient: a server restarting or not answering in
 * time): then the batch is kept in front of the queue, appends are still accepted, and
 * every `flush()` tries again, so the handle recovers when the server does. A flush
 * resolves only once everything before it is durable.
 */
export class StoreHandle implements SessionHandle {
  readonly session: Session
  readonly directory?: string
  readonly notices: StoreNotice[]
  readonly #owner: HandleOwner
  readonly #writer: LogWriter
  readonly #unsubscribe: () => void
  #pending: PendingEvent[] = []
  #inflight: Promise<void> | null = null
  #timer: ReturnType<typeof setTimeout> | undefined
  #failure: KeelError | undefined
  /** `#failure` is a transient unavailability: the batch waits in `#pending` for the next flush. */
  #retry = false
  #closed = false
  #closing: Promise<void> | undefined
  /** The event the size check just serialized, so the subscriber does not serialize twice. */
  #checked: PendingEvent | undefined

  constructor(owner: HandleOwner, session: Session, writer: LogWriter, notices: StoreNotice[]) {
    if (writer.directory !== undefined) this.directory = writer.directory
    this.#owner = owner
    this.session = session
    this.#writer = writer
    this.notices = notices
    this.#unsubscribe = session.subscribe((event) => this.#onCommit(event))
  }

  /** The session's `beforeCommit`: refuses appends that could not be persisted. */
  check(event: SessionEvent): void {
    if (this.#closed) throw new SessionHandleClosed(this.session.id)
    if (this.#failure && !this.#retry) throw this.#failure
    this.#checked = this.#owner.serialize(this.session.id, event)
  }

  #onCommit(event: SessionEvent): void {
    const checked = this.#checked
    this.#checked = undefined
    this.#pending.push(checked?.event === event ? checked : this.#owner.serialize(this.session.id, event))
    if (this.#timer === undefined && this.#inflight === null) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined
        void this.#drain()
      }, this.#owner.batchWindowMs)
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
        const first = batch[0]!.event.seq
        const last = batch[batch.length - 1]!.event.seq
        if (error instanceof StoreUnavailable && error.transient) {
          this.#pending = this.#pending.length === 0 ? batch : [...batch, ...this.#pending]
          this.#failure = new SessionWriteFailed(this.session.id, first, last, { cause: error, retry: true })
          this.#retry = true
        } else {
          this.#failure =
            error instanceof ConcurrentAppend
              ? error
              : new SessionWriteFailed(this.session.id, first, last, { cause: error })
        }
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
    if (this.#retry && this.#inflight === null) {
      // the store was unavailable: try the kept batch (and what came after it) once more
      this.#failure = undefined
      this.#retry = false
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
      this.#owner.forget(this)
      if (failure !== undefined) throw failure
    })()
    return this.#closing
  }
}
