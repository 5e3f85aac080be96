import type { SessionHeader } from '@keel/session'
import { type ListOptions, parseHeader, type SessionSummary, summaryOf, unreadableNotice } from '@keel/store'
import type { Db } from './driver.js'
import type { Tables } from './read.js'
import { textStorable } from './text-storable.js'

/**
 * The summaries `list()` answers from the sessions table of `schema` (quoted), newest first by
 * `orderBy`. A row whose header cannot be read is told to `onNotice` and skipped.
 */
export async function listSessions(
  db: Db,
  schema: string,
  tables: Tables,
  options: ListOptions & { limit: number },
): Promise<SessionSummary[]> {
  // A cwd the text column cannot hold is stored as NULL there: match it on the header.
  const exact = options.cwd === undefined || textStorable(options.cwd)
  const order = options.orderBy === 'activity' ? 'last_event_at' : 'created_at'
  const out: SessionSummary[] = []
  // Pages of `limit` rows: a row whose header cannot be read is told and skipped, so it
  // does not count toward the limit (the next page fills its place).
  for (let offset = 0; out.length < options.limit; ) {
    const { rows } = await db.query<{
      id: string
      header: string
      event_count: number
      last_event_at: number
    }>(
      { what: 'listing sessions' },
      `SELECT id, header_json AS header, event_count, last_event_at FROM ${schema}.sessions
         WHERE ($1::boolean AND ($2::text IS NULL OR cwd = $2)) OR (NOT $1::boolean AND cwd IS NULL)
         ORDER BY ${order} DESC, id LIMIT $3 OFFSET $4`,
      [exact, exact ? (options.cwd ?? null) : null, exact ? options.limit : null, offset],
    )
    for (const row of rows) {
      let header: SessionHeader
      try {
        header = parseHeader(row.id, row.header, { file: tables.sessions }, undefined)
      } catch (error) {
        options.onNotice?.(unreadableNotice(row.id, error))
        continue
      }
      if (!exact && header.cwd !== options.cwd) continue
      out.push(summaryOf(header, row.event_count, row.last_event_at))
      if (out.length >= options.limit) break
    }
    if (!exact || rows.length < options.limit) break
    offset += rows.length
  }
  return out
}
