import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { HOST, type LockHolder, SessionLocked, type StoreNotice } from '@keel/store'

/** The content of a writer lock file. */
export interface LockRecord {
  pid: number
  host: string
  /** Unix ms when the lock was taken. */
  since: number
  /** Tells this lock apart from a later one of the same pid. */
  nonce: string
}

/** Whether process `pid` exists on this host. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function readLock(path: string): Promise<LockRecord | 'missing' | 'unreadable'> {
  let text: string
  try {
    text = await fs.readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing'
    throw error
  }
  try {
    const record = JSON.parse(text) as LockRecord
    if (typeof record.pid === 'number' && typeof record.host === 'string') return record
  } catch {}
  return 'unreadable'
}

/** A held writer lock. */
export interface HeldLock {
  readonly record: LockRecord
  release(): Promise<void>
}

/**
 * Takes the writer lock of a session: `path` is created atomically (written to a temp file,
 * then hard-linked into place, which fails if it exists), carrying pid and host. A lock of
 * a dead process on this host is taken over with a notice; a live one, or one from another
 * host, gives `SessionLocked`.
 */
export async function acquireLock(id: string, path: string, notices: StoreNotice[]): Promise<HeldLock> {
  const record: LockRecord = {
    pid: process.pid,
    host: HOST,
    since: Date.now(),
    nonce: randomBytes(8).toString('hex'),
  }
  const temp = `${path}.${record.nonce}.tmp`
  await fs.writeFile(temp, JSON.stringify(record))
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await fs.link(temp, path)
        return {
          record,
          release: async () => {
            const current = await readLock(path)
            if (typeof current === 'object' && current.nonce === record.nonce)
              await fs.rm(path, { force: true })
          },
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      const holder = await readLock(path)
      if (holder === 'missing') continue
      if (holder === 'unreadable') {
        throw new SessionLocked(
          id,
          {},
          `its lock file ${path} is unreadable; if no Keel process uses the session, delete it`,
        )
      }
      const info: LockHolder = { pid: holder.pid, host: holder.host, since: holder.since }
      if (holder.host !== HOST) {
        throw new SessionLocked(
          id,
          info,
          `it is on another host, so this one cannot tell whether it is alive; if it is not, delete ${path}`,
        )
      }
      if (alive(holder.pid)) {
        throw new SessionLocked(
          id,
          info,
          holder.pid === process.pid
            ? 'this process already has it open; close that handle first'
            : 'close it there first',
        )
      }
      // Stale: move it aside under a name only we use, then check we moved the lock we judged.
      const aside = `${path}.stale.${record.nonce}`
      try {
        await fs.rename(path, aside)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue
        throw error
      }
      const moved = await readLock(aside)
      if (typeof moved === 'object' && moved.nonce !== holder.nonce) {
        // Someone else took over in between and we moved their live lock: put it back.
        await fs.link(aside, path).catch(() => {})
        await fs.rm(aside, { force: true })
        throw new SessionLocked(
          id,
          { pid: moved.pid, host: moved.host, since: moved.since },
          'close it there first',
        )
      }
      await fs.rm(aside, { force: true })
      notices.push({
        code: 'STALE_LOCK_TAKEN_OVER',
        message: `session ${id}: took over the writer lock of process ${holder.pid} on ${holder.host}, which no longer runs (it stopped without closing the session)`,
      })
    }
    throw new SessionLocked(id, {}, `its lock file ${path} keeps changing; try again`)
  } finally {
    await fs.rm(temp, { force: true })
  }
}
