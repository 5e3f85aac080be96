export {
  type CheckpointInput,
  HOST,
  type LogWriter,
  newSessionId,
  type PendingEvent,
  type ReadOptions,
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
  CHECKPOINT_FORMAT,
  CHECKPOINT_FORMAT_VERSION,
  type CheckpointDocument,
  type CheckpointPolicy,
  DEFAULT_CHECKPOINT_EVERY,
  DEFAULT_CHECKPOINT_MIN_EVENTS,
  type DecodedCheckpoint,
  decodeCheckpoint,
  encodeCheckpoint,
  resolveCheckpointBlobs,
  spillCheckpoint,
} from './checkpoint-file.js'
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
  StoreIoFailed,
  type StoreLocation,
  UnknownRequiredEvent,
} from './errors.js'
export {
  chainRoot,
  headerRoot,
  IntegrityBroken,
  type IntegrityMark,
  type IntegrityStart,
  IntegrityTracker,
  isMark,
  LineVerifier,
  lineCrc,
  linesCrc,
  linksTo,
  nextChain,
  RecordVerifier,
  TIE_LINES,
  validChain,
} from './integrity.js'
export { checkpointIgnored, compareStates, type LoadedSession, loadSession, type Reread } from './load.js'
export {
  type MemoryRecord,
  MemoryStorage,
  MemoryStore,
  type MemoryStoreOptions,
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
  SessionVerification,
  StoreNotice,
  StoreOptions,
} from './store.js'
export { headerInit, materialize } from './validate.js'
