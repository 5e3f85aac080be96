import { randomBytes } from 'node:crypto'
import { existsSync, promises as fs } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { SESSION_FORMAT_VERSION, type SessionHeader, sessionIdSchema } from '@keel/session'
import {
  BackendStore,
  type ListOptions,
  type LogWriter,
  type PendingEvent,
  SessionExists,
  SessionNotFound,
  type SessionSummary,
  type StoreBackend,
  type StoredLog,
  type StoreNotice,
  type StoreOptions,
  summaryOf,
} from '@keel/store'
import { acquireLock, type HeldLock } from './lock.js'
import { FORMAT_NAME, type PhysicalHeader, type ReadState, readHeader, readLog } from './reader.js'

/** Options of {@link JsonlStore}. */
export interface JsonlStoreOptions extends StoreOptions {
  /** The Keel home; sessions live in `<home>/sessions/<id>/session.jsonl`. Default `$KEEL_HOME`, else `~/.keel`. */
  home?: string
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
    super(new JsonlBackend(sessionsDir), options)
    this.sessionsDir = sessionsDir
  }

  /** The path of a session's log file. */
  fileOf(id: string): string {
    return join(this.sessionsDir, id, 'session.jsonl')
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * Writes a complete log (physical header + events) to a fresh temp file in `dir` and
 * fsyncs it; the caller links or renames it into place. Returns the temp path.
 */
async function writeTempLog(
  dir: string,
  header: SessionHeader,
  events: readonly PendingEvent[],
): Promise<string> {
  const physical: PhysicalHeader = { format: FORMAT_NAME, formatVersion: SESSION_FORMAT_VERSION, header }
  let text = `${JSON.stringify(physical)}\n`
  for (const item of events) text += `${item.json}\n`
  const temp = join(dir, `.session.jsonl.${randomBytes(6).toString('hex')}.tmp`)
  const handle = await fs.open(temp, 'wx')
  try {
    await handle.writeFile(text)
    await handle.sync()
  } finally {
    await handle.close()
  }
  return temp
}

class JsonlWriter implements LogWriter {
  readonly directory: string
  readonly #file: string
  readonly #lock: HeldLock
  #state: ReadState | undefined
  #handle: fs.FileHandle | undefined
  #closed = false

  constructor(file: string, lock: HeldLock, state?: ReadState) {
    this.directory = dirname(file)
    this.#file = file
    this.#lock = lock
    this.#state = state
  }

  async rewrite(header: SessionHeader, events: readonly PendingEvent[]): Promise<void> {
    const dir = dirname(this.#file)
    const temp = await writeTempLog(dir, header, events)
    // keep the pre-migration file beside the new one
    await fs
      .link(this.#file, join(dir, `session.v${this.#state?.migratedFrom ?? 'old'}.jsonl`))
      .catch(() => {})
    await fs.rename(temp, this.#file)
    await fsyncDir(dir)
    this.#state = undefined
  }

  async prepare(): Promise<void> {
    const state = this.#state
    if (state) {
      const { size } = await fs.stat(this.#file)
      if (size > state.validLength) {
        // drop the torn tail for good, so appends start on a clean line
        await fs.truncate(this.#file, state.validLength)
      }
    }
    this.#handle = await fs.open(this.#file, 'a')
    if (state?.needsNewline) await this.#write(Buffer.from('\n'))
    else if (state) await this.#handle.sync()
  }

  async append(batch: readonly PendingEvent[]): Promise<void> {
    let text = ''
    for (const item of batch) text += `${item.json}\n`
    await this.#write(Buffer.from(text))
  }

  async #write(buffer: Buffer): Promise<void> {
    const handle = this.#handle
    if (!handle) throw new Error(`${this.#file} is not open for writing`)
    let offset = 0
    while (offset < buffer.length) {
      const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset)
      offset += bytesWritten
    }
    await handle.sync()
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    try {
      await this.#handle?.close()
    } finally {
      await this.#lock.release()
    }
  }
}

class JsonlBackend implements StoreBackend {
  readonly kind = 'jsonl'
  readonly where: string
  readonly #dir: string

  constructor(sessionsDir: string) {
    this.#dir = sessionsDir
    this.where = sessionsDir
  }

  #paths(id: string) {
    if (!sessionIdSchema.safeParse(id).success) throw new SessionNotFound(id, this.where)
    const dir = join(this.#dir, id)
    return { dir, file: join(dir, 'session.jsonl'), lock: join(dir, 'writer.lock') }
  }

  async create(header: SessionHeader, initial: readonly PendingEvent[]) {
    const { dir, file, lock: lockPath } = this.#paths(header.id)
    await fs.mkdir(this.#dir, { recursive: true })
    let madeDir = true
    try {
      await fs.mkdir(dir)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      madeDir = false
    }
    if (existsSync(file)) throw new SessionExists(header.id, this.where)
    const notices: StoreNotice[] = []
    const lock = await acquireLock(header.id, lockPath, notices)
    try {
      if (existsSync(file)) throw new SessionExists(header.id, this.where)
      const temp = await writeTempLog(dir, header, initial)
      try {
        await fs.link(temp, file)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new SessionExists(header.id, this.where)
        throw error
      } finally {
        await fs.rm(temp, { force: true })
      }
      await fsyncDir(dir)
      if (madeDir) await fsyncDir(this.#dir)
      const writer = new JsonlWriter(file, lock)
      await writer.prepare()
      return { writer, notices }
    } catch (error) {
      await lock.release()
      throw error
    }
  }

  async openForWrite(id: string) {
    const { file, lock: lockPath } = this.#paths(id)
    if (!existsSync(file)) throw new SessionNotFound(id, this.where)
    const notices: StoreNotice[] = []
    const lock = await acquireLock(id, lockPath, notices)
    try {
      const log = readLog(id, file)
      return { log, writer: new JsonlWriter(file, lock, log.state), notices }
    } catch (error) {
      await lock.release()
      throw error
    }
  }

  async read(id: string): Promise<StoredLog> {
    const { file } = this.#paths(id)
    try {
      return readLog(id, file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SessionNotFound(id, this.where)
      throw error
    }
  }

  async appendStored(id: string, build: (log: StoredLog) => { firstSeq: number; pending: PendingEvent[] }) {
    const { writer, log } = await this.openForWrite(id)
    try {
      const { pending } = build(log)
      await writer.prepare()
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
      throw error
    }
    const out: SessionSummary[] = []
    for (const name of names) {
      if (!sessionIdSchema.safeParse(name).success) continue
      let header: SessionHeader
      try {
        header = readHeader(name, join(this.#dir, name, 'session.jsonl')).header
      } catch {
        // not a session (yet), or one this build cannot read: `open` gives the reason
        continue
      }
      if (options.cwd !== undefined && header.cwd !== options.cwd) continue
      out.push(summaryOf(header))
    }
    out.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1))
    return out.slice(0, options.limit)
  }

  async readRaw(id: string): Promise<string | undefined> {
    const { file } = this.#paths(id)
    try {
      return await fs.readFile(file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SessionNotFound(id, this.where)
      throw error
    }
  }

  async close(): Promise<void> {}
}
