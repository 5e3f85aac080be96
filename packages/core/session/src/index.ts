export type { Brand, JsonObject, JsonValue } from '@keel/base'
export { KeelError } from '@keel/base'
export { SessionError, type SessionErrorCode } from './errors.js'
export type {
  ErrorRecord,
  MessageSource,
  SessionEventMap,
  StepRef,
  StoredAside,
  TurnEndReason,
  TurnRef,
} from './events.js'

import './events.js'

export { sessionHeaderValidator } from './events.generated.js'

export { KNOWN_EVENT_TYPES, type KnownEventType } from './known-event-types.generated.js'
export type { OpenTurn, UnansweredCall } from './lifecycle.js'
export {
  migrateEvent,
  migrationChain,
  registerMigration,
  SESSION_MIGRATIONS,
  type SessionMigration,
  SessionMigrationError,
  type StoredEventJson,
} from './migrations.js'
export type { AppendOptions, SessionHeaderInit, SessionOptions } from './options.js'
export type { Projection } from './projections.js'
export {
  type CheckedEventSchema,
  EVENT_TYPE_PATTERN,
  type EventInvariant,
  type EventRegistration,
  EventRegistrationError,
  getEventRegistration,
  type InvariantStep,
  registerEvents,
  registeredEventTypes,
  sessionIdSchema,
  sessionSeqSchema,
} from './registry.js'
export { Session } from './session.js'
export type { SessionListener } from './subscribers.js'
export {
  type AgentComposition,
  type ComposedPlugin,
  type EventEnvelope,
  type NoSurfaceFields,
  SESSION_FORMAT_VERSION,
  type SessionDelegation,
  type SessionEvent,
  type SessionEventType,
  type SessionHeader,
  type SessionId,
  type SessionSeq,
  type SurfaceEventType,
  type SurfaceFields,
  type SurfaceOp,
  type ToolCallId,
  type ToolFilter,
} from './types.js'
export { answerUnansweredCalls, interruptedCallAnswer, type UnansweredCallAnswer } from './unanswered.js'
export { uniqueBy, uniqueItems } from './validators.js'
