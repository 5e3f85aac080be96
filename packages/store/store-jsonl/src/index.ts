export { acquireLock, type HeldLock, type LockRecord } from './lock.js'
export { FORMAT_NAME, type PhysicalHeader, type ReadState, readHeader, readLog } from './reader.js'
export { JsonlStore, type JsonlStoreOptions, keelHome } from './store.js'
