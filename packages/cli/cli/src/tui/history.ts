import { createHash } from 'node:crypto'
import { closeSync, readSync } from 'node:fs'
import { appendFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { errorMessage, KeelError, openRegularFile } from '@keel/base'
import { z } from 'zod'

/** Most entries read back (the file itself only grows; the newest are kept). */
export const HISTORY_SIZE = 1000

/** Longest entry kept (a huge paste is not worth recalling in full). */
const MAX_ENTRY_CHARS = 100_000

/**
 * Most bytes read back, from the end of the file (which only grows): `keel` starts in the
 * same time after years of use, and what lies before is not read at all.
 */
export const MAX_HISTORY_SCAN_BYTES = 16 * 1024 * 1024

/** Bytes read at a time, walking back from the end. */
const CHUNK_BYTES = 1024 * 1024

/**
 * The complete lines of the last `maxBytes` of an open file, newest first, each without its
 * line feed; a line cut by that bound is not given.
 */
function* linesFromEnd(fd: number, size: number, maxBytes: number): Generator<Buffer> {
  const stop = Math.max(0, size - maxBytes)
  let carry = Buffer.alloc(0) // the start of the file's text after `end`, before its first line feed
  for (let end = size; end > stop; ) {
    const start = Math.max(stop, end - CHUNK_BYTES)
    const chunk = Buffer.allocUnsafe(end - start)
    for (let got = 0, n = -1; got < chunk.length && n !== 0; got += n) {
      n = readSync(fd, chunk, got, chunk.length - got, start + got)
      if (n === 0)
        throw new KeelError('HISTORY_CHANGED', `the file shrank to ${start + got} bytes while it was read`, {
          size,
        })
    }
    const text = Buffer.concat([chunk, carry])
    let lineEnd = text.length
    for (let at = text.lastIndexOf(10, lineEnd - 1); at !== -1; at = text.lastIndexOf(10, lineEnd - 1)) {
      if (at + 1 < lineEnd) yield text.subarray(at + 1, lineEnd)
      lineEnd = at
    }
    carry = text.subarray(0, lineEnd)
    end = start
  }
  if (stop === 0 && carry.length > 0) yield carry
}

const entrySchema = z.object({ text: z.string(), time: z.number(), cwd: z.string() })

/**
 * The input history of one project (the directory `keel` works in), as Claude Code and
 * Gemini CLI keep it: one JSON line per submitted input in `$KEEL_HOME/history/<key>.jsonl`,
 * where `<key>` is a digest of the directory, appended as each input is sent (several `keel`s
 * in one project append whole lines), readable only by its owner.
 */
export class InputHistory {
  readonly file: string
  readonly #cwd: string

  constructor(home: string, cwd: string) {
    this.#cwd = cwd
    const key = createHash('sha256').update(cwd).digest('hex').slice(0, 16)
    this.file = join(home, 'history', `${key}.jsonl`)
  }

  /**
   * The entries, newest first, without repeats, from the last {@link MAX_HISTORY_SCAN_BYTES}
   * of the file; a missing file is an empty history. Lines that are not entries (a torn
   * write, an edit by hand) are skipped and counted. Only a regular file is read: a FIFO or a
   * device in its place is refused at once (`NotRegularFile`), never waited on.
   */
  async load(): Promise<{ entries: string[]; skipped: number }> {
    let opened: { fd: number; size: number }
    try {
      opened = openRegularFile(this.file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], skipped: 0 }
      throw error
    }
    const seen = new Set<string>()
    const entries: string[] = []
    let skipped = 0
    try {
      for (const bytes of linesFromEnd(opened.fd, opened.size, MAX_HISTORY_SCAN_BYTES)) {
        if (entries.length >= HISTORY_SIZE) break
        const line = bytes.toString('utf8')
        if (line.trim() === '') continue
        let parsed: z.infer<typeof entrySchema> | undefined
        try {
          parsed = entrySchema.parse(JSON.parse(line))
        } catch {
          parsed = undefined
        }
        if (parsed === undefined) {
          skipped++
          continue
        }
        if (parsed.cwd !== this.#cwd || seen.has(parsed.text)) continue
        seen.add(parsed.text)
        entries.push(parsed.text)
      }
    } finally {
      closeSync(opened.fd)
    }
    return { entries, skipped }
  }

  /** Appends one entry; a failure is returned as text for the UI to show, never thrown. */
  async append(text: string): Promise<string | undefined> {
    if (text.trim() === '' || text.length > MAX_ENTRY_CHARS) return undefined
    try {
      await mkdir(join(this.file, '..'), { recursive: true, mode: 0o700 })
      await appendFile(this.file, `${JSON.stringify({ text, time: Date.now(), cwd: this.#cwd })}\n`, {
        mode: 0o600,
      })
      return undefined
    } catch (error) {
      return `the input history could not be saved to ${this.file}: ${errorMessage(error)}`
    }
  }
}
