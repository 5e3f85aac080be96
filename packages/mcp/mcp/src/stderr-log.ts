// Where a stdio server's stderr goes: never to the terminal (it would tear the UI's frame),
// but to a bounded file (rotated once past its size, one previous file kept) and a short
// in-memory tail that `/mcp log` and crash reports quote.
import { createWriteStream, mkdirSync, renameSync, statSync, type WriteStream } from 'node:fs'
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
  #stream: WriteStream | undefined
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
      const bytes = Buffer.byteLength(text)
      if (this.#stream === undefined) this.#open()
      else if (this.#size + bytes > this.#maxFileBytes) this.#rotate()
      this.#stream!.write(text)
      this.#size += bytes
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
  close(): Promise<void> {
    const stream = this.#stream
    this.#stream = undefined
    if (!stream) return Promise.resolve()
    return new Promise((resolve) => stream.end(resolve))
  }

  #open(): void {
    const file = this.file!
    mkdirSync(dirname(file), { recursive: true })
    try {
      this.#size = statSync(file).size
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      this.#size = 0
    }
    if (this.#size >= this.#maxFileBytes) {
      renameSync(file, `${file}.1`)
      this.#size = 0
    }
    this.#stream = createWriteStream(file, { flags: 'a' })
    this.#stream.on('error', (error) => this.#fail(error))
  }

  #rotate(): void {
    this.#stream?.end()
    this.#stream = undefined
    renameSync(this.file!, `${this.file!}.1`)
    this.#size = 0
    this.#open()
  }

  #fail(error: unknown): void {
    if (this.#broken) return
    this.#broken = true
    this.#stream?.destroy()
    this.#stream = undefined
    this.#onError(`cannot write ${this.file}: ${errorMessage(error)}; keeping only the last lines in memory`)
  }
}
