import { errorMessage, KeelError } from '@keel/base'
import {
  SESSION_FORMAT_VERSION,
  type Session,
  type SessionCheckpoint,
  type SessionEvent,
} from '@keel/session'
import type { LogWriter, PendingEvent } from './backend.js'
import { spillCheckpoint } from './checkpoint-file.js'
import { ConcurrentAppend, SessionHandleClosed, SessionWriteFailed, StoreUnavailable } from './errors.js'
import { type IntegrityMark, type IntegrityStart, IntegrityTracker } from './integrity.js'
import type { SessionHandle, StoreNotice } from './store.js'

/** Uncovered lines after which a batch gets an integrity record even inside a turn. */
const MARK_AT_LEAST_EVERY = 4096

/**
 * A checkpoint at a turn end waits until the log grew by this many times the size of the
 * last one: writing checkpoints then costs at most a quarter of what appending costs, however
 * large the surface (and so the checkpoint) is.
 */
const CHECKPOINT_AMORTIZED = 4

/** What a handle needs from the store that made it. */
export interface HandleOwner {
  /** How long appended events wait to be written together without a flush, in ms; undefined: until the next flush. */
  readonly batchWindowMs: number | undefined
  /** When to write checkpoints (false: never). */
  readonly checkpoints: { readonly every: number; readonly minEvents: number } | false
  /** Over this many bytes an event is stored as a blob (in checkpoints too). */
  readonly maxLineBytes: number
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

/** Where a handle starts: the integrity chain to continue, the seq and size of the latest checkpoint. */
export interface HandleStart {
  readonly integrity: IntegrityStart | undefined
  readonly checkpointSeq: number
  readonly checkpointBytes: number
}

/**
 * The writer side of one open session: events the session commits are queued and written
 * in batches at each `flush()` (one at a time, in seq order; with `batchWindowMs`, also
 * after that window), and the first failed batch is sticky — it refuses further appends and
 * rejects every later `flush()` and `close()`. Except when the store was only unavailable
 * (`StoreUnavailable`, transient: a server restarting or not answering in time): then the
 * batch is kept in front of the queue, appends are still accepted, and every `flush()` tries
 * again, so the handle recovers when the server does. A flush resolves only once everything
 * before it is durable. A batch that ends a turn carries an integrity record; at turn ends
 * and on close the handle may write a checkpoint.
 */
export class StoreHandle implements SessionHandle {
  readonly session: Session
  readonly directory?: string
  readonly notices: StoreNotice[]
  readonly #owner: HandleOwner
  readonly #writer: LogWriter
  readonly #unsubscribe: () => void
  readonly #tracker: IntegrityTracker | undefined
  #pending: PendingEvent[] = []
  #inflight: Promise<void> | null = null
  #timer: ReturnType<typeof setTimeout> | undefined
  #failure: KeelError | undefined
  /** `#failure` is a transient unavailability: the batch waits in `#pending` for the next flush. */
  #retry = false
  #closed = false
  #closing: Promise<void> | undefined
  /** A `turn/end` is queued: the next batch gets an integrity record. */
  #turnEnded = false
  #checkpointSeq: number
  #checkpointBytes: number
  /** Bytes of the lines appended since the latest checkpoint. */
  #bytesSince = 0
  /** The event the size check just serialized, so the subscriber does not serialize twice. */
  #checked: PendingEvent | undefined

  constructor(
    owner: HandleOwner,
    session: Session,
    writer: LogWriter,
    notices: StoreNotice[],
    start: HandleStart,
  ) {
    if (writer.directory !== undefined) this.directory = writer.directory
    this.#owner = owner
    this.session = session
    this.#writer = writer
    this.notices = notices
    this.#checkpointSeq = start.checkpointSeq
    this.#checkpointBytes = start.checkpointBytes
    if (start.integrity) this.#tracker = new IntegrityTracker(start.integrity, session.nextSeq)
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
    if (event.type === 'turn/end') this.#turnEnded = true
    const window = this.#owner.batchWindowMs
    if (window !== undefined && this.#timer === undefined && this.#inflight === null) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined
        void this.#drain(false)
      }, window)
    }
  }

  #drain(final: boolean): Promise<void> {
    if (this.#inflight) return this.#inflight
    if (this.#failure) return Promise.resolve()
    const batch = this.#pending
    const tracker = this.#tracker
    if (batch.length === 0 && !(final && tracker && tracker.from < tracker.next)) {
      return final ? this.#checkpointOnClose() : Promise.resolve()
    }
    this.#pending = []
    const position = tracker?.position()
    const bytesBefore = this.#bytesSince
    let mark: IntegrityMark | undefined
    if (tracker) {
      for (const item of batch) {
        tracker.add(item.json)
        this.#bytesSince += item.json.length + 1
      }
      if (this.#turnEnded || final || tracker.next - tracker.from >= MARK_AT_LEAST_EVERY)
        mark = tracker.mark()
    }
    const atTurnEnd = this.#turnEnded
    this.#turnEnded = false
    // Taken now, before anything else is appended: the state after exactly this batch.
    const state = mark && this.#checkpointDue(atTurnEnd, final, mark) ? this.#capture() : undefined
    this.#inflight = (async () => {
      try {
        await this.#writer.append(batch, mark)
        if (mark) tracker!.commit(mark)
        if (state && mark) await this.#save(state, mark)
      } catch (error) {
        const first = batch[0]?.event.seq ?? this.session.nextSeq
        const last = batch[batch.length - 1]?.event.seq ?? this.session.nextSeq
        if (error instanceof StoreUnavailable && error.transient) {
          // nothing of the batch is stored: keep it, and its place in the integrity chain
          if (tracker && position) tracker.rewind(position)
          this.#bytesSince = bytesBefore
          this.#turnEnded ||= atTurnEnd
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
      // In window mode, what was appended meanwhile follows; otherwise it waits for the next flush.
      const windowed = this.#owner.batchWindowMs !== undefined
      if (windowed && this.#pending.length > 0 && !this.#failure && this.#timer === undefined)
        void this.#drain(false)
    })()
    return this.#inflight
  }

  /** Whether a batch ending at `mark.next` should be followed by a checkpoint. */
  #checkpointDue(atTurnEnd: boolean, final: boolean, mark: IntegrityMark): boolean {
    const policy = this.#owner.checkpoints
    if (!policy || !this.#writer.saveCheckpoint || mark.next !== this.session.nextSeq) return false
    const since = mark.next - this.#checkpointSeq
    if (since <= 0) return false
    if (atTurnEnd && since >= policy.every)
      return this.#bytesSince >= CHECKPOINT_AMORTIZED * this.#checkpointBytes
    return final && mark.next >= policy.minEvents
  }

  /** On close with nothing left to write: a checkpoint of a log no checkpoint covers yet (a full replay). */
  async #checkpointOnClose(): Promise<void> {
    const last = this.#tracker?.last
    if (!last || !this.#checkpointDue(false, true, last)) return
    const state = this.#capture()
    if (state) await this.#save(state, last)
  }

  #capture(): SessionCheckpoint | undefined {
    try {
      return this.session.checkpoint()
    } catch (error) {
      this.#notCheckpointed(error)
      return undefined
    }
  }

  async #save(state: SessionCheckpoint, mark: IntegrityMark): Promise<void> {
    try {
      const spilled = spillCheckpoint(state, this.#owner.maxLineBytes)
      this.#checkpointBytes = await this.#writer.saveCheckpoint!({
        session: this.session.id,
        sessionFormat: SESSION_FORMAT_VERSION,
        seq: mark.next,
        mark,
        state: spilled.state,
        blobs: spilled.blobs,
      })
      this.#checkpointSeq = mark.next
      this.#bytesSince = 0
    } catch (error) {
      this.#notCheckpointed(error)
    }
  }

  /** A checkpoint is an optimization: failing to write one loses nothing, and is said. */
  #notCheckpointed(error: unknown): void {
    this.notices.push({
      code: 'CHECKPOINT_NOT_WRITTEN',
      message: `session ${this.session.id}: no checkpoint was written at seq ${this.session.nextSeq} (${errorMessage(error)}); the next load replays the log from the previous one`,
    })
  }

  async flush(): Promise<void> {
    await this.#flush(false)
  }

  async #flush(final: boolean): Promise<void> {
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
      await (this.#inflight ?? this.#drain(false))
    }
    if (this.#failure) throw this.#failure
    if (final) await this.#drain(true)
    if (this.#failure) throw this.#failure
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true
      let failure: unknown
      try {
        await this.#flush(true)
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
