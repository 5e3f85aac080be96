import { MemoryStore } from '@keel/store'
import { appendSampleTurn } from '@keel/store-testkit'
import { describe, expect, it } from 'vitest'
import { MIGRATIONS, PostgresStore } from '../src/index.js'
import { PG_URL, sql, uniqueSchema } from './helpers.js'

describe.skipIf(!PG_URL)('postgres: schema migration 2 on tables of migration 1', () => {
  it('reads jsonb rows written before it, appends exact lines after, and takes over a v1 writer mark', async () => {
    const schema = uniqueSchema('v1')
    const s = `"${schema}"`
    try {
      // a schema as the previous release left it: migration 1 only, rows in jsonb
      await sql(`CREATE SCHEMA ${s}`)
      await sql(
        `CREATE TABLE ${s}.keel_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      )
      await sql(MIGRATIONS[0]!.sql(s))
      await sql(`INSERT INTO ${s}.keel_migrations (version, description) VALUES (1, 'v1')`)
      const memory = new MemoryStore()
      const source = await memory.create({ id: 'old', header: { cwd: '/w', title: 'before' } })
      appendSampleTurn(source.session)
      await source.close()
      const { header, events } = source.session
      await sql(
        `INSERT INTO ${s}.sessions (id, format_version, header, created_at, cwd, event_count, writer) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          'old',
          header.version,
          JSON.stringify(header),
          header.createdAt,
          '/w',
          events.length,
          { pid: 999_999_999, host: 'old-host', since: 1 },
        ],
      )
      for (const e of events) {
        const { type, seq, time, data, ...extras } = e as unknown as Record<string, unknown>
        await sql(
          `INSERT INTO ${s}.events (session_id, seq, type, time, payload, envelope) VALUES ($1, $2, $3, $4, $5, $6)`,
          [
            'old',
            seq,
            type,
            time,
            JSON.stringify(data),
            Object.keys(extras).length ? JSON.stringify(extras) : null,
          ],
        )
      }
      const store = new PostgresStore({ url: PG_URL!, schema })
      try {
        const listed = await store.list({ cwd: '/w', orderBy: 'activity' })
        expect(listed.map((x) => [x.id, x.eventCount])).toEqual([['old', 11]])
        // migration 3 took the last activity from the last stored event
        expect(listed[0]!.lastActivityAt).toBe(Math.max(header.createdAt, events.at(-1)!.time))
        const versions = await sql<{ version: number }>(`SELECT version FROM ${s}.keel_migrations ORDER BY 1`)
        expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4])
        // a process of the previous release cannot write rows the new one would not read
        await expect(
          sql(
            `INSERT INTO ${s}.events (session_id, seq, type, time, payload) VALUES ('old', 11, 'turn/start', 1, '{}')`,
          ),
        ).rejects.toMatchObject({ code: '23502' })
        const loaded = await store.load('old')
        expect(loaded.header).toEqual(header)
        expect(JSON.parse(JSON.stringify(loaded.events))).toEqual(JSON.parse(JSON.stringify(events)))
        // a writer mark of the old release (no lease) is stale: taken over with a notice
        const handle = await store.open('old')
        expect(handle.notices.map((n) => n.code)).toContain('STALE_LOCK_TAKEN_OVER')
        appendSampleTurn(handle.session, 'nul\u0000')
        await handle.close()
        const again = await store.load('old')
        expect(again.nextSeq).toBe(22)
        expect(JSON.stringify(again.events)).toBe(JSON.stringify(handle.session.events))
        // deleting a session row still removes its rows (a statement trigger, not a per-row key)
        await sql(`DELETE FROM ${s}.sessions WHERE id = 'old'`)
        expect(await sql(`SELECT 1 FROM ${s}.events UNION ALL SELECT 1 FROM ${s}.blobs`)).toEqual([])
      } finally {
        await store.close()
      }
    } finally {
      await sql(`DROP SCHEMA IF EXISTS ${s} CASCADE`)
    }
  })
})
