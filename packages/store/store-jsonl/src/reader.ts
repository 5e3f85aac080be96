import { isUtf8 } from 'node:buffer'
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { dirname } from 'node:path'
import { boundIssues, previewJson } from '@keel/base'
import { SESSION_FORMAT_VERSION, type SessionHeader, sessionHeaderValidator } from '@keel/session'
import {
  checkFormatVersion,
  isBlobStub,
  lineTime,
  migratedNotice,
  migrateStored,
  resolveBlobStub,
  SessionCorrupt,
  type StoredLog,
  type StoreLocation,
  type StoreNotice,
  stubDigest,
} from '@keel/store'
import { blobPath, readBlob } from './files.js'

/** The name in the physical header's `format` field. */
export const FORMAT_NAME = 'keel-session'

/** The first line of a session file. */
export interface PhysicalHeader {
  format: typeof FORMAT_NAME
  /** The physical format version (equal to the logical `SESSION_FORMAT_VERSION`). */
  formatVersion: number
  header: SessionHeader
}

const CHUNK = 1 << 20

/** Reads a file line by line with synchronous reads of 1 MiB: memory bounded by the longest line. */
class LineReader {
  readonly #fd: number
  #buf: Buffer = Buffer.alloc(0)
  #start = 0
  #end = 0
  /** File offset of `#buf[0]`. */
  #base: number
  #eof = false

  constructor(fd: number, from: number) {
    this.#fd = fd
    this.#base = from
  }

  /** The next line: its text, file offset, and whether it ended with a newline. Null at end. */
  next(): { text: string; offset: number; bytes: number; newline: boolean; utf8: boolean } | null {
    let searchFrom = this.#start
    for (;;) {
      const nl = this.#buf.indexOf(10, searchFrom)
      if (nl !== -1 && nl < this.#end) {
        const line = {
          text: this.#buf.toString('utf8', this.#start, nl),
          offset: this.#base + this.#start,
          bytes: nl - this.#start,
          newline: true,
          utf8: isUtf8(this.#buf.subarray(this.#start, nl)),
        }
        this.#start = nl + 1
        return line
      }
      if (this.#eof) {
        if (this.#start >= this.#end) return null
        const line = {
          text: this.#buf.toString('utf8', this.#start, this.#end),
          offset: this.#base + this.#start,
          bytes: this.#end - this.#start,
          newline: false,
          utf8: isUtf8(this.#buf.subarray(this.#start, this.#end)),
        }
        this.#start = this.#end
        return line
      }
      searchFrom = this.#end - this.#start
      this.#refill()
    }
  }

  #refill(): void {
    const rest = this.#end - this.#start
    let buf = this.#buf
    if (rest > 0 && this.#start === 0 && this.#end === buf.length) {
      // one line longer than the buffer: grow
      buf = Buffer.allocUnsafe(buf.length * 2)
      this.#buf.copy(buf, 0, 0, rest)
    } else {
      if (buf.length < CHUNK) buf = Buffer.allocUnsafe(CHUNK)
      this.#buf.copy(buf, 0, this.#start, this.#end)
    }
    this.#base += this.#start
    this.#buf = buf
    this.#start = 0
    this.#end = rest
    const read = readSync(this.#fd, buf, rest, buf.length - rest, this.#base + rest)
    if (read === 0) this.#eof = true
    this.#end += read
  }
}

/** Reads and checks the physical header (line 1) of a session file. */
export function readHeader(
  id: string,
  file: string,
): { header: SessionHeader; bodyOffset: number; migratedFrom: number | undefined } {
  const fd = openSync(file, 'r')
  let line: ReturnType<LineReader['next']>
  try {
    line = new LineReader(fd, 0).next()
  } finally {
    closeSync(fd)
  }
  const corrupt = (reason: string) => new SessionCorrupt(id, { file, line: 1, offset: 0 }, reason)
  if (!line) throw corrupt('the file is empty (no physical header)')
  if (!line.newline) throw corrupt('the physical header line is incomplete')
  if (!line.utf8) throw corrupt('the physical header is not valid UTF-8')
  let parsed: Partial<PhysicalHeader>
  try {
    parsed = JSON.parse(line.text) as Partial<PhysicalHeader>
  } catch (error) {
    throw corrupt(`the physical header is not valid JSON (${(error as Error).message})`)
  }
  if (parsed === null || typeof parsed !== 'object' || parsed.format !== FORMAT_NAME) {
    throw corrupt(`the first line is not a ${FORMAT_NAME} header`)
  }
  const migratedFrom = checkFormatVersion(id, parsed.formatVersion, file)
  const header = parsed.header
  if (header === null || typeof header !== 'object' || Array.isArray(header))
    throw corrupt('`header` is not an object')
  if (header.id !== id) {
    throw corrupt(`the header names session ${previewJson(header.id)}, but the file is stored as ${id}`)
  }
  const checked = sessionHeaderValidator.safeParse(
    migratedFrom === undefined ? header : { ...header, version: SESSION_FORMAT_VERSION },
  )
  if (!checked.success) {
    const issue = boundIssues(checked.error.issues, 'header').issues[0]!
    throw corrupt(`${issue.path}: ${issue.message}`)
  }
  return {
    header: migratedFrom === undefined ? header : { ...header, version: SESSION_FORMAT_VERSION },
    bodyOffset: line.bytes + 1,
    migratedFrom,
  }
}

/** What reading the body found out about the file's valid prefix (for repair on open). */
export interface ReadState {
  /** Bytes of the file that hold kept lines; a dropped torn tail starts here. */
  validLength: number
  /** The last kept line has no newline yet (it must be added before appending). */
  needsNewline: boolean
  /** The body was read to the end. */
  complete: boolean
  /** The stored format version, when older than the current one (upgraded while reading). */
  migratedFrom?: number
}

/**
 * A session file as a {@link StoredLog}: the header is read and checked now (a newer
 * format is refused before any event is parsed); events are parsed lazily, streaming.
 */
export function readLog(id: string, file: string): StoredLog & { state: ReadState } {
  const { header, bodyOffset, migratedFrom } = readHeader(id, file)
  const notices: StoreNotice[] = migratedFrom === undefined ? [] : [migratedNotice(id, migratedFrom)]
  const state: ReadState = { validLength: bodyOffset, needsNewline: false, complete: false }
  if (migratedFrom !== undefined) state.migratedFrom = migratedFrom
  /** The line being read: enough to compute its byte offset lazily (only errors need it). */
  let current = { line: 1, text: '', start: 0, base: 0 }
  const offsetOf = (c: typeof current) => c.base + Buffer.byteLength(c.text.slice(0, c.start))
  const dir = dirname(file)
  /** Puts a spilled event's blob in place of its stub line (digest checked). */
  const resolve = (raw: unknown, at: StoreLocation): unknown => {
    if (!isBlobStub(raw)) return raw
    const where = { ...at, seq: raw.seq }
    const sha256 = stubDigest(id, raw, where)
    return resolveBlobStub(id, raw, readBlob(dir, sha256), blobPath(dir, sha256), where)
  }
  function* events(): Generator<unknown> {
    const fd = openSync(file, 'r')
    try {
      let pos = bodyOffset
      let carry = Buffer.alloc(0)
      let chunk = CHUNK
      let lineNo = 1
      for (;;) {
        // Decode whole chunks up to their last newline (a newline byte never sits inside a
        // multi-byte character), then cut lines out of the string: no per-line decoding.
        const buf = Buffer.allocUnsafe(carry.length + chunk)
        carry.copy(buf, 0)
        const read = readSync(fd, buf, carry.length, chunk, pos)
        const base = pos - carry.length
        pos += read
        const length = carry.length + read
        const lastNewline = length === 0 ? -1 : buf.lastIndexOf(10, length - 1)
        if (lastNewline === -1) {
          if (read > 0) {
            carry = buf.subarray(0, length)
            chunk *= 2 // a line longer than the chunk: read more at once
            continue
          }
          if (length > 0) {
            // The final line has no newline: a write cut short, never acknowledged.
            lineNo++
            const text = buf.toString('utf8', 0, length)
            current = { line: lineNo, text, start: 0, base }
            let parsed: unknown
            if (isUtf8(buf.subarray(0, length))) {
              try {
                parsed = JSON.parse(text)
              } catch {
                // not parseable: a torn write, dropped below with a notice
              }
            }
            if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
              notices.push({
                code: 'MISSING_FINAL_NEWLINE',
                message: `${file}: the last line (${lineNo}) is complete but has no newline; kept (one is added before the next append)`,
              })
              state.validLength = base + length
              state.needsNewline = true
              yield resolve(parsed, { file, line: lineNo, offset: base })
            } else {
              state.validLength = base
              notices.push({
                code: 'TORN_TAIL_DROPPED',
                message: `${file}: dropped the torn last line ${lineNo} (${length} bytes at byte ${base}, no newline): a write cut short by a crash, never acknowledged`,
              })
            }
          }
          break
        }
        if (!isUtf8(buf.subarray(0, lastNewline + 1))) {
          const bad = firstInvalidLine(buf, lastNewline + 1)
          throw new SessionCorrupt(
            id,
            { file, line: lineNo + 1 + bad.index, offset: base + bad.start },
            'the line is not valid UTF-8 (a byte sequence that is no character; the file was damaged or written by another program)',
          )
        }
        const text = buf.toString('utf8', 0, lastNewline + 1)
        carry = Buffer.from(buf.subarray(lastNewline + 1, length))
        state.validLength = base + lastNewline + 1
        let start = 0
        while (start < text.length) {
          const newline = text.indexOf('\n', start)
          lineNo++
          current = { line: lineNo, text, start, base }
          let parsed: unknown
          try {
            parsed = JSON.parse(text.slice(start, newline))
          } catch (error) {
            throw new SessionCorrupt(
              id,
              { file, line: lineNo, offset: offsetOf(current) },
              newline === start
                ? 'an empty line'
                : `the line is not valid JSON (${(error as Error).message})`,
            )
          }
          if (isBlobStub(parsed)) parsed = resolve(parsed, { file, line: lineNo, offset: offsetOf(current) })
          start = newline + 1
          yield parsed
        }
      }
      state.complete = true
    } finally {
      closeSync(fd)
    }
  }
  return {
    header,
    events: migratedFrom === undefined ? events() : migrateStored(events(), migratedFrom),
    notices,
    ...(migratedFrom === undefined ? {} : { migratedFrom }),
    state,
    where: (seq) => {
      if (seq < 0) return { file, line: 1, offset: 0 }
      const line = seq + 2
      return current.line === line ? { file, line, offset: offsetOf(current), seq } : { file, line, seq }
    },
  }
}

/** The index (0-based) and start byte of the first line in `buf[0, end)` that is not valid UTF-8. */
function firstInvalidLine(buf: Buffer, end: number): { index: number; start: number } {
  let start = 0
  for (let index = 0; start < end; index++) {
    let newline = buf.indexOf(10, start)
    if (newline === -1 || newline >= end) newline = end
    if (!isUtf8(buf.subarray(start, newline))) return { index, start }
    start = newline + 1
  }
  return { index: 0, start: 0 }
}

/**
 * The number of events in a session file, without parsing: its complete lines after the
 * header (a torn or unterminated last line is not counted). Reads the file in 1 MiB chunks.
 */
export function countEvents(file: string, bodyOffset: number): number | undefined {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const buf = Buffer.allocUnsafe(CHUNK)
    let count = 0
    for (let pos = bodyOffset; ; ) {
      const read = readSync(fd, buf, 0, CHUNK, pos)
      if (read === 0) return count
      pos += read
      for (let at = buf.indexOf(10, 0); at !== -1 && at < read; at = buf.indexOf(10, at + 1)) count++
    }
  } finally {
    closeSync(fd)
  }
}

/** How far back {@link lastEventTime} reads (a line is at most the store's line cap, 1 MiB by default). */
const MAX_TAIL_BYTES = 8 << 20

/**
 * The `time` of the last event of a session file, reading back from its end: the last
 * line, or the one before it when the last is a torn, unparsable tail. `undefined` when
 * there is none or it cannot be read. For listing only: nothing is validated.
 */
export function lastEventTime(file: string, bodyOffset: number): number | undefined {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch {
    return undefined
  }
  try {
    let pos = fstatSync(fd).size
    let tail = Buffer.alloc(0)
    // Read back until two line starts are known (or the body's start is reached).
    const newlines = () => {
      const end = tail.at(-1) === 10 ? tail.length - 1 : tail.length
      let count = 0
      for (let at = tail.indexOf(10); at !== -1 && at < end; at = tail.indexOf(10, at + 1)) count++
      return count
    }
    while (pos > bodyOffset && tail.length < MAX_TAIL_BYTES && newlines() < 2) {
      const from = Math.max(bodyOffset, pos - 64 * 1024)
      const piece = Buffer.allocUnsafe(pos - from)
      const read = readSync(fd, piece, 0, piece.length, from)
      tail = Buffer.concat([piece.subarray(0, read), tail])
      pos = from
    }
    const text = tail.toString('utf8')
    const lines = (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n')
    // The first piece is a whole line only when reading reached the body's start.
    const whole = pos === bodyOffset ? lines : lines.slice(1)
    for (let i = whole.length - 1; i >= Math.max(0, whole.length - 2); i--) {
      const time = lineTime(whole[i])
      if (time !== undefined) return time
    }
    return undefined
  } finally {
    closeSync(fd)
  }
}
