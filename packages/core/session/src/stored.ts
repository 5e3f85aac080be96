import { deepFreezeJson, freezeParsedJson, toFrozenJson } from '@keel/base'
import {
  type AnyEvent,
  adoptStored,
  asSessionError,
  buildEvent,
  checkData,
  checkStoredShape,
} from './envelope.js'
import { SessionError } from './errors.js'
import type { KnownEventType } from './known-event-types.generated.js'
import { type EventRegistration, getEventRegistration } from './registry.js'
import type { SessionEvent } from './types.js'

/** How a session reads stored events (a seed, a tail, a block of its prefix). */
export interface StoredReading {
  readonly id: string
  readonly known: Readonly<Record<string, KnownEventType>>
  /** Values straight from `JSON.parse` that nothing else holds: checked and frozen in place. */
  readonly parsed: boolean
  /** Seqs the store vouches for (written by it under this format, bytes intact): their schema is skipped. */
  readonly trusted: ((seq: number) => boolean) | undefined
}

/**
 * A stored event of a type this build does not know: refused unless ignorable (or
 * `keepUnknown`, for read-only views), kept verbatim.
 */
export function opaqueEvent(id: string, raw: unknown, seq: number, keepUnknown = false): SessionEvent {
  const stored = checkStoredShape(raw, seq)
  const type = stored.type
  if (stored.ignorable !== true && !keepUnknown) {
    throw new SessionError(
      'UNKNOWN_REQUIRED_EVENT',
      `session ${id}: event '${type}' at seq ${seq} is unknown to this build and not marked ignorable; it may change how the rest of the log reads, so the session is refused (update Keel or load the plugin that owns '${type}')`,
      { type, seq },
    )
  }
  try {
    return toFrozenJson(
      stored,
      `event[${seq}]`,
      `ignorable event '${type}' at seq ${seq}`,
    ) as unknown as SessionEvent
  } catch (error) {
    throw asSessionError(error, type, seq)
  }
}

/**
 * Checks one stored event of a type this build knows (`registration`: its plugin's, when
 * loaded) — envelope, plain JSON, schema (unless the store vouches for it) — and returns it frozen: the parsed value itself when
 * `reading.parsed` (nothing is rebuilt or copied), a checked copy otherwise. Lifecycle,
 * surface and invariant rules are the caller's.
 */
export function readStored(
  raw: unknown,
  seq: number,
  reading: StoredReading,
  registration: EventRegistration | undefined,
): SessionEvent {
  let event: AnyEvent
  if (reading.parsed) {
    event = adoptStored(raw, seq)
    if (registration && reading.trusted?.(seq) === true) freezeData(event)
    else checkData(event.type, seq, event.data, registration, true)
  } else {
    event = buildEvent(checkStoredShape(raw, seq), false)
    event.data = checkData(event.type, seq, event.data, registration, false)
  }
  return Object.freeze(event) as SessionEvent
}

/**
 * An event of a resumed session's covered prefix read back: from its checkpoint (the
 * store checked the checkpoint's digest: frozen only), or on demand from the log (nothing
 * vouched for those bytes: its schema runs too). `opaque` as the checkpoint recorded it.
 */
export function readPrefixEvent(
  id: string,
  known: Readonly<Record<string, KnownEventType>>,
  raw: unknown,
  seq: number,
  opaque: boolean,
  checkSchema: boolean,
): SessionEvent {
  if (opaque) return opaqueEvent(id, raw, seq)
  const event = adoptStored(raw, seq)
  const registration = getEventRegistration(event.type)
  if (!registration && !Object.hasOwn(known, event.type)) {
    throw new SessionError(
      'EVENT_ENVELOPE_INVALID',
      `session ${id}: the stored event at seq ${seq} has type '${event.type}', unknown to this build, where the checkpoint it was resumed from recorded an interpreted event; the log changed under the checkpoint`,
      { seq, type: event.type },
    )
  }
  if (checkSchema) checkData(event.type, seq, event.data, registration, true)
  else freezeData(event)
  return Object.freeze(event) as SessionEvent
}

/** Freezes a parsed event's data (the message of a refusal is built only then). */
function freezeData(event: AnyEvent): void {
  if (freezeParsedJson(event.data)) return
  try {
    deepFreezeJson(event.data, 'data', `event '${event.type}' (seq ${event.seq})`)
  } catch (error) {
    throw asSessionError(error, event.type, event.seq)
  }
}
