import { constants, isUtf8 } from 'node:buffer'
import { closeSync, readSync } from 'node:fs'
import { boundIssues, errorMessage, NotRegularFile, openRegularFile, previewJson } from '@keel/base'
import {
  SESSION_FORMAT_VERSION,
  type SessionHeader,
  schemaIssues,
  sessionHeaderValidator,
} from '@keel/session'
import { checkFormatVersion, lineTime, SessionCorrupt } from '@keel/store'
import { readThroughNewline } from './line-read.js'
import { openSessionFile } from './regular-file.js'

/** The name in the physical header's `format` field. */
export const FORMAT_NAME = 'keel-session'

/** The first line of a session file. */
export interface PhysicalHeader {
  format: typeof FORMAT_NAME
  /** The physical format version (equal to the logical `SESSION_FORMAT_VERSION`). */
  formatVersion: number
  header: SessionHeader
}

/** Bytes read at a time. */
export const CHUNK = 1 << 20

/**
 * The longest line a reader takes: what this runtime can hold as one string
 * (`buffer.constants.MAX_STRING_LENGTH`, ~512 MiB on 64-bit Node). No writer writes a longer
 * one (its JSON was such a string), so a longer run of bytes without a newline is damage —
 * refused once that far, never read on to the end of a file that may be a sparse terabyte.
 */
export const MAX_LINE_READ = constants.MAX_STRING_LENGTH

/** Bytes first read for the header line. */
const FIRST_READ = 16 * 1024

/** The first line of an open file: its text and bytes, whether a newline ends it, whether it is UTF-8. */
function firstLine(
  fd: number,
): { text: string; bytes: number; newline: boolean; utf8: boolean } | null | 'too-long' {
  const got = readThroughNewline(fd, Buffer.alloc(0), 0, FIRST_READ, MAX_LINE_READ)
  if (got.end === 'too-long') return 'too-long'
  if (got.length === 0) return null
  const nl = got.lastNewline === -1 ? -1 : got.buf.indexOf(10)
  const bytes = got.buf.subarray(0, nl === -1 ? got.length : nl)
  return { text: bytes.toString('utf8'), bytes: bytes.length, newline: nl !== -1, utf8: isUtf8(bytes) }
}

/** Reads and checks the physical header (line 1) of a session file. */
export function readHeader(
  id: string,
  file: string,
): { header: SessionHeader; bodyOffset: number; migratedFrom: number | undefined } {
  const { fd } = openSessionFile(id, file)
  let line: ReturnType<typeof firstLine>
  try {
    line = firstLine(fd)
  } finally {
    closeSync(fd)
  }
  const corrupt = (reason: string) => new SessionCorrupt(id, { file, line: 1, offset: 0 }, reason)
  if (!line) throw corrupt('the file is empty (no physical header)')
  if (line === 'too-long')
    throw corrupt(`the physical header line runs past ${MAX_LINE_READ} bytes without a newline`)
  if (!line.newline) throw corrupt('the physical header line is incomplete')
  if (!line.utf8) throw corrupt('the physical header is not valid UTF-8')
  let parsed: Partial<PhysicalHeader>
  try {
    parsed = JSON.parse(line.text) as Partial<PhysicalHeader>
  } catch (error) {
    throw corrupt(`the physical header is not valid JSON (${errorMessage(error)})`)
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
  const logical = migratedFrom === undefined ? header : { ...header, version: SESSION_FORMAT_VERSION }
  const issues = schemaIssues(sessionHeaderValidator, logical)
  if (issues) {
    const issue = boundIssues(issues, 'header').issues[0]!
    throw corrupt(`${issue.path}: ${issue.message}`)
  }
  return {
    header: migratedFrom === undefined ? header : { ...header, version: SESSION_FORMAT_VERSION },
    bodyOffset: line.bytes + 1,
    migratedFrom,
  }
}

/**
 * The number of events in a session file, without parsing: its complete lines after the
 * header (a torn or unterminated last line is not counted). Reads the file in 1 MiB chunks.
 */
export function countEvents(file: string, bodyOffset: number): number | undefined {
  let fd: number
  try {
    fd = openRegularFile(file).fd
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof NotRegularFile)
      return undefined
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
  let opened: { fd: number; size: number }
  try {
    opened = openRegularFile(file)
  } catch {
    return undefined
  }
  const { fd } = opened
  try {
    let pos = opened.size
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
