export { blobPath, cleanLeftovers, LEFTOVER_AGE_MS } from './files.js'
export type { ProcessIdentity } from './liveness.js'
export {
  acquireLock,
  type BrokenLock,
  breakLock,
  type HeldLock,
  type LockRecord,
  unlockHint,
} from './lock.js'
export {
  countEvents,
  FORMAT_NAME,
  type PhysicalHeader,
  type ReadState,
  readHeader,
  readLog,
} from './reader.js'
export { JsonlStore, type JsonlStoreOptions, keelHome } from './store.js'
