import { randomBytes } from 'node:crypto'
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
  const make = () => new PostgresStore({ url: PG_URL!, schema, poolSize: 2 })
  return {
    schema,
    store: make(),
    reopen: make,
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
    cleanup: async () => {
      await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    },
  }
}
