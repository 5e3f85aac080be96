import { errorMessage } from '@keel/base'
import { SESSION_FORMAT_VERSION, type SessionHeader } from '@keel/session'
import {
  HOST,
  type LogWriter,
  type PendingEvent,
  type ReadOptions,
  type StoreBackend,
  type StoredLog,
} from './backend.js'
import { isBlobStub, resolveBlobStub, stubDigest } from './blob.js'
import { decodeCheckpoint } from './checkpoint-decoder.js'
import { encodeCheckpoint, resolveCheckpointBlobs } from './checkpoint-file.js'
import {
  ConcurrentAppend,
  checkSessionId,
  SessionCorrupt,
  SessionExists,
  SessionLocked,
  SessionNotFound,
  type StoreLocation,
} from './errors.js'
import { parseHeader } from './header.js'
import {
  headerRoot,
  type IntegrityMark,
  type IntegrityStart,
  LineVerifier,
  linesCrc,
  TIE_LINES,
  validChain,
} from './integrity.js'
import { checkpointIgnored } from './load.js'
import type { MemoryRecord, MemoryStorage, MemoryStoreOptions } from './memory.js'
import { lineTime, sortSummaries, summaryOf, unreadableNotice } from './memory.js'
import { checkFormatVersion, migratedNotice, migrateStored } from './migration.js'
import type { ListOptions, SessionSummary, StoreNotice } from './store.js'

/** Stores the blobs of a batch before its lines (as a durable backend must). */
function keepBlobs(record: MemoryRecord, batch: readonly PendingEvent[]): void {
  for (const item of batch) if (item.blob) record.blobs.set(item.blob.sha256, Buffer.from(item.blob.json))
}

/** The memory backend: stored forms in a {@link MemoryStorage}, with the rules of a durable one. */
export class MemoryBackend implements StoreBackend {
  readonly kind = 'memory'
  readonly where = 'memory'
  readonly #storage: MemoryStorage
  readonly #failWrite: MemoryStoreOptions['failWrite']

  constructor(storage: MemoryStorage, failWrite: MemoryStoreOptions['failWrite']) {
    this.#storage = storage
    this.#failWrite = failWrite
  }

  async create(header: SessionHeader, initial: readonly PendingEvent[], mark?: IntegrityMark) {
    checkSessionId(header.id, this.where)
    if (this.#storage.records.has(header.id)) throw new SessionExists(header.id, this.where)
    const record: MemoryRecord = {
      header: JSON.stringify(header),
      formatVersion: SESSION_FORMAT_VERSION,
      lines: initial.map((p) => p.json),
      blobs: new Map(),
      marks: mark ? [JSON.stringify(mark)] : [],
      checkpoint: undefined,
      locked: true,
    }
    keepBlobs(record, initial)
    this.#storage.records.set(header.id, record)
    return { writer: this.#writer(header.id, record), notices: [] }
  }

  async openForWrite(id: string, options: ReadOptions = {}) {
    const record = this.#record(id)
    if (record.locked) {
      throw new SessionLocked(id, { host: HOST }, 'another store over the same memory storage has it open')
    }
    record.locked = true
    const writer = this.#writer(id, record)
    try {
      return { log: this.#log(id, record, options), writer, notices: [] }
    } catch (error) {
      await writer.close()
      throw error
    }
  }

  async read(id: string, options: ReadOptions = {}): Promise<StoredLog> {
    return this.#log(id, this.#record(id), options)
  }

  async appendStored(id: string, build: (log: StoredLog) => { firstSeq: number; pending: PendingEvent[] }) {
    const record = this.#record(id)
    if (record.locked)
      throw new SessionLocked(id, { host: HOST }, 'append through the handle that has it open')
    const { firstSeq, pending } = build(this.#log(id, record, {}))
    if (firstSeq !== record.lines.length) throw new ConcurrentAppend(id, firstSeq, record.lines.length)
    keepBlobs(record, pending)
    record.lines.push(...pending.map((p) => p.json))
  }

  async list(options: ListOptions & { limit: number }): Promise<SessionSummary[]> {
    const out: SessionSummary[] = []
    for (const [id, record] of this.#storage.records) {
      let header: SessionHeader
      try {
        header = parseHeader(id, record.header, { file: this.where }, undefined)
      } catch (error) {
        options.onNotice?.(unreadableNotice(id, error))
        continue
      }
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

  #log(id: string, record: MemoryRecord, options: ReadOptions): StoredLog {
    const from = checkFormatVersion(id, record.formatVersion, this.where)
    const lines = [...record.lines]
    const where = (seq: number): StoreLocation => ({
      file: `memory:${id}`,
      ...(seq >= 0 ? { line: seq + 2, seq } : { line: 1 }),
    })
    const parsed = (i: number): unknown => {
      const raw: unknown = parseStored(id, lines[i]!, where(i))
      if (!isBlobStub(raw)) return raw
      const sha256 = stubDigest(id, raw, where(i))
      return resolveBlobStub(id, raw, record.blobs.get(sha256), `memory:${id}/blobs/${sha256}`, where(i))
    }
    const header = JSON.parse(record.header) as SessionHeader
    const notices: StoreNotice[] = from === undefined ? [] : [migratedNotice(id, from)]
    const root = { chain: headerRoot(header), from: 0, crc: 0 }
    const marks = from === undefined ? validChain(record.marks.map(parseMark), root.chain, 0) : []
    const start =
      options.checkpoint && from === undefined ? this.#tie(id, record, lines, marks, notices) : undefined
    const begin = start?.integrity ?? root
    const trust = options.trust === true && from === undefined
    const covered = marks.filter((m) => m.seq >= begin.from)
    const verifier = new LineVerifier(id, `memory:${id}`, begin, covered, trust)
    const events = (function* () {
      for (let i = begin.from; i < lines.length; i++) {
        verifier.line(i, lines[i]!)
        yield parsed(i)
      }
    })()
    const log: StoredLog = {
      header: from === undefined ? header : { ...header, version: SESSION_FORMAT_VERSION },
      events: from === undefined ? events : migrateStored(events, from),
      notices,
      ...(from === undefined ? {} : { migratedFrom: from }),
      where,
      integrity: () => verifier.start(),
      ...(trust ? { trusted: verifier.trusted } : {}),
    }
    if (!start) return log
    const prefix = { read: (a: number, b: number) => Array.from({ length: b - a }, (_, k) => parsed(a + k)) }
    return { ...log, checkpoint: { doc: start.doc, prefix, bytes: record.checkpoint?.length ?? 0 } }
  }

  /** The stored checkpoint when its tie holds: its record is in the chain and its lines have its CRC. */
  #tie(
    id: string,
    record: MemoryRecord,
    lines: readonly string[],
    marks: readonly IntegrityMark[],
    notices: StoreNotice[],
  ) {
    if (record.checkpoint === undefined) return undefined
    const decoded = decodeCheckpoint(record.checkpoint, id)
    if (!decoded.ok) {
      notices.push(checkpointIgnored(id, undefined, decoded.reason))
      return undefined
    }
    const { doc } = decoded
    const mark = marks.find((m) => m.next === doc.seq)
    const tail = doc.locator as { tailFrom?: unknown; tailCrc?: unknown } | null
    const tailFrom = Math.max(0, doc.seq - TIE_LINES)
    if (
      !mark ||
      mark.chain !== doc.mark.chain ||
      doc.seq > lines.length ||
      tail?.tailFrom !== tailFrom ||
      tail.tailCrc !== linesCrc(lines.slice(tailFrom, doc.seq))
    ) {
      notices.push(
        checkpointIgnored(id, doc.seq, 'it is stale: the log no longer holds the prefix it was taken from'),
      )
      return undefined
    }
    const resolved = resolveCheckpointBlobs(doc, record.blobs)
    if (!resolved.ok) {
      notices.push(checkpointIgnored(id, doc.seq, resolved.reason))
      return undefined
    }
    const integrity: IntegrityStart = { chain: mark.chain, from: mark.next, crc: 0, last: mark }
    return { doc: resolved.doc, integrity }
  }

  #writer(id: string, record: MemoryRecord): LogWriter {
    let closed = false
    return {
      rewrite: async (header, events, mark) => {
        record.header = JSON.stringify(header)
        record.formatVersion = SESSION_FORMAT_VERSION
        keepBlobs(record, events)
        record.lines = events.map((p) => p.json)
        record.marks = mark ? [JSON.stringify(mark)] : []
        record.checkpoint = undefined
      },
      prepare: async (log) => {
        // keep the records that held; the writer continues the chain after the last one
        const last = log.integrity?.().last
        const keep = last ? record.marks.findIndex((m) => parseMark(m)?.chain === last.chain) + 1 : 0
        record.marks.length = Math.max(0, keep)
      },
      append: async (batch, mark) => {
        const fault = this.#failWrite?.(id, batch)
        if (fault) throw fault
        const first = batch[0]?.event.seq ?? mark?.next ?? record.lines.length
        if (batch.length > 0 && first !== record.lines.length)
          throw new ConcurrentAppend(id, first, record.lines.length)
        keepBlobs(record, batch)
        record.lines.push(...batch.map((p) => p.json))
        if (mark) record.marks.push(JSON.stringify(mark))
      },
      saveCheckpoint: async ({ blobs, ...doc }) => {
        for (const blob of blobs) record.blobs.set(blob.sha256, Buffer.from(blob.json))
        const tailFrom = Math.max(0, doc.seq - TIE_LINES)
        const locator = { tailFrom, tailCrc: linesCrc(record.lines.slice(tailFrom, doc.seq)) }
        record.checkpoint = encodeCheckpoint({ ...doc, locator, blobs: blobs.map((b) => b.sha256) })
        return record.checkpoint.length
      },
      close: async () => {
        if (!closed) record.locked = false
        closed = true
      },
    }
  }
}

function parseMark(line: string): IntegrityMark | undefined {
  try {
    return JSON.parse(line) as IntegrityMark
  } catch {
    return undefined // a damaged record: the chain stops before it
  }
}

/** Parses one stored line; a line that is not JSON is `SessionCorrupt` at its place. */
function parseStored(id: string, line: string, where: StoreLocation): unknown {
  try {
    return JSON.parse(line)
  } catch (error) {
    throw new SessionCorrupt(id, where, `the line is not valid JSON (${errorMessage(error)})`)
  }
}
