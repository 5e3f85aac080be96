import type { PrefixReader } from '@keel/session'
import { blobEvent, parseRow, stubOf, type Tables } from './read.js'
import type { SyncQueries } from './sync-reader.js'

/**
 * Reads the events of session `id` before its checkpoint on demand, synchronously (one
 * query per block, and one for the blobs of spilled events in it), through `sync`.
 */
export function prefixReader(sync: SyncQueries, s: string, tables: Tables, id: string): PrefixReader {
  return {
    read(from, to) {
      const rows = sync.query<{ seq: number; line: string }>(
        `SELECT seq, line FROM ${s}.events WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
        [id, from, to],
      )
      const events = rows.map((row) => parseRow(id, tables, row))
      const stubs = events.flatMap((event, index) => {
        const stub = stubOf(event)
        return stub ? [{ index, ...stub }] : []
      })
      if (stubs.length === 0) return events
      const blobs = sync.query<{ sha256: string; json: string }>(
        `SELECT sha256, json FROM ${s}.blobs WHERE session_id = $1 AND sha256 = ANY($2::text[])`,
        [id, [...new Set(stubs.map((stub) => stub.sha256))]],
      )
      const byDigest = new Map(blobs.map((b) => [b.sha256, b.json]))
      for (const stub of stubs) {
        events[stub.index] = blobEvent(id, tables, stub, byDigest.get(stub.sha256), events[stub.index])
      }
      return events
    },
  }
}
