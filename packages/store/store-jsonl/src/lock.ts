import { randomBytes } from 'node:crypto'
import { closeSync, promises as fs, linkSync, readSync, renameSync, statSync } from 'node:fs'
import { NotRegularFile, openRegularFile } from '@keel/base'
import { HOST, type LockHolder, SessionLocked, type StoreNotice } from '@keel/store'
import { removeFile } from './files.js'
import { judge, type ProcessIdentity, selfIdentity } from './liveness.js'

/** The content of a writer lock file. */
export interface LockRecord extends ProcessIdentity {
  host: string
  /** Unix ms when the lock was taken. */
  since: number
  /** Tells this lock apart from a later one of the same pid. */
  nonce: string
}

/** Nonces of the locks this process holds (tells our own locks from a dead namesake's). */
const HELD = new Set<string>()

type ReadLock = LockRecord | 'missing' | 'unreadable'

function parseLock(text: string): LockRecord | 'unreadable' {
  let record: Partial<LockRecord>
  try {
    record = JSON.parse(text) as Partial<LockRecord>
  } catch {
    return 'unreadable' // empty or torn: a power loss before the lock reached the disk
  }
  return record !== null &&
    typeof record === 'object' &&
    typeof record.pid === 'number' &&
    typeof record.host === 'string' &&
    typeof record.nonce === 'string'
    ? (record as LockRecord)
    : 'unreadable'
}

/** The lock file at `path`; throws `NotRegularFile` for a FIFO, a directory, a device there. */
function readLock(path: string): ReadLock {
  let fd: number
  try {
    fd = openRegularFile(path).fd
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing'
    throw error
  }
  try {
    // a record is ~200 bytes: anything longer (a sparse terabyte) is not one, and not read on
    const buf = Buffer.allocUnsafe(MAX_LOCK_BYTES + 1)
    const n = readSync(fd, buf, 0, buf.length, 0)
    return n > MAX_LOCK_BYTES ? 'unreadable' : parseLock(buf.toString('utf8', 0, n))
  } finally {
    closeSync(fd)
  }
}

/** A lock file longer than this is not a lock record. */
const MAX_LOCK_BYTES = 64 * 1024

/** {@link readLock} of session `id`'s lock: something there that is not a file is `SessionLocked`, to be removed by hand. */
function holderAt(id: string, path: string): ReadLock {
  try {
    return readLock(path)
  } catch (error) {
    if (!(error instanceof NotRegularFile)) throw error
    throw new SessionLocked(
      id,
      {},
      `its lock file ${path} is ${error.what}, not a lock Keel writes; if no Keel process uses the session, remove it by hand`,
    )
  }
}

/**
 * Whether the lock file at `lock.path` is still the one this writer created: the same
 * inode, unchanged since (a takeover renames it away, a removal unlinks it, a new lock is
 * another file). One `stat`, no read: checked before each write.
 */
export function lockUnchanged(lock: HeldLock): boolean {
  const st = statSync(lock.path, { bigint: true, throwIfNoEntry: false })
  return st !== undefined && st.ino === lock.identity.ino && st.ctimeNs === lock.identity.ctimeNs
}

/** A held writer lock. */
export interface HeldLock {
  readonly record: LockRecord
  readonly path: string
  /** The lock file's inode and change time once in place (see {@link lockUnchanged}). */
  readonly identity: { readonly ino: bigint; readonly ctimeNs: bigint }
  release(): Promise<void>
}

function holderOf(record: LockRecord): LockHolder {
  return { pid: record.pid, host: record.host, since: record.since }
}

/** The advice for a lock this host cannot judge. */
export function unlockHint(id: string, host: string): string {
  return `it is held on host ${host}, so this host cannot tell whether that writer still runs; if no Keel process there uses the session, run \`keel sessions unlock ${id}\``
}

/** Whether a lock on this host belongs to a live process (`foreign`: another pid namespace). */
function liveness(record: LockRecord): 'alive' | 'dead' | 'foreign' {
  if (record.pid === process.pid && (record.start === undefined || record.boot === undefined)) {
    // no /proc identity: our own pid is live only for a lock this process took
    return HELD.has(record.nonce) ? 'alive' : 'dead'
  }
  return judge(record)
}

/** The advice for a lock of this host name held in another pid namespace (a container). */
function foreignHint(id: string): string {
  return `it is held in another pid namespace (another container on this host), so this one cannot tell whether that writer still runs; if no Keel process there uses the session, run \`keel sessions unlock ${id}\``
}

/**
 * Takes the writer lock of a session (with synchronous calls: a few metadata operations,
 * not worth a round trip each to the thread pool): `path` is created atomically (written to
 * a temp file, then hard-linked into place, which fails if it exists), carrying pid, host, boot id and
 * process start time. It is not fsynced: other processes see it at once, and after a power
 * loss every lock is stale anyway (another boot id, or an empty or missing file). A lock of
 * a process that no longer runs on this host (by pid, start time and boot id), or an
 * empty/unreadable one, is taken over with a notice; a live one, or one from another host,
 * gives `SessionLocked`.
 */
export async function acquireLock(id: string, path: string, notices: StoreNotice[]): Promise<HeldLock> {
  const record: LockRecord = {
    ...selfIdentity(),
    host: HOST,
    since: Date.now(),
    nonce: randomBytes(8).toString('hex'),
  }
  const temp = `${path}.${record.nonce}.tmp`
  try {
    // Creating files waits on the file system's journal, which concurrent fsyncs hold: under
    // load that is a wait of up to milliseconds, kept off the main thread.
    await fs.writeFile(temp, JSON.stringify(record), { flag: 'wx' })
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await fs.link(temp, path)
        HELD.add(record.nonce)
        removeFile(temp) // before the identity: unlinking it changes the inode's ctime
        const st = statSync(path, { bigint: true })
        return {
          record,
          path,
          identity: { ino: st.ino, ctimeNs: st.ctimeNs },
          release: async () => {
            HELD.delete(record.nonce)
            let current: ReadLock
            try {
              current = readLock(path)
            } catch (error) {
              if (error instanceof NotRegularFile) return // not ours any more: it stays
              throw error
            }
            if (typeof current === 'object' && current.nonce === record.nonce) removeFile(path)
          },
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      const holder = holderAt(id, path)
      if (holder === 'missing') continue
      if (holder !== 'unreadable') {
        if (holder.host !== HOST) throw new SessionLocked(id, holderOf(holder), unlockHint(id, holder.host))
        const state = liveness(holder)
        if (state === 'foreign') throw new SessionLocked(id, holderOf(holder), foreignHint(id))
        if (state === 'alive') {
          throw new SessionLocked(
            id,
            holderOf(holder),
            holder.pid === process.pid
              ? 'this process already has it open; close that handle first'
              : 'close it there first',
          )
        }
      }
      if (!takeOver(path, record.nonce, holder)) continue
      notices.push({
        code: 'STALE_LOCK_TAKEN_OVER',
        message:
          holder === 'unreadable'
            ? `session ${id}: took over its empty or unreadable writer lock (left by a power loss or crash before the lock reached the disk)`
            : `session ${id}: took over the writer lock of process ${holder.pid} on ${holder.host}, which no longer runs (it stopped without closing the session${holder.pid === process.pid ? '; its pid is now this process' : ''})`,
      })
    }
    throw new SessionLocked(id, {}, `its lock file ${path} keeps changing; try again`)
  } finally {
    removeFile(temp)
  }
}

/**
 * Moves a stale lock aside under a name only we use, then checks we moved the lock we
 * judged; if another process replaced it in between, puts theirs back. True when removed.
 */
function takeOver(path: string, nonce: string, judged: LockRecord | 'unreadable'): boolean {
  const aside = `${path}.stale.${nonce}`
  try {
    renameSync(path, aside)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
  const moved = readLock(aside)
  const same =
    judged === 'unreadable'
      ? moved === 'unreadable'
      : typeof moved === 'object' && moved.nonce === judged.nonce
  if (!same) {
    // Someone else took over in between and we moved their live lock: put it back.
    try {
      linkSync(aside, path)
    } catch {
      // a third lock took the place meanwhile: theirs stands, ours is dropped
    }
    removeFile(aside)
    return false
  }
  removeFile(aside)
  return true
}

/** What `breakLock` found and removed. */
export type BrokenLock = { removed: false } | { removed: true; holder: LockHolder | 'unreadable' }

/**
 * Removes a session's writer lock by hand (`keel sessions unlock <id>`): for a lock held on
 * another host (which this host cannot judge), or an unreadable one. A lock of a live
 * process on this host is refused with `SessionLocked`; a stale local one is removed too.
 */
export async function breakLock(id: string, path: string): Promise<BrokenLock> {
  const holder = holderAt(id, path)
  if (holder === 'missing') return { removed: false }
  if (holder !== 'unreadable' && holder.host === HOST && liveness(holder) === 'alive') {
    throw new SessionLocked(
      id,
      holderOf(holder),
      'it runs on this host, so it is not stale; close it there first',
    )
  }
  if (!takeOver(path, randomBytes(8).toString('hex'), holder)) {
    throw new SessionLocked(id, {}, `its lock file ${path} changed while unlocking; try again`)
  }
  return { removed: true, holder: holder === 'unreadable' ? 'unreadable' : holderOf(holder) }
}
