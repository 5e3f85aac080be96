import { isUtf8 } from 'node:buffer'
import { closeSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { errorMessage } from '@keel/base'
import {
  headerRoot,
  type IntegrityStart,
  isBlobStub,
  migratedNotice,
  migrateStored,
  type ReadOptions,
  resolveBlobStub,
  SessionCorrupt,
  type StoredLog,
  type StoreLocation,
  type StoreNotice,
  stubDigest,
} from '@keel/store'
import { type ChainRead, readChain } from './chain.js'
import { type IndexEntry, JsonlPrefix, readTiedCheckpoint, type TiedCheckpoint } from './checkpoint.js'
import { blobPath, readBlob } from './files.js'
import { CHUNK, MAX_LINE_READ, readHeader } from './header.js'
import { readThroughNewline } from './line-read.js'
import { openSessionFile } from './regular-file.js'
import { ByteVerifier } from './verify-bytes.js'

/** What reading the body found out about the file (for repair on open and for the writer). */
export interface ReadState {
  /** Bytes of the file that hold kept lines; a dropped torn tail starts here. */
  validLength: number
  /** The last kept line has no newline yet (it must be added before appending). */
  needsNewline: boolean
  /** The body was read to the end. */
  complete: boolean
  /** The stored format version, when older than the current one (upgraded while reading). */
  migratedFrom?: number
  /** The byte offset of the first event line. */
  bodyOffset: number
  /** Sparse seq → offset entries of the lines (one at least every MiB). */
  index: IndexEntry[]
  /** Once complete: bytes of `session.chain` that hold (0: it must be started afresh). */
  chainLength: number
  /** Once complete: where the writer continues the integrity chain. */
  integrity?: IntegrityStart
}

/** A session file read as a {@link StoredLog}, with what its writer needs. */
export type JsonlLog = StoredLog & { readonly state: ReadState }

/**
 * A session file as a {@link StoredLog}: the header is read and checked now (a newer
 * format is refused before any event is parsed); events are parsed lazily, streaming. With
 * `options.checkpoint`, events start after the checkpoint beside the file when its tie to
 * the log holds (events before it read on demand); with `options.trust`, lines covered by
 * `session.chain` records are vouched for, each record's CRC checked as its bytes stream by.
 */
export function readLog(id: string, file: string, options: ReadOptions = {}): JsonlLog {
  const { header, bodyOffset, migratedFrom } = readHeader(id, file)
  const notices: StoreNotice[] = migratedFrom === undefined ? [] : [migratedNotice(id, migratedFrom)]
  const dir = dirname(file)
  const currentFormat = migratedFrom === undefined
  const size = statSync(file).size
  const root = { chain: headerRoot(header), from: 0, crc: 0 }
  const tied =
    options.checkpoint && currentFormat ? readTiedCheckpoint(id, dir, file, size, notices) : undefined
  const begin: IntegrityStart = tied
    ? { chain: tied.mark.chain, from: tied.mark.next, crc: 0, last: tied.mark }
    : root
  const startOffset = tied ? tied.mark.end : bodyOffset
  const chain: ChainRead = currentFormat
    ? readChain(
        id,
        dir,
        { chain: begin.chain, next: begin.from, end: startOffset },
        size,
        tied?.chainNext ?? 0,
      )
    : { marks: [], validLength: 0, rooted: false, headerEnd: 0 }
  const trust = options.trust === true && currentFormat && (chain.rooted || tied !== undefined)
  const verifier = new ByteVerifier(
    id,
    file,
    begin,
    chain.marks.map((p) => p.mark),
    trust,
  )
  const state: ReadState = {
    validLength: startOffset,
    needsNewline: false,
    complete: false,
    bodyOffset,
    index: tied ? indexFrom(tied, bodyOffset) : [],
    chainLength: 0,
  }
  if (migratedFrom !== undefined) state.migratedFrom = migratedFrom
  /** The line being read: enough to compute its byte offset lazily (only errors need it). */
  const current = { line: 1, text: '', start: 0, base: 0 }
  const at = (line: number, text: string, start: number, base: number) => {
    current.line = line
    current.text = text
    current.start = start
    current.base = base
  }
  const offsetOf = (c: typeof current) => c.base + Buffer.byteLength(c.text.slice(0, c.start))
  /** Puts a spilled event's blob in place of its stub line (digest checked). */
  const resolve = (raw: unknown, at: StoreLocation): unknown => {
    if (!isBlobStub(raw)) return raw
    const where = { ...at, seq: raw.seq }
    const sha256 = stubDigest(id, raw, where)
    return resolveBlobStub(id, raw, readBlob(id, dir, sha256), blobPath(dir, sha256), where)
  }
  const finish = () => {
    state.complete = true
    state.integrity = verifier.start(state.needsNewline ? '\n' : undefined)
    const last = verifier.last
    const placed = last && chain.marks.find((p) => p.mark === last)
    state.chainLength = placed
      ? placed.at + placed.bytes
      : last && tied && last === tied.mark
        ? tied.chainNext
        : chain.rooted
          ? chain.headerEnd
          : 0
  }
  function* events(): Generator<unknown> {
    const { fd } = openSessionFile(id, file)
    try {
      let pos = startOffset
      let carry = Buffer.alloc(0)
      let lineNo = (tied?.doc.seq ?? 0) + 1
      for (;;) {
        // Decode whole chunks up to their last newline (a newline byte never sits inside a
        // multi-byte character), then cut lines out of the string: no per-line decoding.
        const got = readThroughNewline(fd, carry, pos, CHUNK, MAX_LINE_READ)
        const base = pos - carry.length
        if (got.end === 'too-long') {
          throw new SessionCorrupt(
            id,
            { file, line: lineNo + 1, offset: base },
            `the line runs past ${MAX_LINE_READ} bytes without a newline, longer than any string this runtime holds (no writer writes such a line: the file was damaged or extended)`,
          )
        }
        const { buf, length, lastNewline } = got
        pos = base + length
        if (lastNewline === -1) {
          if (length > 0) {
            // The final line has no newline: a write cut short, never acknowledged.
            lineNo++
            const text = buf.toString('utf8', 0, length)
            at(lineNo, text, 0, base)
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
              verifier.feed(buf, 0, length, base)
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
        const last = state.index[state.index.length - 1]
        if (!last || base - last[1] >= CHUNK) state.index.push([lineNo - 1, base])
        verifier.feed(buf, 0, lastNewline + 1, base)
        const text = buf.toString('utf8', 0, lastNewline + 1)
        carry = Buffer.from(buf.subarray(lastNewline + 1, length))
        state.validLength = base + lastNewline + 1
        current.text = text
        current.base = base
        let start = 0
        while (start < text.length) {
          const newline = text.indexOf('\n', start)
          lineNo++
          current.line = lineNo
          current.start = start
          let parsed: unknown
          try {
            parsed = JSON.parse(text.slice(start, newline))
          } catch (error) {
            throw new SessionCorrupt(
              id,
              { file, line: lineNo, offset: offsetOf(current) },
              newline === start ? 'an empty line' : `the line is not valid JSON (${errorMessage(error)})`,
            )
          }
          // an event line has `data`, a blob stub has none: one property load rules out most lines
          if (
            parsed !== null &&
            typeof parsed === 'object' &&
            (parsed as { data?: unknown }).data === undefined &&
            isBlobStub(parsed)
          )
            parsed = resolve(parsed, { file, line: lineNo, offset: offsetOf(current) })
          start = newline + 1
          yield parsed
        }
      }
      finish()
    } finally {
      closeSync(fd)
    }
  }
  const log: JsonlLog = {
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
    integrity: () => {
      if (!state.integrity) throw new Error(`${file} was not read to the end`)
      return state.integrity
    },
    ...(trust ? { trusted: verifier.trusted } : {}),
  }
  if (!tied) return log
  const parseLine = (text: string, seq: number, offset: number, utf8: boolean): unknown => {
    const at = { file, line: seq + 2, offset, seq }
    if (!utf8) throw new SessionCorrupt(id, at, 'the line is not valid UTF-8')
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (error) {
      throw new SessionCorrupt(id, at, `the line is not valid JSON (${errorMessage(error)})`)
    }
    return resolve(parsed, at)
  }
  const prefix = new JsonlPrefix(file, indexFrom(tied, bodyOffset), parseLine)
  return { ...log, checkpoint: { doc: tied.doc, prefix, bytes: tied.bytes } }
}

/** The checkpoint's index of the lines before it, starting with the first line. */
function indexFrom(tied: TiedCheckpoint, bodyOffset: number): IndexEntry[] {
  const index = tied.locator.index.filter((e) => e[1] < tied.mark.end)
  return index[0]?.[0] === 0 ? [...index] : [[0, bodyOffset], ...index]
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
