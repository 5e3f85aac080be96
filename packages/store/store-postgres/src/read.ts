import { createHash } from 'node:crypto'
import { errorMessage } from '@keel/base'
import type { SessionHeader } from '@keel/session'
import {
  type CheckpointDocument,
  checkFormatVersion,
  checkpointIgnored,
  decodeCheckpoint,
  headerRoot,
  type IntegrityMark,
  type IntegrityStart,
  LineVerifier,
  linesCrc,
  parseHeader,
  type ReadOptions,
  resolveCheckpointBlobs,
  SessionCorrupt,
  SessionNotFound,
  type StoreLocation,
  type StoreNotice,
  TIE_LINES,
  validChain,
} from '@keel/store'
import type { Queryable } from './driver.js'

/** Events per chunk of the load query: one row of newline-joined lines each. */
const CHUNK = 4096

/** The session row (`k` null), the checkpoint (-2), the marks (-1) or one chunk of events. */
interface ChunkRow {
  k: number | null
  format_version: number | null
  lines: string
  n: number
  f: number | null
}

/** What one consistent read of a session gives, before validation. */
export interface ReadLog {
  header: SessionHeader
  migratedFrom: number | undefined
  /** The stored events from seq `from` on (blob stubs resolved). */
  events: Iterable<unknown>
  from: number
  /** Set when the events start after this checkpoint (its tie to the log held), and its stored size. */
  checkpoint?: CheckpointDocument
  checkpointBytes?: number
  /** The seqs integrity records cover, when asked to vouch (every record's CRC was checked). */
  trusted?: (seq: number) => boolean
  /** Where a writer continues the integrity chain. */
  integrity: IntegrityStart
  notices: StoreNotice[]
}

/** Where things are, for messages. */
export interface Tables {
  /** The backend's `where`. */
  where: string
  sessions: string
  events: string
  blobs: string
}

/** The one statement of a read: header, latest checkpoint, marks and the events from the checkpoint's tie on. */
function readSql(s: string): string {
  return `WITH cp AS (
      SELECT seq, body FROM ${s}.checkpoints WHERE session_id = $1 AND $2::boolean ORDER BY seq DESC LIMIT 1
    )
    SELECT NULL::integer AS k, format_version, header_json AS lines, event_count AS n, NULL::integer AS f
      FROM ${s}.sessions WHERE id = $1
    UNION ALL SELECT -2, NULL, body, seq, NULL FROM cp
    UNION ALL SELECT -1, NULL, string_agg(json_build_array(seq, next, crc, chain)::text, E'\\n' ORDER BY next),
      count(*)::integer, NULL FROM ${s}.marks WHERE session_id = $1 HAVING count(*) > 0
    UNION ALL SELECT seq / ${CHUNK}, NULL, string_agg(line, E'\\n' ORDER BY seq), count(*)::integer, min(seq)
      FROM ${s}.events WHERE session_id = $1 AND seq >= coalesce((SELECT greatest(seq - ${TIE_LINES}, 0) FROM cp), 0)
      GROUP BY 1
    ORDER BY 1 NULLS FIRST`
}

/**
 * Reads session `id` in one statement (one snapshot): the header row, with
 * `options.checkpoint` its latest checkpoint, its integrity records, and its events in
 * chunks of newline-joined lines, each parsed with one `JSON.parse`. Checks the header
 * against the header validator and `event_count` against the rows; resolves blob stubs.
 * A checkpoint is used when its record is in the chain and the record's lines have its
 * CRC; otherwise it is ignored with a notice and the log is read again from the start.
 */
export async function readLog(
  db: Queryable,
  s: string,
  tables: Tables,
  id: string,
  options: ReadOptions = {},
): Promise<ReadLog> {
  const { rows } = await db.query<ChunkRow>(readSql(s), [id, options.checkpoint === true])
  const first = rows[0]
  if (!first || first.k !== null) throw new SessionNotFound(id, tables.where)
  const migratedFrom = checkFormatVersion(id, first.format_version, tables.sessions)
  const header = parseHeader(id, first.lines, { file: tables.sessions }, migratedFrom)
  const root: IntegrityStart = { chain: headerRoot(header), from: 0, crc: 0 }
  const marks = migratedFrom === undefined ? validChain(parseMarks(rows), root.chain, 0) : []
  const notices: StoreNotice[] = []
  const cpRow = rows.find((r) => r.k === -2)
  const chunks = rows.filter((r) => r.k !== null && r.k >= 0)
  const start = chunks[0]?.f ?? 0
  let tied: { doc: CheckpointDocument; mark: IntegrityMark } | undefined
  if (cpRow && migratedFrom === undefined) {
    tied = await withBlobs(db, s, id, tie(id, cpRow.lines, marks, start, chunks, notices), notices)
    if (!tied && start > 0) {
      // the events read start at the checkpoint's range: read the whole log instead
      const full = await readLog(db, s, tables, id, { ...options, checkpoint: false })
      return { ...full, notices: [...notices, ...full.notices] }
    }
  }
  const from = tied ? tied.doc.seq : 0
  const begin = tied ? { chain: tied.mark.chain, from, crc: 0, last: tied.mark } : root
  const covered = marks.filter((m) => m.seq >= from)
  const trust = options.trust === true && migratedFrom === undefined
  // read eagerly: a record that does not hold is found before any event is handed out
  const verifier = new LineVerifier(id, tables.events, begin, covered, false)
  const events: unknown[] = []
  const stubs: Stub[] = []
  for (const row of chunks) {
    const skip = Math.max(0, from - row.f!)
    if (skip >= row.n) continue
    const seq = row.f! + skip
    let parsed: unknown[]
    if (newlines(row.lines) === row.n - 1) {
      const text = skip > 0 ? afterLines(row.lines, skip) : row.lines
      try {
        parsed = JSON.parse(`[${text.replaceAll('\n', ',')}]`) as unknown[]
      } catch {
        // Name the row: parse the chunk's lines one by one.
        throw await corruptLine(db, s, tables, id, row.k!)
      }
      if (parsed.length !== row.n - skip) throw await corruptLine(db, s, tables, id, row.k!)
      verifier.lines(seq, text, row.n - skip)
    } else {
      // a row holding a raw newline (written by another program): one line at a time
      parsed = []
      for (const line of await chunkLines(db, s, id, row.k!, seq)) {
        verifier.line(seq + parsed.length, line.line)
        parsed.push(parseRow(id, tables, line))
      }
    }
    for (const event of parsed) {
      const blob = stubOf(event)
      if (blob) stubs.push({ index: events.length, ...blob })
      events.push(event)
    }
  }
  if (from + events.length !== first.n) {
    throw new SessionCorrupt(
      id,
      { file: tables.sessions },
      `event_count ${first.n} in ${tables.sessions} but ${from + events.length} rows in ${tables.events}`,
    )
  }
  if (stubs.length > 0) await resolveBlobs(db, s, tables, id, events, stubs)
  const broken = verifier.broken
  const log: ReadLog = {
    header,
    migratedFrom,
    events: trust && broken ? refused(verifier.brokenError(broken)) : events,
    from,
    integrity: verifier.start(),
    notices,
  }
  if (tied) {
    log.checkpoint = tied.doc
    log.checkpointBytes = cpRow!.lines.length
  }
  if (trust) log.trusted = verifier.trusted
  return log
}

/** Events that refuse to be read: a load that vouched for them meets the broken record first. */
function refused(error: Error): Iterable<unknown> {
  return {
    [Symbol.iterator]: () => ({
      next: () => {
        throw error
      },
    }),
  }
}

/** The integrity records of the marks row, as stored. */
function parseMarks(rows: readonly ChunkRow[]): unknown[] {
  const row = rows.find((r) => r.k === -1)
  if (!row) return []
  return row.lines.split('\n').map((line) => {
    const [seq, next, crc, chain] = JSON.parse(line) as [number, number, string | number, string]
    return { seq, next, crc: Number(crc), chain }
  })
}

/**
 * The checkpoint when its tie holds: its record is in the chain, and the lines before it
 * that its tie covers (the first ones read, at most {@link TIE_LINES}) have the CRC it
 * recorded. Otherwise a notice.
 */
function tie(
  id: string,
  body: string,
  marks: readonly IntegrityMark[],
  start: number,
  chunks: readonly ChunkRow[],
  notices: StoreNotice[],
): { doc: CheckpointDocument; mark: IntegrityMark } | undefined {
  const decoded = decodeCheckpoint(body, id)
  if (!decoded.ok) {
    notices.push(checkpointIgnored(id, undefined, decoded.reason))
    return undefined
  }
  const { doc } = decoded
  const mark = marks.find((m) => m.next === doc.seq)
  const stale = (why: string) => {
    notices.push(checkpointIgnored(id, doc.seq, `it is stale: ${why}`))
    return undefined
  }
  if (!mark || mark.chain !== doc.mark.chain) {
    return stale("its integrity record is not the log's (the log was rewritten after it was taken)")
  }
  const tail = doc.locator as { tailFrom?: unknown; tailCrc?: unknown } | null
  if (tail?.tailFrom !== start || tailCrc(chunks, doc.seq - start) !== tail.tailCrc) {
    return stale('the log no longer holds the prefix it was taken from (its last lines have another CRC)')
  }
  return { doc, mark }
}

/** The tied checkpoint with its spilled events' blobs put back, or nothing (with a notice) when one is missing or differs. */
async function withBlobs(
  db: Queryable,
  s: string,
  id: string,
  tied: { doc: CheckpointDocument; mark: IntegrityMark } | undefined,
  notices: StoreNotice[],
): Promise<{ doc: CheckpointDocument; mark: IntegrityMark } | undefined> {
  if (!tied || tied.doc.blobs.length === 0) return tied
  const { rows } = await db.query<{ sha256: string; json: string }>(
    `SELECT sha256, json FROM ${s}.blobs WHERE session_id = $1 AND sha256 = ANY($2::text[])`,
    [id, [...tied.doc.blobs]],
  )
  const resolved = resolveCheckpointBlobs(tied.doc, new Map(rows.map((r) => [r.sha256, r.json])))
  if (!resolved.ok) {
    notices.push(checkpointIgnored(id, tied.doc.seq, resolved.reason))
    return undefined
  }
  return { doc: resolved.doc, mark: tied.mark }
}

/** The CRC of the first `n` lines of `chunks`. */
function tailCrc(chunks: readonly ChunkRow[], n: number): number {
  const lines: string[] = []
  for (const row of chunks) {
    if (lines.length >= n) break
    for (const line of row.lines.split('\n')) {
      if (lines.length >= n) break
      lines.push(line)
    }
  }
  return lines.length === n ? linesCrc(lines) : -1
}

/** How many `\n` `text` holds. */
function newlines(text: string): number {
  let n = 0
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) n++
  return n
}

/** The rows of chunk `k` from seq `from` on, one by one. */
async function chunkLines(db: Queryable, s: string, id: string, k: number, from: number) {
  const { rows } = await db.query<{ seq: number; line: string }>(
    `SELECT seq, line FROM ${s}.events WHERE session_id = $1 AND seq / ${CHUNK} = $2 AND seq >= $3 ORDER BY seq`,
    [id, k, from],
  )
  return rows
}

/** One row's event; `SessionCorrupt` naming the row when it is not JSON. */
export function parseRow(id: string, tables: Tables, row: { seq: number; line: string }): unknown {
  try {
    return JSON.parse(row.line)
  } catch (error) {
    throw new SessionCorrupt(
      id,
      { file: tables.events, seq: row.seq },
      `the row of seq ${row.seq} is not valid JSON (${errorMessage(error)})`,
    )
  }
}

/** The text of `joined` (lines joined by `\n`) after its first `n` lines. */
function afterLines(joined: string, n: number): string {
  let at = 0
  for (let i = 0; i < n; i++) at = joined.indexOf('\n', at) + 1
  return joined.slice(at)
}

interface Stub {
  index: number
  seq: number
  sha256: string
  bytes: unknown
}

export function stubOf(event: unknown): Omit<Stub, 'index'> | undefined {
  if (event === null || typeof event !== 'object') return undefined
  const { blob, seq } = event as { blob?: unknown; seq?: unknown }
  if (blob === undefined) return undefined
  const sha256 = (blob as { sha256?: unknown } | null)?.sha256
  return {
    seq: typeof seq === 'number' ? seq : -1,
    sha256: typeof sha256 === 'string' ? sha256 : '',
    bytes: (blob as { bytes?: unknown } | null)?.bytes,
  }
}

/** Replaces each stub by its blob's event, verifying digest, size and seq. */
async function resolveBlobs(
  db: Queryable,
  s: string,
  tables: Tables,
  id: string,
  events: unknown[],
  stubs: Stub[],
): Promise<void> {
  const { rows } = await db.query<{ sha256: string; json: string }>(
    `SELECT sha256, json FROM ${s}.blobs WHERE session_id = $1 AND sha256 = ANY($2::text[])`,
    [id, [...new Set(stubs.map((stub) => stub.sha256))]],
  )
  const blobs = new Map(rows.map((r) => [r.sha256, r.json]))
  for (const stub of stubs)
    events[stub.index] = blobEvent(id, tables, stub, blobs.get(stub.sha256), events[stub.index])
}

/** The event a blob holds, checked against its stub (`SessionCorrupt` naming seq and blob otherwise). */
export function blobEvent(
  id: string,
  tables: Tables,
  stub: Omit<Stub, 'index'>,
  json: string | undefined,
  stubEvent: unknown,
): unknown {
  const at: StoreLocation = { file: tables.blobs, seq: stub.seq }
  const name = `blob ${stub.sha256 || '(no sha256)'} of seq ${stub.seq}`
  if (json === undefined) throw new SessionCorrupt(id, at, `${name} is missing from ${tables.blobs}`)
  const actual = createHash('sha256').update(json).digest('hex')
  if (actual !== stub.sha256) throw new SessionCorrupt(id, at, `${name} has digest ${actual}`)
  if (stub.bytes !== Buffer.byteLength(json)) {
    throw new SessionCorrupt(
      id,
      at,
      `${name} has ${Buffer.byteLength(json)} bytes, the stub says ${String(stub.bytes)}`,
    )
  }
  let event: unknown
  try {
    event = JSON.parse(json)
  } catch (error) {
    throw new SessionCorrupt(id, at, `${name} is not valid JSON (${errorMessage(error)})`)
  }
  const stored = event as { seq?: unknown; type?: unknown } | null
  if (stored?.seq !== stub.seq || stored.type !== (stubEvent as { type?: unknown }).type) {
    throw new SessionCorrupt(id, at, `${name} holds event ${String(stored?.type)} seq ${String(stored?.seq)}`)
  }
  return event
}

/** The `SessionCorrupt` naming the first unparseable row of chunk `k`. */
async function corruptLine(db: Queryable, s: string, tables: Tables, id: string, k: number) {
  const { rows } = await db.query<{ seq: number; line: string }>(
    `SELECT seq, line FROM ${s}.events WHERE session_id = $1 AND seq / ${CHUNK} = $2 ORDER BY seq`,
    [id, k],
  )
  for (const row of rows) {
    try {
      parseRow(id, tables, row)
    } catch (error) {
      return error
    }
  }
  return new SessionCorrupt(id, { file: tables.events }, `events ${k * CHUNK}… do not parse as rows`)
}
