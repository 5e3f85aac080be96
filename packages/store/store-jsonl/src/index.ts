export { CHAIN_FORMAT, CHAIN_FORMAT_VERSION, chainPath, type FileMark, readChain } from './chain.js'
export { checkpointPath, type IndexEntry, type JsonlLocator } from './checkpoint.js'
export { blobPath, cleanLeftovers, LEFTOVER_AGE_MS } from './files.js'
export { countEvents, FORMAT_NAME, type PhysicalHeader, readHeader } from './header.js'
export type { ProcessIdentity } from './liveness.js'
export {
  acquireLock,
  type BrokenLock,
  breakLock,
  type HeldLock,
  type LockRecord,
  unlockHint,
} from './lock.js'
export { type JsonlLog, type ReadState, readLog } from './reader.js'
export { JsonlStore, type JsonlStoreOptions, keelHome } from './store.js'
