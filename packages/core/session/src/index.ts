export type { Brand, JsonObject, JsonValue } from '@keel/base'
export { KeelError } from '@keel/base'
export { SessionError, type SessionErrorCode } from './errors.js'
export type { ErrorRecord, SessionEventMap, TurnEndReason } from './events.js'

import './events.js'

export { KNOWN_EVENT_TYPES, type KnownEventType } from './known-event-types.js'
export {
  migrateEvent,
  migrationChain,
  registerMigration,
  SESSION_MIGRATIONS,
  type SessionMigration,
  SessionMigrationError,
  type StoredEventJson,
} from './migrations.js'
export {
  type CheckedEventSchema,
  type EventRegistration,
  EventRegistrationError,
  getEventRegistration,
  registerEvents,
  registeredEventTypes,
  sessionIdSchema,
  sessionSeqSchema,
} from './registry.js'
export {
  type AppendOptions,
  type OpenTurn,
  type Projection,
  Session,
  type SessionHeaderInit,
  type SessionListener,
  type SessionOptions,
} from './session.js'
export {
  type AgentComposition,
  type ComposedPlugin,
  type EventEnvelope,
  type NoSurfaceFields,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionEventType,
  type SessionHeader,
  type SessionId,
  type SessionSeq,
  type SurfaceEventType,
  type SurfaceFields,
  type SurfaceOp,
  type ToolCallId,
} from './types.js'
