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

export {
  CHECKPOINT_RECENT_EVENTS,
  CHECKPOINT_STATE_VERSION,
  type Interpretation,
  type SessionCheckpoint,
} from './checkpoint.js'
export { sessionHeaderValidator } from './events.generated.js'
export { KNOWN_EVENT_TYPES, type KnownEventType } from './known-event-types.generated.js'
export type { OpenTurn, UnansweredCall } from './lifecycle.js'
export type { PrefixReader } from './log.js'
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
export {
  type FoldCheckpoint,
  type Projection,
  ProjectionRegistrationError,
  registeredProjections,
  registerProjection,
  type SavedFold,
} from './projections.js'
export {
  type CheckedEventSchema,
  EVENT_TYPE_PATTERN,
  type EventInvariant,
  type EventRegistration,
  EventRegistrationError,
  getEventRegistration,
  type InvariantStep,
  invariantOf,
  registerEvents,
  registeredEventTypes,
  sessionIdSchema,
  sessionSeqSchema,
} from './registry.js'
export { compileCheck, type SchemaCheck, schemaIssues } from './schema-check.js'
export { compileExactCheck } from './schema-exact.js'
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
export {
  answerUnansweredCalls,
  closeInterruptedTurn,
  interruptedCallAnswer,
  type UnansweredCallAnswer,
} from './unanswered.js'
export { uniqueBy, uniqueItems } from './validators.js'
