import { isUtf8 } from 'node:buffer'
import { randomBytes } from 'node:crypto'
import { closeSync, openSync, readSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'
import type { JsonValue } from '@keel/base'
import { NotRegularFile, openRegularFile } from '@keel/base'
import type { PrefixReader } from '@keel/session'
import {
  CheckpointDecoder,
  type CheckpointDocument,
  checkpointIgnored,
  type DecodedCheckpoint,
  resolveCheckpointBlobs,
  type StoreNotice,
} from '@keel/store'
import { type FileMark, readMarkAt } from './chain.js'
import { readBlob, removeFile } from './files.js'

/** The latest checkpoint of a session file, beside it. */
export function checkpointPath(dir: string): string {
  return join(dir, 'session.checkpoint')
}

/** One entry of the sparse seq → byte offset index of a session file: line `seq` starts at `offset`. */
export type IndexEntry = readonly [seq: number, offset: number]

/** Where a JSONL checkpoint finds its record and the log: `CheckpointDocument.locator`. */
export interface JsonlLocator {
  /** The byte range of `session.jsonl` its record covers. */
  readonly start: number
  readonly end: number
  /** Byte offset of its record's line in `session.chain`. */
  readonly chainAt: number
  /** Sparse seq → offset entries (one at least every MiB) of the lines before `end`. */
  readonly index: readonly IndexEntry[]
  /** The CRC-32 of the log's last `bytes` before `end` (at most {@link TIE_BYTES}): the tie read on resume. */
  readonly tail: { readonly bytes: number; readonly crc: number }
}

/** The bytes of the log before a checkpoint that its tie covers with a CRC of its own. */
export const TIE_BYTES = 64 * 1024

function isLocator(value: JsonValue): value is JsonlLocator & JsonValue {
  const l = value as Partial<JsonlLocator> | null
  return (
    l !== null &&
    typeof l === 'object' &&
    Number.isSafeInteger(l.start) &&
    Number.isSafeInteger(l.end) &&
    Number.isSafeInteger(l.chainAt) &&
    Number.isSafeInteger(l.tail?.bytes) &&
    Number.isSafeInteger(l.tail?.crc) &&
    Array.isArray(l.index) &&
    l.index.every((e) => Array.isArray(e) && Number.isSafeInteger(e[0]) && Number.isSafeInteger(e[1]))
  )
}

/** A checkpoint whose tie to the log held: the document, its record and where the chain goes on. */
export interface TiedCheckpoint {
  readonly doc: CheckpointDocument
  /** Its stored size in bytes. */
  readonly bytes: number
  readonly locator: JsonlLocator
  readonly mark: FileMark
  /** Byte offset in `session.chain` of the record after the checkpoint's. */
  readonly chainNext: number
}

/**
 * Reads the checkpoint beside `file` and checks its tie to the log: its record is the line
 * of `session.chain` it names, it ends within the log's valid `length`, and the log's last
 * bytes before it (at most 64 KiB) have the CRC-32 it recorded — so checking the tie reads
 * only the batches at its offset. Returns it, or nothing with a notice saying why not.
 */
export function readTiedCheckpoint(
  id: string,
  dir: string,
  file: string,
  length: number,
  notices: StoreNotice[],
): TiedCheckpoint | undefined {
  let read: { decoded: DecodedCheckpoint; bytes: number }
  try {
    read = readCheckpointFile(checkpointPath(dir), id)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    if (error instanceof NotRegularFile) {
      notices.push(checkpointIgnored(id, undefined, `it is ${error.what}, not a regular file`))
      return undefined
    }
    throw error
  }
  const { decoded, bytes } = read
  if (!decoded.ok) {
    notices.push(checkpointIgnored(id, undefined, decoded.reason))
    return undefined
  }
  const { doc } = decoded
  const stale = (why: string) => {
    notices.push(checkpointIgnored(id, doc.seq, `it is stale: ${why}`))
    return undefined
  }
  if (!isLocator(doc.locator)) return stale('it does not say where in the log it ends')
  const locator = doc.locator
  if (locator.end > length) return stale(`it covers ${locator.end} bytes of a log of ${length}`)
  const placed = readMarkAt(id, dir, locator.chainAt)
  const mark = placed?.mark
  if (
    !mark ||
    mark.chain !== doc.mark.chain ||
    mark.seq !== doc.mark.seq ||
    mark.next !== doc.seq ||
    mark.start !== locator.start ||
    mark.end !== locator.end
  ) {
    return stale(
      "its integrity record is not the log's (the log was rewritten or replaced after it was taken)",
    )
  }
  if (
    locator.tail.bytes > locator.end ||
    rangeCrc(file, locator.end - locator.tail.bytes, locator.end) !== locator.tail.crc
  ) {
    return stale('the log no longer holds the prefix it was taken from (its last range has another CRC)')
  }
  const contents = new Map<string, Buffer>()
  for (const sha256 of doc.blobs) {
    const content = /^[0-9a-f]{64}$/.test(sha256) ? readBlob(id, dir, sha256) : undefined
    if (content) contents.set(sha256, content)
  }
  const resolved = resolveCheckpointBlobs(doc, contents)
  if (!resolved.ok) {
    notices.push(checkpointIgnored(id, doc.seq, resolved.reason))
    return undefined
  }
  return { doc: resolved.doc, bytes, locator, mark, chainNext: locator.chainAt + placed.bytes }
}

/** The bytes of a checkpoint file read (and parsed as they come) at once. */
const CHECKPOINT_CHUNK = 64 * 1024

/**
 * Reads the checkpoint file at `path` in chunks through a {@link CheckpointDecoder}: only
 * one chunk of its bytes and one of its text are alive at any time beside what is parsed;
 * reading stops as soon as the decoder has refused the file (a foreign header, more bytes
 * than the header names). Returns the decoded document (or why not) and the bytes read;
 * throws as {@link openRegularFile} does (`NotRegularFile` for a FIFO, a directory, a device).
 */
function readCheckpointFile(path: string, id: string): { decoded: DecodedCheckpoint; bytes: number } {
  const { fd } = openRegularFile(path)
  try {
    const decoder = new CheckpointDecoder(id)
    const buf = Buffer.allocUnsafe(CHECKPOINT_CHUNK)
    let bytes = 0
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, bytes)
      if (n === 0) break
      decoder.push(buf.subarray(0, n))
      bytes += n
      if (decoder.refused) break
    }
    return { decoded: decoder.end(), bytes }
  } finally {
    closeSync(fd)
  }
}

/** CRC-32 of `file` bytes `[start, end)` (-1 when the file is shorter). */
export function rangeCrc(file: string, start: number, end: number): number {
  const fd = openSync(file, 'r')
  try {
    const buf = Buffer.allocUnsafe(Math.min(end - start, 1 << 20))
    let crc = 0
    for (let at = start; at < end; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, end - at), at)
      if (n === 0) return -1
      crc = crc32(buf.subarray(0, n), crc)
      at += n
    }
    return crc >>> 0
  } finally {
    closeSync(fd)
  }
}

/**
 * Writes a checkpoint beside the log atomically: a temp file renamed over the old one.
 * Not fsynced: after a power loss it may be missing or damaged, and is then ignored.
 */
export function writeCheckpoint(dir: string, text: string): void {
  const temp = join(dir, `.session.checkpoint.${randomBytes(6).toString('hex')}.tmp`)
  try {
    writeFileSync(temp, text, { flag: 'wx' })
    renameSync(temp, checkpointPath(dir))
  } finally {
    removeFile(temp)
  }
}

/**
 * Reads events before a checkpoint on demand: from the index entry at or before the first
 * seq asked for, line by line; a read that continues where the last one ended starts
 * there. `parse` turns one line (its seq, byte offset and whether it is valid UTF-8) into
 * the stored event (blob stub resolved), or throws the store's error.
 */
export class JsonlPrefix implements PrefixReader {
  readonly #file: string
  readonly #index: readonly IndexEntry[]
  readonly #parse: (text: string, seq: number, offset: number, utf8: boolean) => unknown
  #cursor: IndexEntry | undefined

  constructor(
    file: string,
    index: readonly IndexEntry[],
    parse: (text: string, seq: number, offset: number, utf8: boolean) => unknown,
  ) {
    this.#file = file
    this.#index = index
    this.#parse = parse
  }

  read(from: number, to: number): unknown[] {
    const entry = this.#entry(from)
    const cursor = this.#cursor
    let [seq, offset] = cursor && cursor[0] <= from && cursor[0] >= entry[0] ? cursor : entry
    const out: unknown[] = []
    const fd = openSync(this.#file, 'r')
    try {
      let buf = Buffer.allocUnsafe(1 << 20)
      while (seq < to) {
        const n = readSync(fd, buf, 0, buf.length, offset)
        if (n === 0) break
        const last = buf.lastIndexOf(10, n - 1)
        if (last === -1) {
          if (n < buf.length) break // no complete line left
          buf = Buffer.allocUnsafe(buf.length * 2) // a line longer than the buffer
          continue
        }
        let at = 0
        while (seq < to && at <= last) {
          const newline = buf.indexOf(10, at)
          if (seq >= from) {
            const valid = isUtf8(buf.subarray(at, newline))
            out.push(this.#parse(buf.toString('utf8', at, newline), seq, offset + at, valid))
          }
          at = newline + 1
          seq++
        }
        offset += at
      }
      this.#cursor = [seq, offset]
      return out
    } finally {
      closeSync(fd)
    }
  }

  /** The index entry with the greatest seq at or before `seq`. */
  #entry(seq: number): IndexEntry {
    let lo = 0
    let hi = this.#index.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (this.#index[mid]![0] <= seq) lo = mid
      else hi = mid - 1
    }
    return this.#index[lo]!
  }
}
