import {
  Session,
  SessionError,
  type SessionEvent,
  type SessionHeader,
  type SessionHeaderInit,
  type SessionOptions,
} from '@keel/session'
import type { PendingEvent, StoredLog } from './backend.js'
import { ConcurrentAppend, SessionCorrupt, UnknownRequiredEvent } from './errors.js'

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

/**
 * A validation failure of a stored log as a store error located in the stored artifact
 * (file and line for JSONL): `UnknownRequiredEvent` or `SessionCorrupt`. Other errors pass.
 */
export function toStoreError(error: unknown, id: string, log: StoredLog): unknown {
  if (!(error instanceof SessionError)) return error
  const seq = typeof error.details.seq === 'number' ? error.details.seq : undefined
  if (error.code === 'UNKNOWN_REQUIRED_EVENT' && seq !== undefined) {
    return new UnknownRequiredEvent(id, String(error.details.type), seq, log.where(seq), { cause: error })
  }
  return new SessionCorrupt(id, log.where(seq ?? -1), error.message, { cause: error })
}

/** What {@link validateAppend} hands the backend to write, and the session's next seq after it. */
export interface ValidatedAppend {
  firstSeq: number
  pending: PendingEvent[]
  nextSeq: number
}

/**
 * Validates already-formed events appended to a stored log exactly as a load would, and
 * serializes them. The first new seq must be the stored log's next seq (`ConcurrentAppend`
 * otherwise). Failures in the stored part are corruption located in the artifact; failures
 * in the new events are bad input (`SessionError`, or `UnknownRequiredEvent` without a line).
 */
export function validateAppend(
  id: string,
  log: StoredLog,
  events: readonly unknown[],
  serialize: (event: SessionEvent) => PendingEvent,
): ValidatedAppend {
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
  return {
    firstSeq: existing,
    pending: session.events.slice(existing).map(serialize),
    nextSeq: session.nextSeq,
  }
}
