import { appendSampleTurn } from '@keel/store-testkit'
import { describe, expect, it } from 'vitest'
import { PostgresStore } from '../src/index.js'
import { PG_URL, pgFixture, sql, uniqueSchema } from './helpers.js'

/** Text PostgreSQL cannot hold as jsonb / text: NUL, lone surrogates (high and low). */
const AWKWARD = 'nul\u0000 high\ud800 low\udc00 pair\ud83d\ude00 end'

describe.skipIf(!PG_URL)('postgres: accepted means stored', () => {
  it('stores text with NUL and lone surrogates faithfully and reloads it unchanged', async () => {
    const f = await pgFixture('nul')
    try {
      const handle = await f.store.create({ id: 'nul', header: { title: AWKWARD, cwd: `/tmp/${AWKWARD}` } })
      appendSampleTurn(handle.session, AWKWARD)
      await handle.flush()
      appendSampleTurn(handle.session, 'after')
      await handle.close()
      const other = await f.reopen()
      const loaded = await other.load('nul')
      expect(loaded.header.title).toBe(AWKWARD)
      expect(loaded.header.cwd).toBe(`/tmp/${AWKWARD}`)
      expect(JSON.stringify(loaded.events)).toBe(JSON.stringify(handle.session.events))
      expect(loaded.nextSeq).toBe(22)
      expect((await other.list({ cwd: `/tmp/${AWKWARD}` })).map((s) => s.id)).toEqual(['nul'])
      await other.close()
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  })
})

describe.skipIf(!PG_URL)('postgres: header and counts are checked on load', () => {
  it('a header that is not an object is SESSION_CORRUPT, not loaded as {0:1}', async () => {
    const f = await pgFixture('hdr')
    try {
      await (await f.store.create({ id: 'h' })).close()
      await sql(`UPDATE ${f.schema}.sessions SET header = '[1]'::jsonb, header_json = '[1]' WHERE id = 'h'`)
      await expect(f.store.load('h')).rejects.toMatchObject({ code: 'SESSION_CORRUPT' })
      await expect(f.store.open('h')).rejects.toMatchObject({ code: 'SESSION_CORRUPT' })
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  })

  it.each([
    ['createdAt is not a number', { createdAt: 'yesterday' }],
    ['title is not a string', { title: 7 }],
    ['seedLength is negative', { seedLength: -1 }],
    ['the id differs from the row', { id: 'other' }],
  ])('a header whose %s is SESSION_CORRUPT', async (_what, patch) => {
    const f = await pgFixture('hdrf')
    try {
      const handle = await f.store.create({ id: 'h' })
      const header = { ...handle.session.header, ...patch }
      await handle.close()
      await sql(`UPDATE ${f.schema}.sessions SET header = $1::jsonb, header_json = $1 WHERE id = 'h'`, [
        JSON.stringify(header),
      ])
      await expect(f.store.load('h')).rejects.toMatchObject({ code: 'SESSION_CORRUPT' })
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  })

  it('an event_count that differs from the stored rows is SESSION_CORRUPT', async () => {
    const f = await pgFixture('cnt')
    try {
      const handle = await f.store.create({ id: 'c' })
      appendSampleTurn(handle.session)
      await handle.close()
      await sql(`UPDATE ${f.schema}.sessions SET event_count = 9 WHERE id = 'c'`)
      await expect(f.store.load('c')).rejects.toMatchObject({
        code: 'SESSION_CORRUPT',
        message: expect.stringMatching(/event_count 9.*11 rows/),
      })
      await sql(`UPDATE ${f.schema}.sessions SET event_count = 12 WHERE id = 'c'`)
      await expect(f.store.load('c')).rejects.toMatchObject({ code: 'SESSION_CORRUPT' })
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  })
})

describe.skipIf(!PG_URL)('postgres: unreadable rows', () => {
  it('a row that is not JSON is SESSION_CORRUPT naming its seq', async () => {
    const f = await pgFixture('row')
    try {
      const handle = await f.store.create({ id: 'r' })
      appendSampleTurn(handle.session)
      await handle.close()
      await sql(`UPDATE ${f.schema}.events SET line = '1,2' WHERE seq = 3`)
      await expect(f.store.load('r')).rejects.toMatchObject({
        code: 'SESSION_CORRUPT',
        details: { seq: 3, file: `${f.schema}.events` },
      })
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  })
})

describe.skipIf(!PG_URL)('postgres: one writer, really', () => {
  it('the low-level append of a second store is refused up front while a handle is open', async () => {
    const f = await pgFixture('excl')
    try {
      const handle = await f.store.create({ id: 'x' })
      await handle.flush()
      const second = await f.reopen()
      const refused = await second
        .append('x', [{ type: 'turn/start', seq: 0, time: 1, data: { turn: 1 } }])
        .then(
          () => undefined,
          (error: unknown) => error,
        )
      expect(refused).toMatchObject({
        code: 'SESSION_LOCKED',
        details: { holder: { pid: process.pid, host: expect.any(String) } },
      })
      // the holder is unaffected
      appendSampleTurn(handle.session)
      await handle.close()
      expect((await second.load('x')).nextSeq).toBe(11)
      // once closed, the low-level append works
      await second.append('x', [{ type: 'turn/start', seq: 11, time: 1, data: { turn: 2 } }])
      expect((await second.load('x')).nextSeq).toBe(12)
      await second.close()
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  })

  it('1000 open sessions work with a pool of 20 connections', async () => {
    const schema = uniqueSchema('many')
    const store = new PostgresStore({ url: PG_URL!, schema, poolSize: 20 })
    try {
      const handles = []
      for (let i = 0; i < 1000; i += 50) {
        handles.push(
          ...(await Promise.all(
            Array.from({ length: 50 }, (_, j) => store.create({ id: `s${i + j}`, header: { title: 't' } })),
          )),
        )
      }
      const mine = await sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
        [`keel:${schema}`],
      )
      expect(mine[0]!.n).toBeGreaterThan(0)
      expect(mine[0]!.n).toBeLessThanOrEqual(20)
      for (const h of handles) appendSampleTurn(h.session)
      await Promise.all(handles.map((h) => h.flush()))
      await Promise.all(handles.map((h) => h.close()))
      const counts = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.events`)
      expect(counts[0]!.n).toBe(11_000)
    } finally {
      await store.close()
      await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    }
  }, 180_000)
})
