export {
  HOST,
  type LogWriter,
  newSessionId,
  type PendingEvent,
  type StoreBackend,
  type StoredLog,
} from './backend.js'
export { BackendStore } from './backend-store.js'
export {
  type BlobStub,
  DEFAULT_MAX_EVENT_BYTES,
  DEFAULT_MAX_LINE_BYTES,
  isBlobStub,
  type PendingBlob,
  resolveBlobStub,
  sha256Hex,
  spill,
  stubDigest,
} from './blob.js'
export {
  ConcurrentAppend,
  checkSessionId,
  EventTooLarge,
  type LockHolder,
  SessionCorrupt,
  SessionExists,
  SessionFormatUnsupported,
  SessionHandleClosed,
  SessionIdInvalid,
  SessionLocked,
  SessionNotFound,
  SessionWriteFailed,
  type StoreErrorCode,
  StoreIoFailed,
  type StoreLocation,
  StoreQueryFailed,
  StoreUnavailable,
  UnknownRequiredEvent,
} from './errors.js'
export {
  lineTime,
  MemoryStorage,
  MemoryStore,
  type MemoryStoreOptions,
  sortSummaries,
  summaryOf,
} from './memory.js'
export { checkFormatVersion, migratedNotice, migrateStored } from './migration.js'
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
export { headerInit, materialize } from './validate.js'
