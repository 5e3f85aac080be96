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
export { CheckpointDecoder, type DecodedCheckpoint, decodeCheckpoint } from './checkpoint-decoder.js'
export {
  CHECKPOINT_FORMAT,
  CHECKPOINT_FORMAT_VERSION,
  type CheckpointDocument,
  type CheckpointPolicy,
  DEFAULT_CHECKPOINT_EVERY,
  DEFAULT_CHECKPOINT_MIN_EVENTS,
  encodeCheckpoint,
  resolveCheckpointBlobs,
  spillCheckpoint,
} from './checkpoint-file.js'
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
export { parseHeader } from './header.js'
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
  lineTime,
  type MemoryRecord,
  MemoryStorage,
  MemoryStore,
  type MemoryStoreOptions,
  sortSummaries,
  summaryOf,
  unreadableNotice,
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
