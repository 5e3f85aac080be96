import { promises as fs, fstatSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { SessionHeader } from '@keel/session'
import { ConcurrentAppend, type LogWriter, type PendingEvent } from '@keel/store'
import { fsyncDir, writeBlobs, writeTempLog } from './files.js'
import { type HeldLock, lockIsHeld } from './lock.js'
import type { ReadState } from './reader.js'

/**
 * The exclusive writer of one session file. Before every write it checks that the file is
 * still exactly as long as it left it and that `writer.lock` is still its own: a writer
 * whose lock was deleted by hand, or whose file another process appended to, fails with
 * `ConcurrentAppend` before writing anything, so the log stays readable.
 */
export class JsonlWriter implements LogWriter {
  readonly directory: string
  readonly #id: string
  readonly #file: string
  readonly #lock: HeldLock
  #state: ReadState | undefined
  #handle: fs.FileHandle | undefined
  /** The file length after this writer's last write. */
  #size = -1
  #closed = false

  constructor(id: string, file: string, lock: HeldLock, state?: ReadState) {
    this.directory = dirname(file)
    this.#id = id
    this.#file = file
    this.#lock = lock
    this.#state = state
  }

  async rewrite(header: SessionHeader, events: readonly PendingEvent[]): Promise<void> {
    const dir = this.directory
    const temp = await writeTempLog(dir, header, events)
    try {
      // keep the pre-migration file beside the new one
      await fs
        .link(this.#file, join(dir, `session.v${this.#state?.migratedFrom ?? 'old'}.jsonl`))
        .catch((error) => {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        })
      await fs.rename(temp, this.#file)
    } finally {
      await fs.rm(temp, { force: true })
    }
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
    this.#size = (await this.#handle.stat()).size
    if (state?.needsNewline) await this.#write(Buffer.from('\n'), 0)
    else if (state) await this.#handle.sync()
  }

  async append(batch: readonly PendingEvent[]): Promise<void> {
    const firstSeq = batch[0]?.event.seq ?? 0
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

  /** Refuses to write when another writer touched the file or took the lock. */
  #guard(firstSeq: number): void {
    const handle = this.#handle
    if (!handle) throw new Error(`${this.#file} is not open for writing`)
    const size = fstatSync(handle.fd).size
    if (size !== this.#size) {
      throw new ConcurrentAppend(
        this.#id,
        firstSeq,
        undefined,
        `the file ${this.#file}, which is ${size} bytes long where this writer left it at ${this.#size}: another process wrote to it (was writer.lock deleted while this session was open?)`,
      )
    }
    if (!lockIsHeld(this.#lock.path, this.#lock.record.nonce)) {
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
    const handle = this.#handle!
    let offset = 0
    while (offset < buffer.length) {
      const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset)
      offset += bytesWritten
      this.#size += bytesWritten
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
