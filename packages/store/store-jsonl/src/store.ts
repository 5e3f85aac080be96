import { closeSync, existsSync, promises as fs, readFile } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { errorMessage } from '@keel/base'
import { type SessionHeader, sessionIdSchema } from '@keel/session'
import {
  BackendStore,
  checkSessionId,
  type IntegrityMark,
  type ListOptions,
  type PendingEvent,
  type ReadOptions,
  SessionCorrupt,
  SessionExists,
  SessionLocked,
  SessionNotFound,
  type SessionSummary,
  type StoreBackend,
  type StoredLog,
  type StoreNotice,
  type StoreOptions,
  StoreUnavailable,
  sortSummaries,
  summaryOf,
  unreadableNotice,
} from '@keel/store'
import { cleanLeftovers, fsyncDir, LEFTOVER_AGE_MS, mapIoError, writeTempLog } from './files.js'
import { countEvents, lastEventTime, readHeader } from './header.js'
import { acquireLock, type BrokenLock, breakLock } from './lock.js'
import { readLog } from './reader.js'
import { openSessionFile } from './regular-file.js'
import { JsonlWriter } from './writer.js'

/** `readFile` of an open descriptor (the promise API takes only paths and handles). */
const readFileOfFd = promisify(readFile)

/** Options of {@link JsonlStore}. */
export interface JsonlStoreOptions extends StoreOptions {
  /** The Keel home; sessions live in `<home>/sessions/<id>/session.jsonl`. Default `$KEEL_HOME`, else `~/.keel`. */
  home?: string
  /**
   * Temp files (`.session.jsonl.*.tmp`, `writer.lock.*.tmp`, `blobs/*.tmp`) older than this
   * are leftovers of a killed process and are removed on `open`, `create` and `list`.
   * Default 10 minutes.
   */
  leftoverAgeMs?: number
}

/** The Keel home directory: `$KEEL_HOME`, else `~/.keel`. */
export function keelHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.KEEL_HOME && env.KEEL_HOME.length > 0 ? env.KEEL_HOME : join(homedir(), '.keel')
}

/**
 * The embedded default store: one directory per session under `<home>/sessions`, holding
 * `session.jsonl` (line 1 the physical header, then one event per line) and, while a
 * writer has it open, `writer.lock`. Batches are fsynced before `flush()` resolves.
 */
export class JsonlStore extends BackendStore {
  /** `<home>/sessions`. */
  readonly sessionsDir: string

  constructor(options: JsonlStoreOptions = {}) {
    const sessionsDir = join(options.home ?? keelHome(), 'sessions')
    const backend = new JsonlBackend(sessionsDir, options.leftoverAgeMs ?? LEFTOVER_AGE_MS)
    super(backend, options)
    this.sessionsDir = sessionsDir
    this.#backend = backend
  }

  readonly #backend: JsonlBackend

  /**
   * Removes a session's writer lock by hand (`keel sessions unlock <id>`): one held on
   * another host (which this host cannot judge), or an unreadable one. A lock of a live
   * process on this host is refused with `SessionLocked`.
   */
  unlock(id: string): Promise<BrokenLock> {
    return this.#backend.unlock(id)
  }

  /** The path of a session's log file. */
  fileOf(id: string): string {
    return join(this.sessionsDir, id, 'session.jsonl')
  }
}

class JsonlBackend implements StoreBackend {
  readonly kind = 'jsonl'
  readonly where: string
  readonly #dir: string
  readonly #leftoverAgeMs: number

  constructor(sessionsDir: string, leftoverAgeMs: number) {
    this.#dir = sessionsDir
    this.where = sessionsDir
    this.#leftoverAgeMs = leftoverAgeMs
  }

  #paths(id: string) {
    checkSessionId(id, this.where)
    const dir = join(this.#dir, id)
    return { dir, file: join(dir, 'session.jsonl'), lock: join(dir, 'writer.lock') }
  }

  /**
   * `error` of making or reading the sessions folder as `StoreUnavailable` when that path is
   * not a folder (a file in its place: `EEXIST` from `mkdir`, `ENOTDIR` from `readdir`); any
   * other error unchanged.
   */
  #notAFolder(error: unknown, operation: string): unknown {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EEXIST' && code !== 'ENOTDIR') return error
    return new StoreUnavailable(
      `the store at ${this.#dir} cannot be used: that path is not a folder (a file is in its place); move it aside, or point KEEL_HOME elsewhere`,
      { where: this.#dir, operation, reason: 'not-a-folder', transient: false, errno: code },
      { cause: error },
    )
  }

  async create(header: SessionHeader, initial: readonly PendingEvent[], mark?: IntegrityMark) {
    const id = header.id
    const { dir, file, lock: lockPath } = this.#paths(id)
    let madeDir = false
    try {
      await fs.mkdir(this.#dir, { recursive: true }).catch((error: unknown) => {
        throw this.#notAFolder(error, `creating session ${id}`)
      })
      try {
        await fs.mkdir(dir)
        madeDir = true
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        await cleanLeftovers(dir, this.#leftoverAgeMs)
        await fs.mkdir(dir, { recursive: true }).catch((again: unknown) => {
          if ((again as NodeJS.ErrnoException).code !== 'EEXIST') throw again
          throw new SessionCorrupt(id, { file: dir }, 'it is a file, not a folder')
        })
      }
      if (existsSync(file)) throw new SessionExists(id, this.where)
      const notices: StoreNotice[] = []
      let lock: Awaited<ReturnType<typeof acquireLock>>
      try {
        lock = await acquireLock(id, lockPath, notices)
      } catch (error) {
        // the loser of a create race finds the winner's lock: the session exists (or is being made)
        if (error instanceof SessionLocked) throw new SessionExists(id, this.where)
        throw error
      }
      try {
        if (existsSync(file)) throw new SessionExists(id, this.where)
        const temp = await writeTempLog(dir, header, initial)
        try {
          await fs.link(temp, file)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new SessionExists(id, this.where)
          throw error
        } finally {
          await fs.rm(temp, { force: true })
        }
        await fsyncDir(dir)
        if (madeDir) await fsyncDir(this.#dir)
        const writer = new JsonlWriter(id, file, lock)
        try {
          await writer.begin(header, mark)
        } catch (error) {
          // the log is durable: keep it, release the lock, report the failure
          await writer.close().catch(() => undefined)
          madeDir = false
          throw error
        }
        return { writer, notices }
      } catch (error) {
        await lock.release().catch(() => undefined)
        throw error
      }
    } catch (error) {
      // Never leave an empty folder behind — but only an empty one: a concurrent creator that
      // lost no race may already be writing its temp log or lock in the folder this one made.
      if (madeDir && !existsSync(file)) await removeIfEmpty(dir)
      throw mapIoError(error, id, 'creating the session')
    }
  }

  async openForWrite(id: string, options: ReadOptions = {}) {
    const { dir, file, lock: lockPath } = this.#paths(id)
    if (!existsSync(file)) throw new SessionNotFound(id, this.where)
    const notices: StoreNotice[] = []
    try {
      await cleanLeftovers(dir, this.#leftoverAgeMs)
      const lock = await acquireLock(id, lockPath, notices)
      try {
        const log = readLog(id, file, options)
        return { log, writer: new JsonlWriter(id, file, lock, log.migratedFrom), notices }
      } catch (error) {
        await lock.release()
        throw error
      }
    } catch (error) {
      throw mapIoError(error, id, 'opening the session for writing')
    }
  }

  async read(id: string, options: ReadOptions = {}): Promise<StoredLog> {
    const { file } = this.#paths(id)
    try {
      return readLog(id, file, options)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SessionNotFound(id, this.where)
      throw mapIoError(error, id, 'reading the session')
    }
  }

  async appendStored(id: string, build: (log: StoredLog) => { firstSeq: number; pending: PendingEvent[] }) {
    const { writer, log } = await this.openForWrite(id)
    try {
      const { pending } = build(log)
      await writer.prepare(log)
      if (pending.length > 0) await writer.append(pending)
    } finally {
      await writer.close()
    }
  }

  async list(options: ListOptions & { limit: number }): Promise<SessionSummary[]> {
    let names: string[]
    try {
      names = await fs.readdir(this.#dir)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw this.#notAFolder(error, 'listing sessions')
    }
    const out: { header: SessionHeader; file: string; bodyOffset: number; summary: SessionSummary }[] = []
    for (const name of names) {
      if (!sessionIdSchema.safeParse(name).success) continue
      const dir = join(this.#dir, name)
      const file = join(dir, 'session.jsonl')
      await this.#sweep(name, dir, file).catch((error: unknown) => {
        // cleaning is best effort while listing; the failure is told, the session still listed
        options.onNotice?.({
          code: 'LEFTOVERS_NOT_CLEANED',
          message: `session ${name}: its leftovers were not cleaned (${errorMessage(error)})`,
        })
      })
      let read: ReturnType<typeof readHeader>
      try {
        read = readHeader(name, file)
      } catch (error) {
        // no log yet: a session being created (its log appears whole, by a link)
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue
        options.onNotice?.(unreadableNotice(name, error))
        continue
      }
      if (options.cwd !== undefined && read.header.cwd !== options.cwd) continue
      // Ordering by activity needs every candidate's last event; otherwise only the listed ones'.
      const last = options.orderBy === 'activity' ? lastEventTime(file, read.bodyOffset) : undefined
      const summary = summaryOf(read.header, undefined, last)
      out.push({ header: read.header, file, bodyOffset: read.bodyOffset, summary })
    }
    const entries = new Map(out.map((entry) => [entry.summary, entry]))
    return sortSummaries(
      out.map((entry) => entry.summary),
      options.orderBy,
    )
      .slice(0, options.limit)
      .map((summary) => {
        const { header, file, bodyOffset } = entries.get(summary)!
        const last = options.orderBy === 'activity' ? summary.lastActivityAt : lastEventTime(file, bodyOffset)
        return summaryOf(header, countEvents(file, bodyOffset), last)
      })
  }

  /**
   * Removes what killed processes left in a session folder: old temp files, and a folder
   * with no log at all (a create killed before it linked the log) once it is older than the
   * age limit and its lock, if any, is stale.
   */
  async #sweep(id: string, dir: string, file: string): Promise<void> {
    await cleanLeftovers(dir, this.#leftoverAgeMs)
    if (existsSync(file)) return
    const { mtimeMs } = await fs.stat(dir)
    if (Date.now() - mtimeMs < this.#leftoverAgeMs) return
    let lock: Awaited<ReturnType<typeof acquireLock>>
    try {
      lock = await acquireLock(id, join(dir, 'writer.lock'), [])
    } catch (error) {
      if (error instanceof SessionLocked) return // a live process is creating it right now
      throw error
    }
    if (existsSync(file)) await lock.release()
    else await fs.rm(dir, { recursive: true, force: true })
  }

  async readRaw(id: string): Promise<string | undefined> {
    const { file } = this.#paths(id)
    let fd: number
    try {
      fd = openSessionFile(id, file).fd // not `fs.readFile(file)`: a FIFO there would hold a pool thread forever
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SessionNotFound(id, this.where)
      throw error
    }
    try {
      return await readFileOfFd(fd, 'utf8')
    } finally {
      closeSync(fd)
    }
  }

  async unlock(id: string): Promise<BrokenLock> {
    const { file, lock } = this.#paths(id)
    if (!existsSync(file)) throw new SessionNotFound(id, this.where)
    return breakLock(id, lock)
  }

  async close(): Promise<void> {}
}

/**
 * Removes `dir` if it is empty. A folder that is not empty (ENOTEMPTY: another creator's temp
 * log or lock) or already gone is left as it is. Any failure is left to the leftover cleanup of
 * the next create/list: this runs while the create's own error is being reported, and that
 * error is the one the caller must see.
 */
async function removeIfEmpty(dir: string): Promise<void> {
  await fs.rmdir(dir).catch(() => undefined)
}
