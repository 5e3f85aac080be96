import { describe, expect, it } from 'vitest'
import { PG_URL, pgFixture, sql } from './helpers.js'

// An append is one of two statements: a batch of events (its row count: the events
// inserted) or, on close after events no turn end covered, a batch of only the integrity
// record (its row count: the record inserted). Both tell a refusal by a count of 0.
describe.skipIf(!PG_URL)('postgres: append statements', () => {
  it('a batch of only an integrity record (close after a flush within a turn) is stored, and the log loads', async () => {
    const f = await pgFixture('markonly')
    try {
      const handle = await f.store.create({ id: 'm' })
      handle.session.append('turn/start', { turn: 1 })
      await handle.flush() // within a turn: the lines, no record yet
      expect(await sql(`SELECT next FROM ${f.schema}.marks WHERE session_id = 'm'`)).toEqual([])
      await handle.close() // the record alone
      expect(await sql(`SELECT next FROM ${f.schema}.marks WHERE session_id = 'm'`)).toEqual([{ next: 1 }])
      const rows = await sql<{ event_count: number }>(
        `SELECT event_count FROM ${f.schema}.sessions WHERE id = 'm'`,
      )
      expect(rows).toEqual([{ event_count: 1 }])
      const loaded = await f.store.load('m')
      expect(loaded.events[0]?.type).toBe('turn/start')
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  })

  it('a batch of only an integrity record from a writer whose lease was taken over writes nothing: SESSION_LOCKED', async () => {
    const f = await pgFixture('markfence')
    try {
      const handle = await f.store.create({ id: 'f' })
      handle.session.append('turn/start', { turn: 1 })
      await handle.flush()
      await sql(`UPDATE ${f.schema}.sessions SET lease_token = lease_token + 1 WHERE id = 'f'`)
      const failure = await handle.close().then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(failure).toMatchObject({ code: 'SESSION_WRITE_FAILED', cause: { code: 'SESSION_LOCKED' } })
      expect(await sql(`SELECT next FROM ${f.schema}.marks WHERE session_id = 'f'`)).toEqual([])
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  })
})
