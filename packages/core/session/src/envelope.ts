import {
  boundIssues,
  deepFreezeJson,
  formatJsonPath,
  freezeParsedJson,
  NonJsonValueError,
  toFrozenJson,
} from '@keel/base'
import { SessionError } from './errors.js'
import type { EventRegistration } from './registry.js'
import { SURFACE_TYPES } from './surface.js'
import type { SessionSeq, SurfaceOp } from './types.js'

/** An event as the session handles it before its type is narrowed. */
export type AnyEvent = {
  type: string
  seq: number
  time: number
  data: unknown
  ignorable?: true
  surfaceOp?: SurfaceOp
  sourceEventSeqs?: readonly number[]
}

/** The envelope fields of a live append or a stored event, not yet checked. */
export type StoredEnvelope = {
  type: string
  seq: number
  time: number
  data: unknown
  ignorable?: true
  surfaceOp?: SurfaceOp
  sourceEventSeqs?: number[]
}

/** Whether `key` is an envelope field (a switch: cheaper per key than a set lookup, once per field of every loaded event). */
function isEnvelopeKey(key: string): boolean {
  switch (key) {
    case 'type':
    case 'seq':
    case 'time':
    case 'data':
    case 'ignorable':
    case 'surfaceOp':
    case 'sourceEventSeqs':
      return true
    default:
      return false
  }
}

/**
 * Checks the shape of one stored event at index `seq`: an object with a string `type`,
 * `seq` equal to its index, `data`, and no field outside the envelope. Returns it typed.
 */
export function checkStoredShape(raw: unknown, seq: number): StoredEnvelope {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw envelopeError(seq, 'is not an object')
  }
  const stored = raw as Partial<StoredEnvelope> & Record<string, unknown>
  const type = stored.type
  if (typeof type !== 'string' || type.length === 0) throw envelopeError(seq, 'has no string `type`')
  if (stored.seq !== seq) {
    throw new SessionError(
      'EVENT_ENVELOPE_INVALID',
      `event '${type}' at index ${seq} has seq ${JSON.stringify(stored.seq)}; seqs must be contiguous from 0 (a duplicated or missing event)`,
      { seq, type, storedSeq: stored.seq },
    )
  }
  for (const key in stored) {
    if (!isEnvelopeKey(key)) throw envelopeError(seq, `has an unknown envelope field '${key}'`, type)
  }
  if (!('data' in stored)) throw envelopeError(seq, 'has no `data`', type)
  return stored as StoredEnvelope
}

/**
 * Checks one stored event at index `seq` in place — shape, time, `ignorable`, surface
 * fields — and returns the same object as the event (its surface fields frozen, `data` not
 * yet checked). A load builds nothing per event: the parsed value becomes the event.
 */
export function adoptStored(raw: unknown, seq: number): AnyEvent {
  const stored = checkStoredShape(raw, seq)
  const type = stored.type
  if (typeof stored.time !== 'number' || !Number.isFinite(stored.time) || stored.time < 0) {
    throw envelopeError(seq, timeReason(stored.time), type)
  }
  if (stored.ignorable !== undefined && stored.ignorable !== true) {
    throw envelopeError(seq, 'has `ignorable` other than true', type)
  }
  if (stored.surfaceOp !== undefined || stored.sourceEventSeqs !== undefined) {
    checkSurfaceFields(stored)
    if (stored.surfaceOp !== undefined) checkSurfaceOp(type, seq, stored.surfaceOp, true)
    if (stored.sourceEventSeqs !== undefined) Object.freeze(stored.sourceEventSeqs)
  }
  return stored as AnyEvent
}

function timeReason(time: unknown): string {
  return `has time ${typeof time === 'string' ? JSON.stringify(time) : String(time)}; expected Unix epoch milliseconds (a finite number ≥ 0)`
}

/** Surface fields only on surface types, `sourceEventSeqs` only earlier seqs. */
function checkSurfaceFields(e: StoredEnvelope): void {
  const { type, seq } = e
  if (!SURFACE_TYPES.has(type)) {
    throw new SessionError(
      'SURFACE_FIELDS_NOT_ALLOWED',
      `event '${type}' (seq ${seq}) carries ${e.surfaceOp !== undefined ? 'surfaceOp' : 'sourceEventSeqs'}, but only surface events (${[...SURFACE_TYPES].join(', ')}) may`,
      { type, seq },
    )
  }
  const sources = e.sourceEventSeqs
  if (sources !== undefined) {
    if (!Array.isArray(sources) || sources.some((s) => !Number.isInteger(s) || s < 0 || s >= seq)) {
      throw new SessionError(
        'SURFACE_SOURCES_INVALID',
        `event '${type}' (seq ${seq}): sourceEventSeqs must be earlier seqs (integers 0..${seq - 1})`,
        { type, seq, sourceEventSeqs: sources },
      )
    }
  }
}

/**
 * Checks the envelope fields (time, ignorable, surface fields) and builds the event, its
 * `data` not yet checked. `live` words the time error for an append rather than a load.
 */
export function buildEvent(e: StoredEnvelope, live: boolean): AnyEvent {
  const { type, seq } = e
  if (typeof e.time !== 'number' || !Number.isFinite(e.time) || e.time < 0) {
    const reason = timeReason(e.time)
    if (!live) throw envelopeError(seq, reason, type)
    throw new SessionError('EVENT_ENVELOPE_INVALID', `cannot append '${type}' at seq ${seq}: it ${reason}`, {
      seq,
      type,
      time: String(e.time),
    })
  }
  if (e.ignorable !== undefined && e.ignorable !== true) {
    throw envelopeError(seq, 'has `ignorable` other than true', type)
  }
  const hasSurfaceFields = e.surfaceOp !== undefined || e.sourceEventSeqs !== undefined
  if (!hasSurfaceFields) {
    return e.ignorable
      ? { type, seq, time: e.time, data: e.data, ignorable: true }
      : { type, seq, time: e.time, data: e.data }
  }
  checkSurfaceFields(e)
  const event: AnyEvent = { type, seq, time: e.time, data: e.data }
  if (e.ignorable) event.ignorable = true
  if (e.surfaceOp !== undefined) event.surfaceOp = checkSurfaceOp(type, seq, e.surfaceOp)
  if (e.sourceEventSeqs !== undefined) event.sourceEventSeqs = Object.freeze([...e.sourceEventSeqs])
  return event
}

/** A valid `surfaceOp`, frozen: the stored object itself (`inPlace`, a load) or a copy (an append). */
function checkSurfaceOp(type: string, seq: number, op: unknown, inPlace = false): SurfaceOp {
  if (op === 'append') return op
  if (op !== null && typeof op === 'object' && (op as { op?: unknown }).op === 'replace') {
    const { startSeq, endSeq } = op as { startSeq?: unknown; endSeq?: unknown }
    const keys = Object.keys(op)
    if (Number.isInteger(startSeq) && Number.isInteger(endSeq) && keys.length === 3) {
      if (inPlace) return Object.freeze(op) as SurfaceOp
      return Object.freeze({ op: 'replace', startSeq: startSeq as SessionSeq, endSeq: endSeq as SessionSeq })
    }
  }
  throw new SessionError(
    'SURFACE_REPLACE_INVALID',
    `event '${type}' (seq ${seq}): surfaceOp must be 'append' or { op: 'replace', startSeq, endSeq } with integer seqs`,
    { type, seq, surfaceOp: op },
  )
}

/**
 * Checks `data` is plain JSON and returns it frozen (copied, or frozen in place when
 * `parsed`: values straight from `JSON.parse`), then runs the registered schema (none for a
 * known type whose plugin is not loaded: plain JSON only) — its allocation-free check
 * first, `safeParse` only to describe a refusal.
 */
export function checkData(
  type: string,
  seq: number,
  data: unknown,
  registration: EventRegistration | undefined,
  parsed: boolean,
): unknown {
  let frozen: unknown = data
  // the message is built only for a refusal (this runs once per event of a load)
  if (!parsed || !freezeParsedJson(data)) {
    try {
      frozen = parsed
        ? deepFreezeJson(data, 'data', `event '${type}' (seq ${seq})`)
        : toFrozenJson(data, 'data', `event '${type}' (seq ${seq})`)
    } catch (error) {
      throw asSessionError(error, type, seq)
    }
  }
  if (registration && !registration.check(frozen)) {
    const result = registration.schema.safeParse(frozen)
    if (!result.success) {
      // Paths, keys and messages are bounded: the data may carry a megabyte key.
      const { issues, more } = boundIssues(result.error.issues, 'data')
      const first = issues[0]!
      const others = result.error.issues.length - 1
      throw new SessionError(
        'EVENT_DATA_INVALID',
        `event '${type}' (seq ${seq}): ${first.path}: ${first.message}${others > 0 ? ` (and ${others} more)` : ''}`,
        { type, seq, path: first.path, issues, ...(more > 0 ? { moreIssues: more } : {}) },
      )
    }
  }
  return frozen
}

/** A JSON path for messages: `data.message.content[0]` (keys elided past a limit). */
export function formatPath(path: ReadonlyArray<PropertyKey>, root = 'data'): string {
  return formatJsonPath(path, root)
}

export function envelopeError(seq: number, reason: string, type?: string): SessionError {
  return new SessionError(
    'EVENT_ENVELOPE_INVALID',
    `stored event at seq ${seq}${type ? ` ('${type}')` : ''} ${reason}`,
    {
      seq,
      type,
    },
  )
}

/** Turns a non-JSON failure from `@keel/base` into `NON_JSON_DATA`; other errors pass through. */
export function asSessionError(error: unknown, type?: string, seq?: number): unknown {
  if (error instanceof NonJsonValueError) {
    return new SessionError('NON_JSON_DATA', error.message, { ...error.details, type, seq })
  }
  return error
}
