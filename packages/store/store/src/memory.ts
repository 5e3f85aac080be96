import { errorMessage } from '@keel/base'
import type { SessionHeader } from '@keel/session'
import type { PendingEvent } from './backend.js'
import { BackendStore } from './backend-store.js'
import { SessionNotFound } from './errors.js'
import { MemoryBackend } from './memory-backend.js'
import type { SessionSummary, StoreNotice, StoreOptions } from './store.js'

/** One stored session of a {@link MemoryStorage}, in stored forms (JSON text), like a real backend. */
export interface MemoryRecord {
  /** The stored header and format version, as JSON. */
  header: string
  formatVersion: number
  /** One JSON line per event (a blob stub for a spilled event). */
  lines: string[]
  /** Blobs of spilled events: sha256 → the bytes of the event JSON. */
  blobs: Map<string, Buffer>
  /** The integrity records, one JSON line each. */
  marks: string[]
  /** The latest checkpoint as stored, if any. */
  checkpoint: string | undefined
  locked: boolean
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

  /** Test helper: the stored checkpoint's text (undefined when none), to damage it with {@link setCheckpoint}. */
  checkpointOf(id: string): string | undefined {
    return this.#record(id).checkpoint
  }

  /** Test helper: replaces (or removes) the stored checkpoint as stored, without checks. */
  setCheckpoint(id: string, text: string | undefined): void {
    this.#record(id).checkpoint = text
  }

  /** Test helper: replaces the lines of a stored session (any content), to make it diverge from its records. */
  setLines(id: string, lines: readonly string[]): void {
    this.#record(id).lines = [...lines]
  }

  #record(id: string): MemoryRecord {
    const record = this.records.get(id)
    if (!record) throw new SessionNotFound(id, 'memory')
    return record
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

/** The notice of a session `list()` leaves out because reading it failed with `error`. */
export function unreadableNotice(id: string, error: unknown): StoreNotice {
  const why = errorMessage(error)
  return {
    code: 'SESSION_UNREADABLE',
    message: why.includes(id) ? `not listed: ${why}` : `session ${id} is not listed: ${why}`,
  }
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
