import { KeelError } from '@keel/base'

/**
 * Every way an append or a load can be refused. A refused append changes nothing; a
 * refused load yields no session.
 */
export type SessionErrorCode =
  /** `data` (or an envelope field) is not plain JSON: undefined, NaN, a Date, a cycle, … */
  | 'NON_JSON_DATA'
  /** No loaded package registered a schema for this event type. */
  | 'EVENT_TYPE_UNREGISTERED'
  /** `data` fails the event type's registered schema. */
  | 'EVENT_DATA_INVALID'
  /** The event breaks an invariant that spans events (the owner's invariant fold refused it). */
  | 'EVENT_INVARIANT_VIOLATED'
  /** `surfaceOp` or `sourceEventSeqs` on an event that is not a surface event. */
  | 'SURFACE_FIELDS_NOT_ALLOWED'
  /** A replace whose range is not made of current surface nodes, in order. */
  | 'SURFACE_REPLACE_INVALID'
  /** `sourceEventSeqs` misses a node the replace shadows, or cites a seq that is not earlier. */
  | 'SURFACE_SOURCES_INVALID'
  /** `turn/start` while a turn is open. */
  | 'TURN_ALREADY_OPEN'
  /** `turn/start` with a turn number not greater than every earlier one. */
  | 'TURN_NUMBER_INVALID'
  /** An event that must live inside a turn (or its turn/step numbers) does not match the open turn. */
  | 'OUTSIDE_TURN'
  /** `step/start` while a step is open. */
  | 'STEP_ALREADY_OPEN'
  /** An event that must live inside a step appears outside one, or names another step. */
  | 'OUTSIDE_STEP'
  /** `turn/end` while a step is still open. */
  | 'STEP_STILL_OPEN'
  /** A `tool/call` reusing a call id of the same turn. */
  | 'DUPLICATE_TOOL_CALL'
  /** A `tool/result` with no earlier `tool/call` of that id in the open turn. */
  | 'TOOL_RESULT_WITHOUT_CALL'
  /** A second `tool/result` for one call. */
  | 'DUPLICATE_TOOL_RESULT'
  /** `step/end` while a `tool/call` of that step has no `tool/result`. */
  | 'TOOL_CALL_UNANSWERED'
  /** A `system/message` after other messages (other than a replace of the opening system message). */
  | 'SYSTEM_MESSAGE_NOT_FIRST'
  /** A subscriber tried to append while being notified. */
  | 'REENTRANT_APPEND'
  /** The event WAS committed, but a subscriber threw while being notified (details.seq). */
  | 'SUBSCRIBER_FAILED'
  /** A stored event's type is unknown to this build and not marked ignorable. */
  | 'UNKNOWN_REQUIRED_EVENT'
  /** A stored event's envelope is malformed (seq not equal to its index, bad time, …). */
  | 'EVENT_ENVELOPE_INVALID'
  /** The header is malformed or names a format version this build cannot read as-is. */
  | 'HEADER_INVALID'
  /** A fork cut that falls inside an open turn or outside the log. */
  | 'FORK_CUT_INVALID'
  /** A checkpoint this build cannot resume from (other format, folds or event types); the log must be replayed. */
  | 'CHECKPOINT_MISMATCH'

/** A refused session operation. `details` names the event type, seq and JSON path involved. */
export class SessionError extends KeelError<SessionErrorCode> {}

/** Why `append` refuses an event before checking it: from inside a subscriber, or of a type no package registered. */
export function appendRefused(
  code: 'REENTRANT_APPEND' | 'EVENT_TYPE_UNREGISTERED',
  type: string,
  session: string,
): SessionError {
  const message =
    code === 'REENTRANT_APPEND'
      ? `cannot append '${type}' to session ${session} from inside a subscriber; queue it and append after the listener returns`
      : `cannot append '${type}': no loaded package registered it (import the plugin that owns it, whose events.ts calls registerEvents)`
  return new SessionError(code, message, { type })
}
