import {
  closeSync,
  fdatasync,
  promises as fs,
  fstatSync,
  openSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import type { SessionHeader } from '@keel/session'
import {
  type CheckpointInput,
  ConcurrentAppend,
  encodeCheckpoint,
  headerRoot,
  type IntegrityMark,
  type LogWriter,
  type PendingEvent,
  type StoredLog,
} from '@keel/store'
import { chainHeaderLine, chainPath, type FileMark, markLine } from './chain.js'
import {
  checkpointPath,
  type IndexEntry,
  type JsonlLocator,
  rangeCrc,
  TIE_BYTES,
  writeCheckpoint,
} from './checkpoint.js'
import { fsyncDir, physicalHeaderLine, writeBlobs, writeTempLog } from './files.js'
import { CHUNK } from './header.js'
import { type HeldLock, lockUnchanged } from './lock.js'
import type { JsonlLog } from './reader.js'

const datasync = promisify(fdatasync)

/**
 * The exclusive writer of one session file. Before every write it checks that the file is
 * still exactly as long as it left it (`fstat`) and that `writer.lock` is still its own
 * (`stat`: same inode, unchanged): a writer whose lock was deleted or taken over, or whose
 * file another process appended to, fails with `ConcurrentAppend` before writing anything.
 * Each batch is one write (synchronous: it only fills the page cache) and one `fdatasync`
 * (off the main thread); its integrity record goes to
 * `session.chain` after it (not synced: a lost record only means those lines are checked
 * in full next time), its checkpoint to `session.checkpoint`.
 */
export class JsonlWriter implements LogWriter {
  readonly directory: string
  readonly #id: string
  readonly #file: string
  readonly #lock: HeldLock
  /** The log and `session.chain`, open for appending (plain descriptors: writes are synchronous). */
  #fd: number | undefined
  #chainFd: number | undefined
  /** The file length after this writer's last write. */
  #size = -1
  /** The length of `session.chain`, and where the last record's line starts in it. */
  #chainSize = 0
  #lastAt = -1
  #last: FileMark | undefined
  /** Where the lines of the next record start. */
  #markStart = 0
  #index: IndexEntry[] = []
  #closed = false

  /** The format version of the file as read, when a migration will rewrite it. */
  readonly #migratedFrom: number | undefined

  constructor(id: string, file: string, lock: HeldLock, migratedFrom?: number) {
    this.directory = dirname(file)
    this.#id = id
    this.#file = file
    this.#lock = lock
    this.#migratedFrom = migratedFrom
  }

  /** After `create` (the log linked in place with `mark` covering its events): starts the chain and opens the file. */
  async begin(header: SessionHeader, mark: IntegrityMark | undefined): Promise<void> {
    const bodyOffset = Buffer.byteLength(physicalHeaderLine(header))
    this.#fd = openSync(this.#file, 'a')
    this.#size = fstatSync(this.#fd).size
    await this.#startChain(header, mark && { ...mark, start: bodyOffset, end: this.#size })
    this.#markStart = mark ? this.#size : bodyOffset
    this.#index = [[0, bodyOffset]]
  }

  async rewrite(header: SessionHeader, events: readonly PendingEvent[], mark: IntegrityMark | undefined) {
    const dir = this.directory
    const temp = await writeTempLog(dir, header, events)
    try {
      // keep the pre-migration file beside the new one
      await fs.link(this.#file, join(dir, `session.v${this.#migratedFrom ?? 'old'}.jsonl`)).catch((error) => {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      })
      await fs.rename(temp, this.#file)
    } finally {
      await fs.rm(temp, { force: true })
    }
    await fsyncDir(dir)
    await fs.rm(checkpointPath(dir), { force: true })
    await this.begin(header, mark)
  }

  /** Synchronous but for a missing newline's sync or chain: a resume makes no round trip to the thread pool. */
  async prepare(log: StoredLog): Promise<void> {
    if (this.#fd !== undefined) return // begun by create or rewrite
    const { state } = log as JsonlLog
    const { size } = statSync(this.#file)
    if (size > state.validLength) {
      // drop the torn tail for good, so appends start on a clean line
      truncateSync(this.#file, state.validLength)
    }
    this.#fd = openSync(this.#file, 'a')
    this.#size = fstatSync(this.#fd).size
    // (what a crashed writer left unsynced is flushed by this writer's first fdatasync)
    if (state.needsNewline) await this.#write(Buffer.from('\n'), 0)
    const start = log.integrity?.()
    const last = start?.last as FileMark | undefined
    if (state.chainLength === 0) await this.#startChain(log.header, undefined)
    else {
      truncateSync(chainPath(this.directory), state.chainLength)
      this.#chainFd = openSync(chainPath(this.directory), 'a')
      this.#chainSize = state.chainLength
      this.#lastAt = last ? state.chainLength - Buffer.byteLength(markLine(last)) : -1
    }
    this.#last = last
    this.#markStart = last?.end ?? state.bodyOffset
    this.#index = state.index.length > 0 ? state.index : [[0, state.bodyOffset]]
  }

  /**
   * Replaces `session.chain` by its header line and, when given, one record. (Written off the
   * main thread: creating a file waits on the journal, which concurrent fsyncs hold.)
   */
  async #startChain(header: SessionHeader, mark: FileMark | undefined): Promise<void> {
    const head = chainHeaderLine(headerRoot(header))
    const text = mark ? head + markLine(mark) : head
    await fs.writeFile(chainPath(this.directory), text)
    this.#chainFd = openSync(chainPath(this.directory), 'a')
    this.#chainSize = Buffer.byteLength(text)
    this.#lastAt = mark ? Buffer.byteLength(head) : -1
    this.#last = mark
  }

  async append(batch: readonly PendingEvent[], mark?: IntegrityMark): Promise<void> {
    const firstSeq = batch[0]?.event.seq ?? mark?.next ?? 0
    if (batch.length > 0) {
      let text = ''
      let blobs = false
      for (const item of batch) {
        text += `${item.json}\n`
        if (item.blob) blobs = true
      }
      if (blobs) {
        this.#guard(firstSeq)
        await writeBlobs(this.directory, batch)
      }
      await this.#write(Buffer.from(text), firstSeq)
    }
    if (mark) await this.#record(mark)
  }

  /** Appends the record of `[markStart, size)` to `session.chain`. */
  async #record(mark: IntegrityMark): Promise<void> {
    const placed: FileMark = { ...mark, start: this.#markStart, end: this.#size }
    const line = markLine(placed)
    writeSync(this.#chainFd!, line) // a small write to the page cache: no round trip to the thread pool
    this.#lastAt = this.#chainSize
    this.#chainSize += Buffer.byteLength(line)
    this.#last = placed
    this.#markStart = this.#size
    if (this.#size - this.#index[this.#index.length - 1]![1] >= CHUNK)
      this.#index.push([mark.next, this.#size])
  }

  async saveCheckpoint({ blobs, ...doc }: CheckpointInput): Promise<number> {
    const last = this.#last
    if (!last || last.next !== doc.seq || last.chain !== doc.mark.chain) {
      throw new Error(`the checkpoint at seq ${doc.seq} does not end at the last integrity record written`)
    }
    const bytes = Math.min(TIE_BYTES, last.end - this.#index[0]![1])
    const locator: JsonlLocator = {
      start: last.start,
      end: last.end,
      chainAt: this.#lastAt,
      index: this.#index.filter((e) => e[1] < last.end),
      tail: { bytes, crc: rangeCrc(this.#file, last.end - bytes, last.end) },
    }
    if (blobs.length > 0)
      await writeBlobs(
        this.directory,
        blobs.map((blob) => ({ blob }) as PendingEvent),
      )
    const text = encodeCheckpoint({ ...doc, locator: locator as never, blobs: blobs.map((b) => b.sha256) })
    writeCheckpoint(this.directory, text)
    return text.length
  }

  /** Refuses to write when another writer touched the file or took the lock. */
  #guard(firstSeq: number): void {
    const fd = this.#fd
    if (fd === undefined) throw new Error(`${this.#file} is not open for writing`)
    const size = fstatSync(fd).size
    if (size !== this.#size) {
      throw new ConcurrentAppend(
        this.#id,
        firstSeq,
        undefined,
        `the file ${this.#file}, which is ${size} bytes long where this writer left it at ${this.#size}: another process wrote to it (was writer.lock deleted while this session was open?)`,
      )
    }
    if (!lockUnchanged(this.#lock)) {
      throw new ConcurrentAppend(
        this.#id,
        firstSeq,
        undefined,
        `the writer lock ${this.#lock.path}, which is no longer this writer's (it was deleted or taken over while the session was open)`,
      )
    }
  }

  async #write(buffer: Buffer, firstSeq: number): Promise<void> {
    this.#guard(firstSeq)
    const fd = this.#fd!
    // written at once (into the page cache), then made durable off the main thread
    let offset = 0
    while (offset < buffer.length) {
      const written = writeSync(fd, buffer, offset, buffer.length - offset)
      offset += written
      this.#size += written
    }
    await datasync(fd)
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    try {
      if (this.#fd !== undefined) closeSync(this.#fd)
      if (this.#chainFd !== undefined) closeSync(this.#chainFd)
    } finally {
      await this.#lock.release()
    }
  }
}
