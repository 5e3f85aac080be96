import { randomBytes } from 'node:crypto'
import type { StoreOptions } from '@keel/store'
import type { ConformanceFixture } from '@keel/store-testkit'
import pg from 'pg'
import { PostgresStore } from '../src/index.js'

/** The server under test; undefined when not configured (tests then skip, or fail under CI). */
export const PG_URL = process.env.KEEL_PG_URL

/** A schema name unique to this test file run, so parallel runs never collide. */
export function uniqueSchema(tag: string): string {
  return `keel_t_${tag}_${process.pid}_${randomBytes(4).toString('hex')}`
}

export async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(
  text: string,
  values: unknown[] = [],
) {
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  try {
    return (await client.query<T>(text, values)).rows
  } finally {
    await client.end()
  }
}

export async function pgFixture(tag: string): Promise<ConformanceFixture & { schema: string }> {
  const schema = uniqueSchema(tag)
  const make = (options: StoreOptions = {}) =>
    new PostgresStore({ ...options, url: PG_URL!, schema, poolSize: 2 })
  return {
    schema,
    store: make(),
    reopen: make,
    checkpointText: async (id) => {
      const rows = await sql<{ body: string }>(
        `SELECT body FROM ${schema}.checkpoints WHERE session_id = $1 ORDER BY seq DESC LIMIT 1`,
        [id],
      )
      return rows[0]?.body
    },
    setCheckpointText: async (id, text) => {
      const rows = await sql<{ seq: number }>(
        `DELETE FROM ${schema}.checkpoints WHERE session_id = $1 RETURNING seq`,
        [id],
      )
      if (text !== undefined) {
        await sql(`INSERT INTO ${schema}.checkpoints (session_id, seq, body) VALUES ($1, $2, $3)`, [
          id,
          rows[0]?.seq ?? 0,
          text,
        ])
      }
    },
    editLines: async (id, edit) => {
      const rows = await sql<{ line: string }>(
        `SELECT line FROM ${schema}.events WHERE session_id = $1 ORDER BY seq`,
        [id],
      )
      const lines = edit(rows.map((r) => r.line))
      await sql(`DELETE FROM ${schema}.events WHERE session_id = $1`, [id])
      await sql(
        `INSERT INTO ${schema}.events (session_id, seq, line) SELECT $1, n - 1, line FROM unnest($2::text[]) WITH ORDINALITY AS x(line, n)`,
        [id, lines],
      )
      await sql(`UPDATE ${schema}.sessions SET event_count = $2 WHERE id = $1`, [id, lines.length])
    },
    appendRaw: async (id, events) => {
      for (const raw of events) {
        const { seq } = raw as { seq: number }
        await sql(`INSERT INTO ${schema}.events (session_id, seq, line) VALUES ($1, $2, $3)`, [
          id,
          seq,
          JSON.stringify(raw),
        ])
        await sql(`UPDATE ${schema}.sessions SET event_count = event_count + 1 WHERE id = $1`, [id])
      }
    },
    setFormatVersion: async (id, version) => {
      await sql(`UPDATE ${schema}.sessions SET format_version = $2 WHERE id = $1`, [id, version])
    },
    patchStoredHeader: async (id, patch) => {
      const [row] = await sql<{ header_json: string }>(
        `SELECT header_json FROM ${schema}.sessions WHERE id = $1`,
        [id],
      )
      const header = { ...JSON.parse(row!.header_json), ...patch }
      await sql(`UPDATE ${schema}.sessions SET header_json = $2 WHERE id = $1`, [id, JSON.stringify(header)])
    },
    damageBlob: async (id, sha256, how) => {
      if (how === 'missing') {
        await sql(`DELETE FROM ${schema}.blobs WHERE session_id = $1 AND sha256 = $2`, [id, sha256])
        return
      }
      // flip one character in the middle of the stored JSON text: same length, wrong digest
      await sql(
        `UPDATE ${schema}.blobs SET json = overlay(json placing (CASE WHEN substr(json, length(json) / 2, 1) = 'a' THEN 'b' ELSE 'a' END) from length(json) / 2 for 1) WHERE session_id = $1 AND sha256 = $2`,
        [id, sha256],
      )
    },
    cleanup: async () => {
      await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    },
  }
}
