import { errorMessage } from '@keel/base'
import { SessionError } from './errors.js'
import type { Session } from './session.js'
import type { SessionEvent } from './types.js'

/** Called after an event is committed. A listener may not append (that is an error). */
export type SessionListener = (event: SessionEvent, session: Session) => void

/**
 * A session's listeners. Every listener hears every committed event even when an earlier
 * one throws; the failures are then reported together as `SUBSCRIBER_FAILED`.
 */
export class Subscribers {
  readonly #listeners = new Set<SessionListener>()
  #notifying = false

  /** Whether listeners are being notified right now (an append now would re-enter). */
  get notifying(): boolean {
    return this.#notifying
  }

  add(listener: SessionListener): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  notify(event: SessionEvent, session: Session): void {
    if (this.#listeners.size === 0) return
    this.#notifying = true
    const failures: unknown[] = []
    try {
      for (const listener of this.#listeners) {
        try {
          listener(event, session)
        } catch (error) {
          failures.push(error)
        }
      }
    } finally {
      this.#notifying = false
    }
    if (failures.length > 0) {
      throw new SessionError(
        'SUBSCRIBER_FAILED',
        `event '${event.type}' was committed at seq ${event.seq}, but ${failures.length} subscriber(s) threw: ${failures.map((f) => errorMessage(f)).join('; ')}`,
        { type: event.type, seq: event.seq, committed: true },
        { cause: failures[0] },
      )
    }
  }
}
