import type { SessionEvent } from '@keel/session'
import type { PendingEvent } from './backend.js'
import { spill } from './blob.js'
import { EventTooLarge } from './errors.js'

/** The size limits of a store, in UTF-8 bytes of an event's JSON. */
export interface EventLimits {
  /** Over this an event is spilled to a blob and its line is a stub. */
  readonly maxLineBytes: number
  /** Over this an event is refused with `EventTooLarge`. */
  readonly maxEventBytes: number
}

/**
 * Serializes one event of session `id`: its line, or a blob stub and the blob when the
 * line would be over `maxLineBytes`; refuses an event over `maxEventBytes` with `EventTooLarge`.
 */
export function serializeEvent(id: string, event: SessionEvent, limits: EventLimits): PendingEvent {
  const json = JSON.stringify(event)
  // A UTF-16 code unit takes at most 3 UTF-8 bytes: count exactly only near the cap.
  if (json.length * 3 <= limits.maxLineBytes) return { event, json }
  const bytes = Buffer.byteLength(json)
  if (bytes <= limits.maxLineBytes) return { event, json }
  if (bytes > limits.maxEventBytes)
    throw new EventTooLarge(id, event.type, event.seq, bytes, limits.maxEventBytes)
  return { event, ...spill(event, json, bytes) }
}
