import { createHash } from 'node:crypto'
import type { SessionHeader } from '@keel/session'
import { checkFormatVersion, SessionCorrupt, SessionNotFound, type StoreLocation } from '@keel/store'
import type { Queryable } from './driver.js'
import { parseHeader } from './header.js'

/** Events per chunk of the load query: one row of comma-joined lines each. */
const CHUNK = 4096

/** The session row (`k` null: `lines` is the header) or one chunk of events. */
interface ChunkRow {
  k: number | null
  format_version: number | null
  lines: string
  n: number
}

/** What one consistent read of a session gives, before validation. */
export interface ReadLog {
  header: SessionHeader
  migratedFrom: number | undefined
  events: unknown[]
}

/** Where things are, for messages. */
export interface Tables {
  /** The backend's `where`. */
  where: string
  sessions: string
  events: string
  blobs: string
}

/**
 * Reads session `id` in one statement (one snapshot): the header row and its events in
 * chunks of comma-joined lines, each parsed with one `JSON.parse`. Checks the header
 * against the header validator and `event_count` against the rows; resolves blob stubs.
 */
export async function readLog(db: Queryable, s: string, tables: Tables, id: string): Promise<ReadLog> {
  const { rows } = await db.query<ChunkRow>(
    `SELECT NULL::integer AS k, format_version, header_json AS lines, event_count AS n
       FROM ${s}.sessions WHERE id = $1
     UNION ALL
     SELECT seq / ${CHUNK}, NULL, string_agg(line, ',' ORDER BY seq), count(*)::integer
       FROM ${s}.events WHERE session_id = $1 GROUP BY 1
     ORDER BY 1 NULLS FIRST`,
    [id],
  )
  const first = rows[0]
  if (!first || first.k !== null) throw new SessionNotFound(id, tables.where)
  const headerAt: StoreLocation = { file: tables.sessions }
  const migratedFrom = checkFormatVersion(id, first.format_version, tables.sessions)
  const header = parseHeader(id, first.lines, headerAt, migratedFrom)
  const events: unknown[] = []
  const stubs: { index: number; seq: number; sha256: string; bytes: unknown }[] = []
  for (const row of rows) {
    if (row.k === null) continue
    let parsed: unknown[]
    try {
      parsed = JSON.parse(`[${row.lines}]`) as unknown[]
    } catch {
      // Name the row: parse the chunk's lines one by one.
      throw await corruptLine(db, s, tables, id, row.k)
    }
    if (parsed.length !== row.n) throw await corruptLine(db, s, tables, id, row.k)
    for (const event of parsed) {
      const blob = stubOf(event)
      if (blob) stubs.push({ index: events.length, ...blob })
      events.push(event)
    }
  }
  if (events.length !== first.n) {
    throw new SessionCorrupt(
      id,
      { file: tables.sessions },
      `event_count ${first.n} in ${tables.sessions} but ${events.length} rows in ${tables.events}`,
    )
  }
  if (stubs.length > 0) await resolveBlobs(db, s, tables, id, events, stubs)
  return { header, migratedFrom, events }
}

function stubOf(event: unknown): { seq: number; sha256: string; bytes: unknown } | undefined {
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
  stubs: { index: number; seq: number; sha256: string; bytes: unknown }[],
): Promise<void> {
  const { rows } = await db.query<{ sha256: string; json: string }>(
    `SELECT sha256, json FROM ${s}.blobs WHERE session_id = $1 AND sha256 = ANY($2::text[])`,
    [id, [...new Set(stubs.map((stub) => stub.sha256))]],
  )
  const blobs = new Map(rows.map((r) => [r.sha256, r.json]))
  for (const stub of stubs) {
    const at = { file: tables.blobs, seq: stub.seq }
    const json = blobs.get(stub.sha256)
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
      throw new SessionCorrupt(id, at, `${name} is not valid JSON (${(error as Error).message})`)
    }
    const stored = event as { seq?: unknown; type?: unknown } | null
    const stubEvent = events[stub.index] as { type?: unknown }
    if (stored?.seq !== stub.seq || stored.type !== stubEvent.type) {
      throw new SessionCorrupt(
        id,
        at,
        `${name} holds event ${String(stored?.type)} seq ${String(stored?.seq)}`,
      )
    }
    events[stub.index] = event
  }
}

/** The `SessionCorrupt` naming the first unparseable row of chunk `k`. */
async function corruptLine(db: Queryable, s: string, tables: Tables, id: string, k: number) {
  const { rows } = await db.query<{ seq: number; line: string }>(
    `SELECT seq, line FROM ${s}.events WHERE session_id = $1 AND seq / ${CHUNK} = $2 ORDER BY seq`,
    [id, k],
  )
  for (const row of rows) {
    try {
      JSON.parse(row.line)
    } catch (error) {
      return new SessionCorrupt(
        id,
        { file: tables.events, seq: row.seq },
        `the row of seq ${row.seq} is not valid JSON (${(error as Error).message})`,
      )
    }
  }
  return new SessionCorrupt(id, { file: tables.events }, `events ${k * CHUNK}… do not parse as rows`)
}
