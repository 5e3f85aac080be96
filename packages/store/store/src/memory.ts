import { SESSION_FORMAT_VERSION, type SessionHeader } from '@keel/session'
import { HOST, type LogWriter, type PendingEvent, type StoreBackend, type StoredLog } from './backend.js'
import { BackendStore } from './backend-store.js'
import { isBlobStub, resolveBlobStub, stubDigest } from './blob.js'
import {
  ConcurrentAppend,
  checkSessionId,
  SessionCorrupt,
  SessionExists,
  SessionLocked,
  SessionNotFound,
  type StoreLocation,
} from './errors.js'
import { checkFormatVersion, migratedNotice, migrateStored } from './migration.js'
import type { ListOptions, SessionSummary, StoreNotice, StoreOptions } from './store.js'

interface MemoryRecord {
  /** The stored header and format version, as JSON (stored forms, like a real backend). */
  header: string
  formatVersion: number
  /** One JSON line per event (a blob stub for a spilled event). */
  lines: string[]
  /** Blobs of spilled events: sha256 → the bytes of the event JSON. */
  blobs: Map<string, Buffer>
  locked: boolean
}

/** Stores the blobs of a batch before its lines (as a durable backend must). */
function keepBlobs(record: MemoryRecord, batch: readonly PendingEvent[]): void {
  for (const item of batch) if (item.blob) record.blobs.set(item.blob.sha256, Buffer.from(item.blob.json))
}

/**
 * The storage behind {@link MemoryStore}s. Several stores over one storage behave like
 * several processes over one directory (locks included), which is what tests need.
 */
export class MemoryStorage {
  /** @internal */
  readonly records = new Map<string, MemoryRecord>()

  /**
   * Test helper: appends raw JSON lines (any content) to a stored session without
   * validation, to build corrupt or foreign logs.
   */
  appendRawLines(id: string, lines: readonly string[]): void {
    const record = this.records.get(id)
    if (!record) throw new SessionNotFound(id, 'memory')
    record.lines.push(...lines)
  }

  /** Test helper: overwrites fields of a stored header as stored, without validation. */
  patchHeader(id: string, patch: Record<string, unknown>): void {
    const record = this.records.get(id)
    if (!record) throw new SessionNotFound(id, 'memory')
    record.header = JSON.stringify({ ...JSON.parse(record.header), ...patch })
  }

  /** Test helper: removes a stored blob (`missing`) or flips a byte of it (`altered`). */
  damageBlob(id: string, sha256: string, how: 'missing' | 'altered'): void {
    const record = this.records.get(id)
    const blob = record?.blobs.get(sha256)
    if (!record || !blob) throw new SessionNotFound(`${id} blob ${sha256}`, 'memory')
    if (how === 'missing') record.blobs.delete(sha256)
    else blob[blob.length >> 1] ^= 1
  }

  /** Test helper: overwrites a stored session's format version. */
  setFormatVersion(id: string, version: number): void {
    const record = this.records.get(id)
    if (!record) throw new SessionNotFound(id, 'memory')
    record.formatVersion = version
  }
}

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions extends StoreOptions {
  /** Share a storage between stores (default: a new, empty one). */
  storage?: MemoryStorage
  /** Fault injection for tests: return an error to make the write of that batch fail. */
  failWrite?: (id: string, batch: readonly PendingEvent[]) => Error | undefined
}

/**
 * An in-memory store for tests: keeps the stored forms (JSON text) so a round trip goes
 * through serialization exactly like a durable backend, and enforces the same lock rules.
 */
export class MemoryStore extends BackendStore {
  readonly storage: MemoryStorage

  constructor(options: MemoryStoreOptions = {}) {
    const storage = options.storage ?? new MemoryStorage()
    super(new MemoryBackend(storage, options.failWrite), options)
    this.storage = storage
  }
}

class MemoryBackend implements StoreBackend {
  readonly kind = 'memory'
  readonly where = 'memory'
  readonly #storage: MemoryStorage
  readonly #failWrite: MemoryStoreOptions['failWrite']

  constructor(storage: MemoryStorage, failWrite: MemoryStoreOptions['failWrite']) {
    this.#storage = storage
    this.#failWrite = failWrite
  }

  async create(header: SessionHeader, initial: readonly PendingEvent[]) {
    checkSessionId(header.id, this.where)
    if (this.#storage.records.has(header.id)) throw new SessionExists(header.id, this.where)
    const record: MemoryRecord = {
      header: JSON.stringify(header),
      formatVersion: SESSION_FORMAT_VERSION,
      lines: initial.map((p) => p.json),
      blobs: new Map(),
      locked: true,
    }
    keepBlobs(record, initial)
    this.#storage.records.set(header.id, record)
    return { writer: this.#writer(header.id, record), notices: [] }
  }

  async openForWrite(id: string) {
    const record = this.#record(id)
    if (record.locked) {
      throw new SessionLocked(id, { host: HOST }, 'another store over the same memory storage has it open')
    }
    record.locked = true
    const writer = this.#writer(id, record)
    try {
      return { log: this.#log(id, record), writer, notices: [] }
    } catch (error) {
      await writer.close()
      throw error
    }
  }

  async read(id: string): Promise<StoredLog> {
    return this.#log(id, this.#record(id))
  }

  async appendStored(id: string, build: (log: StoredLog) => { firstSeq: number; pending: PendingEvent[] }) {
    const record = this.#record(id)
    if (record.locked)
      throw new SessionLocked(id, { host: HOST }, 'append through the handle that has it open')
    const { firstSeq, pending } = build(this.#log(id, record))
    if (firstSeq !== record.lines.length) throw new ConcurrentAppend(id, firstSeq, record.lines.length)
    keepBlobs(record, pending)
    record.lines.push(...pending.map((p) => p.json))
  }

  async list(options: ListOptions & { limit: number }): Promise<SessionSummary[]> {
    const out: SessionSummary[] = []
    for (const record of this.#storage.records.values()) {
      const header = JSON.parse(record.header) as SessionHeader
      if (options.cwd !== undefined && header.cwd !== options.cwd) continue
      out.push(summaryOf(header, record.lines.length, lineTime(record.lines.at(-1))))
    }
    return sortSummaries(out, options.orderBy).slice(0, options.limit)
  }

  async readRaw(id: string): Promise<string | undefined> {
    checkSessionId(id, this.where)
    return undefined
  }

  async close(): Promise<void> {}

  #record(id: string): MemoryRecord {
    checkSessionId(id, this.where)
    const record = this.#storage.records.get(id)
    if (!record) throw new SessionNotFound(id, this.where)
    return record
  }

  #log(id: string, record: MemoryRecord): StoredLog {
    const from = checkFormatVersion(id, record.formatVersion, this.where)
    const lines = [...record.lines]
    const where = (seq: number): StoreLocation => ({
      file: `memory:${id}`,
      ...(seq >= 0 ? { line: seq + 2, seq } : { line: 1 }),
    })
    const events = (function* () {
      for (let i = 0; i < lines.length; i++) {
        const raw: unknown = parseStored(id, lines[i]!, where(i))
        if (!isBlobStub(raw)) {
          yield raw
          continue
        }
        const sha256 = stubDigest(id, raw, where(i))
        yield resolveBlobStub(id, raw, record.blobs.get(sha256), `memory:${id}/blobs/${sha256}`, where(i))
      }
    })()
    const header = JSON.parse(record.header) as SessionHeader
    return {
      header: from === undefined ? header : { ...header, version: SESSION_FORMAT_VERSION },
      events: from === undefined ? events : migrateStored(events, from),
      notices: from === undefined ? ([] as StoreNotice[]) : [migratedNotice(id, from)],
      ...(from === undefined ? {} : { migratedFrom: from }),
      where,
    }
  }

  #writer(id: string, record: MemoryRecord): LogWriter {
    let closed = false
    return {
      rewrite: async (header, events) => {
        record.header = JSON.stringify(header)
        record.formatVersion = SESSION_FORMAT_VERSION
        keepBlobs(record, events)
        record.lines = events.map((p) => p.json)
      },
      append: async (batch) => {
        const fault = this.#failWrite?.(id, batch)
        if (fault) throw fault
        const first = batch[0]!.event.seq
        if (first !== record.lines.length) throw new ConcurrentAppend(id, first, record.lines.length)
        keepBlobs(record, batch)
        record.lines.push(...batch.map((p) => p.json))
      },
      close: async () => {
        if (!closed) record.locked = false
        closed = true
      },
    }
  }
}

/** The `time` of a stored event line (a blob stub has one too), when it is readable. */
export function lineTime(line: string | undefined): number | undefined {
  if (line === undefined) return undefined
  try {
    const time = (JSON.parse(line) as { time?: unknown }).time
    return typeof time === 'number' && Number.isFinite(time) ? time : undefined
  } catch {
    // A line that does not parse is the reader's to report; listing falls back to createdAt.
    return undefined
  }
}

/** Newest first by `orderBy` (default `created`), ties broken by id: the one order of `list()`. */
export function sortSummaries(
  summaries: SessionSummary[],
  orderBy: 'created' | 'activity' = 'created',
): SessionSummary[] {
  const key = (s: SessionSummary) => (orderBy === 'activity' ? s.lastActivityAt : s.createdAt)
  return summaries.sort((a, b) => key(b) - key(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

/**
 * A summary from a header and, when known, the event count and the time of the last
 * event (`lastActivityAt` falls back to `createdAt`).
 */
export function summaryOf(header: SessionHeader, eventCount?: number, lastEventAt?: number): SessionSummary {
  const summary: SessionSummary = {
    id: header.id,
    createdAt: header.createdAt,
    lastActivityAt: Math.max(header.createdAt, lastEventAt ?? header.createdAt),
  }
  if (header.cwd !== undefined) summary.cwd = header.cwd
  if (header.agentPreset !== undefined) summary.agentPreset = header.agentPreset
  if (header.title !== undefined) summary.title = header.title
  if (header.parentSession !== undefined) summary.parentSession = header.parentSession
  if (header.delegatedBy !== undefined) summary.delegatedBy = header.delegatedBy
  if (eventCount !== undefined) summary.eventCount = eventCount
  return summary
}

/** Parses one stored line; a line that is not JSON is `SessionCorrupt` at its place. */
function parseStored(id: string, line: string, where: StoreLocation): unknown {
  try {
    return JSON.parse(line)
  } catch (error) {
    throw new SessionCorrupt(id, where, `the line is not valid JSON (${(error as Error).message})`)
  }
}
