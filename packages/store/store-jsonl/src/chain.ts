import { closeSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { type IntegrityMark, isMark, linksTo } from '@keel/store'
import { openSessionFile } from './regular-file.js'

/** The name in the first line of `session.chain`. */
export const CHAIN_FORMAT = 'keel-chain'
export const CHAIN_FORMAT_VERSION = 1

/** The integrity records of a session file, beside it. */
export function chainPath(dir: string): string {
  return join(dir, 'session.chain')
}

/**
 * An integrity record as `session.chain` keeps it: the shared record plus the byte range
 * of `session.jsonl` its lines fill (`start` the first line's offset, `end` the offset after
 * the last newline).
 */
export interface FileMark extends IntegrityMark {
  readonly start: number
  readonly end: number
}

/** A record and where its line sits in `session.chain`. */
export interface PlacedMark {
  readonly mark: FileMark
  /** Byte offset of the record's line in `session.chain`, and its length with the newline. */
  readonly at: number
  readonly bytes: number
}

/** The first line of `session.chain`: names the format and the chain root (the log's header). */
export function chainHeaderLine(root: string): string {
  return `${JSON.stringify({ format: CHAIN_FORMAT, version: CHAIN_FORMAT_VERSION, root })}\n`
}

/** A record's line in `session.chain`. */
export function markLine(mark: FileMark): string {
  const { seq, next, crc, chain, start, end } = mark
  return `${JSON.stringify({ seq, next, crc, chain, start, end })}\n`
}

/** What reading `session.chain` found: the records that hold, and how much of the file they fill. */
export interface ChainRead {
  readonly marks: PlacedMark[]
  /** Bytes of `session.chain` that hold the header and the valid records (a writer truncates to it). */
  readonly validLength: number
  /** Whether the file exists with this log's header (otherwise a writer starts it afresh). */
  readonly rooted: boolean
  /** The end of the header line (where the first record goes), when read from the start. */
  readonly headerEnd: number
}

const isFileMark = (value: unknown): value is FileMark => {
  const m = value as Partial<FileMark>
  return isMark(value) && Number.isSafeInteger(m.start) && Number.isSafeInteger(m.end) && m.end! > m.start!
}

/**
 * Reads the records of `session.chain` from byte `from` (its first record, or the header
 * when 0), keeping each that is well formed, links to the one before (starting from
 * `prev`: chain value, next seq and end offset) and lies within the log's `logLength`
 * bytes; stops at the first that does not. Never throws for damaged content: what does not
 * hold is simply not a record (its lines are then validated in full). A `session.chain`
 * that is not a regular file (a FIFO, a directory) is `SessionCorrupt` of session `id`.
 */
export function readChain(
  id: string,
  dir: string,
  prev: { chain: string; next: number; end: number },
  logLength: number,
  from = 0,
): ChainRead {
  let fd: number
  try {
    fd = openSessionFile(id, chainPath(dir)).fd
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { marks: [], validLength: 0, rooted: false, headerEnd: 0 }
    }
    throw error
  }
  const marks: PlacedMark[] = []
  let offset = from
  let { chain, next, end } = prev
  let rooted = from > 0
  let headerEnd = from
  /** Takes one record line (`bytes` with its newline); false where the chain stops. */
  const take = (line: string, bytes: number): boolean => {
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      return false // a torn or damaged record: the chain stops here
    }
    if (!rooted) {
      const head = parsed as { format?: unknown; version?: unknown; root?: unknown } | null
      if (head?.format !== CHAIN_FORMAT || head.version !== CHAIN_FORMAT_VERSION || head.root !== chain)
        return false
      rooted = true
      headerEnd = offset + bytes
    } else {
      if (
        !isFileMark(parsed) ||
        !linksTo(parsed, chain, next) ||
        parsed.start !== end ||
        parsed.end > logLength
      )
        return false
      marks.push({ mark: parsed, at: offset, bytes })
      chain = parsed.chain
      next = parsed.next
      end = parsed.end
    }
    offset += bytes
    return true
  }
  try {
    // in chunks, each line cut from the bytes: a file of any size (a sparse terabyte) is
    // read only as far as its records hold, a line longer than a record stops it
    const buf = Buffer.allocUnsafe(CHAIN_CHUNK)
    let carry = Buffer.alloc(0)
    for (let pos = from; ; ) {
      const n = readSync(fd, buf, 0, buf.length, pos)
      if (n === 0) break
      pos += n
      const bytes = carry.length > 0 ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n)
      let at = 0
      for (let newline = bytes.indexOf(10); newline !== -1; newline = bytes.indexOf(10, at)) {
        if (newline - at > MAX_RECORD_BYTES || !take(bytes.toString('utf8', at, newline), newline - at + 1))
          return { marks, validLength: rooted ? offset : 0, rooted, headerEnd }
        at = newline + 1
      }
      if (bytes.length - at > MAX_RECORD_BYTES) break
      carry = Buffer.from(bytes.subarray(at))
    }
  } finally {
    closeSync(fd)
  }
  return { marks, validLength: rooted ? offset : 0, rooted, headerEnd }
}

/** Bytes of `session.chain` read at a time. */
const CHAIN_CHUNK = 64 * 1024

/** A chain line longer than this is no record (records are ~200 bytes; the header with its root a little more). */
const MAX_RECORD_BYTES = 4096

/** Reads the one record line at byte `at` of `session.chain` (and its length with the newline), or undefined. */
export function readMarkAt(
  id: string,
  dir: string,
  at: number,
): { mark: FileMark; bytes: number } | undefined {
  let fd: number
  try {
    fd = openSessionFile(id, chainPath(dir)).fd
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const buf = Buffer.allocUnsafe(MAX_RECORD_BYTES + 1)
    const n = readSync(fd, buf, 0, buf.length, at)
    const newline = buf.indexOf(10)
    if (newline === -1 || newline >= n) return undefined
    const parsed: unknown = JSON.parse(buf.toString('utf8', 0, newline))
    return isFileMark(parsed) ? { mark: parsed, bytes: newline + 1 } : undefined
  } catch (error) {
    if (error instanceof SyntaxError) return undefined
    throw error
  } finally {
    closeSync(fd)
  }
}
