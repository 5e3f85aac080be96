// Where a stdio server's stderr goes: never to the terminal (it would tear the UI's frame),
// but to a bounded file (rotated once past its size, one previous file kept) and a short
// in-memory tail that `/mcp log` and crash reports quote.
import { closeSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { errorMessage } from '@keel/base'

/** Options of {@link BoundedLog}. */
export interface BoundedLogOptions {
  /** Bytes the file may reach before it is rotated to `<file>.1`. Default 1 MiB. */
  maxFileBytes?: number
  /** Characters of the in-memory tail. Default 8 KiB. */
  tailChars?: number
  /** Called once if the file cannot be written (logging goes on in memory only). */
  onError?(message: string): void
}

/** A size-bounded log file with an in-memory tail. */
export class BoundedLog {
  readonly file: string | undefined
  readonly #maxFileBytes: number
  readonly #tailChars: number
  readonly #onError: (message: string) => void
  /** The open file (appends are synchronous: stderr is low volume, and a rotation must not race a pending open). */
  #fd: number | undefined
  #size = 0
  #tail = ''
  #broken = false

  constructor(file: string | undefined, options: BoundedLogOptions = {}) {
    this.file = file
    this.#maxFileBytes = options.maxFileBytes ?? 1024 * 1024
    this.#tailChars = options.tailChars ?? 8 * 1024
    this.#onError = options.onError ?? (() => {})
  }

  /** Appends a chunk (a line or part of one). */
  write(chunk: string | Buffer): void {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8')
    this.#tail = (this.#tail + text).slice(-this.#tailChars)
    if (this.file === undefined || this.#broken) return
    try {
      const bytes = Buffer.from(text, 'utf8')
      if (this.#fd === undefined) this.#open()
      if (this.#size > 0 && this.#size + bytes.length > this.#maxFileBytes) this.#rotate()
      writeSync(this.#fd!, bytes)
      this.#size += bytes.length
    } catch (error) {
      this.#fail(error)
    }
  }

  /** The last lines written (at most `lines`), without the trailing partial newline. */
  tail(lines = 20): string[] {
    const all = this.#tail.split('\n')
    if (all.at(-1) === '') all.pop()
    return all.slice(-lines)
  }

  /** Closes the file (the tail stays readable). */
  async close(): Promise<void> {
    const fd = this.#fd
    this.#fd = undefined
    if (fd !== undefined) closeSync(fd)
  }

  #open(): void {
    const file = this.file!
    mkdirSync(dirname(file), { recursive: true })
    this.#fd = openSync(file, 'a')
    this.#size = fstatSync(this.#fd).size
  }

  /** The file is full: it becomes `<file>.1` (replacing the previous one) and a new one starts. */
  #rotate(): void {
    closeSync(this.#fd!)
    this.#fd = undefined
    renameSync(this.file!, `${this.file!}.1`)
    this.#open()
  }

  #fail(error: unknown): void {
    if (this.#broken) return
    this.#broken = true
    if (this.#fd !== undefined) closeSync(this.#fd)
    this.#fd = undefined
    this.#onError(`cannot write ${this.file}: ${errorMessage(error)}; keeping only the last lines in memory`)
  }
}
