import type { KnownEventType } from './known-event-types.generated.js'
import type { Session } from './session.js'
import type {
  NoSurfaceFields,
  SessionEvent,
  SessionEventType,
  SessionHeader,
  SurfaceEventType,
  SurfaceFields,
} from './types.js'

/** Options of one append. Surface fields type-check only for surface event types. */
export type AppendOptions<T extends SessionEventType> = {
  /** Mark the event skippable by readers that do not know its type. */
  ignorable?: true
  /** Override the event time (Unix ms); the session clock otherwise. */
  time?: number
} & (T extends SurfaceEventType ? SurfaceFields : NoSurfaceFields)

/** The header fields a caller may set at creation; `id` and `version` are the session's. */
export type SessionHeaderInit = Partial<Omit<SessionHeader, 'id'>>

/** Construction options. */
export interface SessionOptions {
  /** Time source for appended events, Unix ms. Defaults to `Date.now`. */
  clock?: () => number
  /**
   * A last check of each live append, run after every other validation and just before
   * the event is committed; throwing refuses the append and changes nothing. Stores use it
   * to refuse an event they could not persist (a line over the size cap, a closed handle).
   * Not run for replayed seed events.
   */
  beforeCommit?: (event: SessionEvent, session: Session) => void
  /**
   * The event types this build knows without their plugin loaded (stored events of these
   * types are checked as plain JSON and kept verbatim). Defaults to the generated
   * {@link KNOWN_EVENT_TYPES}.
   */
  knownEventTypes?: Readonly<Record<string, KnownEventType>>
  /**
   * Keep a stored event of a type this build neither registers nor knows, even when it is not
   * marked ignorable, as an opaque event (kept verbatim, not interpreted) instead of refusing
   * the log with `UNKNOWN_REQUIRED_EVENT`. For read-only views of a log whose plugin is not
   * loaded (a store's `inspect`): what such an event means for the rest is unknown.
   */
  keepUnknownEvents?: boolean
  /**
   * The seed's values come straight from `JSON.parse` and nothing else holds them (a store
   * reading its log): they are plain JSON by construction, so they are frozen in place
   * instead of checked and copied. Schemas and every other rule still apply.
   */
  parsedSeed?: boolean
  /**
   * With `parsedSeed`: the stored events the store vouches for — written by this store
   * under the current format, their bytes checked intact (its integrity records). Their
   * `data` skips the schema; the envelope, plain-JSON, lifecycle, surface and invariant
   * rules still run. Every other stored event is validated in full.
   */
  trusted?: (seq: number) => boolean
}
