export {
  BackendStore,
  checkFormatVersion,
  DEFAULT_MAX_EVENT_BYTES,
  HOST,
  headerInit,
  type LogWriter,
  materialize,
  migratedNotice,
  migrateStored,
  newSessionId,
  type PendingEvent,
  type StoreBackend,
  type StoredLog,
} from './backend.js'
export {
  ConcurrentAppend,
  EventTooLarge,
  type LockHolder,
  SessionCorrupt,
  SessionExists,
  SessionFormatUnsupported,
  SessionHandleClosed,
  SessionLocked,
  SessionNotFound,
  SessionWriteFailed,
  type StoreErrorCode,
  type StoreLocation,
  UnknownRequiredEvent,
} from './errors.js'
export { MemoryStorage, MemoryStore, type MemoryStoreOptions, summaryOf } from './memory.js'
export { appendEveryCoreEvent, appendSampleTurn, SAMPLE_TURN_EVENTS } from './sample.js'
export type {
  CreateSessionInit,
  ForkOptions,
  ListOptions,
  SessionHandle,
  SessionInspection,
  SessionStore,
  SessionSummary,
  StoreNotice,
  StoreOptions,
} from './store.js'
