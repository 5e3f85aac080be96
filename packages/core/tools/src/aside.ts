import { createWriteStream, mkdirSync, openSync, type WriteStream } from 'node:fs'
import { join } from 'node:path'

/** The per-call disk cap for stored-aside output when nobody sets one: 100 MiB. */
export const DEFAULT_MAX_STORED_BYTES = 100 * 1024 * 1024

/**
 * Where one call may store output too large for the log, and how much. {@link executeTool}
 * puts one on every {@link ToolContext} it runs a tool with.
 */
export interface AsideConfig {
  /** The directory of stored-aside files (the agent uses `<sessionDir>/tool-outputs`). */
  readonly dir: string
  /** Bytes this call may store in all (text and images together); the rest is discarded with a note. */
  readonly maxBytes: number
}

function safeFileName(name: string): string {
  const base = name
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 100)
  return base === '' ? 'call' : base
}

/**
 * Creates a new, empty file `<dir>/<name><suffix>` (or `<name>-<n><suffix>` when that
 * exists: an earlier output of the same call id is never overwritten) and returns its path
 * and open descriptor. Synchronous so a streaming tool can start writing at once.
 */
export function reserveAsideFile(dir: string, name: string, suffix: string): { path: string; fd: number } {
  mkdirSync(dir, { recursive: true })
  const base = safeFileName(name)
  for (let i = 0; ; i++) {
    const path = join(dir, i === 0 ? `${base}${suffix}` : `${base}-${i}${suffix}`)
    try {
      return { path, fd: openSync(path, 'wx', 0o600) }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && i < 1000) continue
      throw error
    }
  }
}

/** Longest prefix of `bytes` of at most `max` bytes that does not end inside a UTF-8 sequence. */
function utf8Prefix(bytes: Buffer, max: number): Buffer {
  if (bytes.length <= max) return bytes
  let end = max
  // step back over continuation bytes (10xxxxxx) to the start of the cut character
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return bytes.subarray(0, end)
}

/** What an {@link AsideFile} holds once closed. */
export interface AsideFileSummary {
  path: string
  /** UTF-16 units written (the text before the disk cap cut it). */
  chars: number
  bytes: number
  /** Text that did not fit under the disk cap (it was discarded). */
  discardedChars: number
}

/**
 * A stored-aside text file written as a stream: `write()` appends (UTF-8), with back-pressure
 * (`write` returns false until `drained()` resolves), and stops at the call's disk cap, after
 * which further text is only counted. Used by tools whose output can exceed memory (`bash`).
 */
export class AsideFile {
  readonly path: string
  readonly #stream: WriteStream
  readonly #maxBytes: number
  #bytes = 0
  #chars = 0
  #discarded = 0
  #error: Error | undefined

  constructor(config: AsideConfig, name: string, suffix = '.txt') {
    const { path, fd } = reserveAsideFile(config.dir, name, suffix)
    this.path = path
    this.#maxBytes = config.maxBytes
    this.#stream = createWriteStream('', { fd, highWaterMark: 4 * 1024 * 1024 })
    this.#stream.on('error', (error) => {
      this.#error = error
    })
  }

  /** Appends `text`; false means "wait for {@link drained} before writing much more". */
  write(text: string): boolean {
    if (text === '') return true
    if (this.#error || this.#bytes >= this.#maxBytes) {
      this.#discarded += text.length
      return true
    }
    let bytes: Buffer = Buffer.from(text, 'utf8')
    if (this.#bytes + bytes.length > this.#maxBytes) {
      bytes = utf8Prefix(bytes, this.#maxBytes - this.#bytes)
      const kept = bytes.toString('utf8').length
      this.#discarded += text.length - kept
      this.#chars += kept
    } else this.#chars += text.length
    this.#bytes += bytes.length
    // many small chunks (a pipe delivers 64 KiB at a time) go to the disk as one write
    this.#pending.push(bytes)
    this.#pendingBytes += bytes.length
    if (this.#pendingBytes < AsideFile.#COALESCE_BYTES) return true
    return this.#flush()
  }

  static readonly #COALESCE_BYTES = 1024 * 1024
  #pending: Buffer[] = []
  #pendingBytes = 0

  #flush(): boolean {
    if (this.#pending.length === 0) return !this.#stream.writableNeedDrain
    const chunk =
      this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending, this.#pendingBytes)
    this.#pending = []
    this.#pendingBytes = 0
    return this.#stream.write(chunk)
  }

  /** Resolves when the write buffer has drained (or the stream failed). */
  drained(): Promise<void> {
    if (!this.#stream.writableNeedDrain || this.#error) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        this.#stream.off('drain', done)
        this.#stream.off('error', done)
        resolve()
      }
      this.#stream.once('drain', done)
      this.#stream.once('error', done)
    })
  }

  /** Flushes and closes; rejects with the first write error. */
  async close(): Promise<AsideFileSummary> {
    this.#flush()
    await new Promise<void>((resolve) => {
      this.#stream.end(() => resolve())
      this.#stream.once('error', () => resolve())
    })
    if (this.#error) throw this.#error
    return { path: this.path, chars: this.#chars, bytes: this.#bytes, discardedChars: this.#discarded }
  }

  /** Closes without waiting (error paths). */
  destroy(): void {
    this.#stream.destroy()
  }
}

/** Writes one complete buffer as a new stored-aside file, cut at `maxBytes`; returns its path and the bytes kept. */
export function writeAsideBuffer(
  config: AsideConfig,
  name: string,
  suffix: string,
  data: Buffer,
  maxBytes: number,
): Promise<{ path: string; bytes: number }> {
  const kept = data.length > maxBytes ? data.subarray(0, maxBytes) : data
  const { path, fd } = reserveAsideFile(config.dir, name, suffix)
  return new Promise((resolve, reject) => {
    const stream = createWriteStream('', { fd })
    stream.on('error', reject) // the stream closes the descriptor itself (autoClose)
    stream.end(kept, () => resolve({ path, bytes: kept.length }))
  })
}

export { safeFileName, utf8Prefix }
