import { appendSampleTurn } from '@keel/store-testkit'
import { describe, expect, it } from 'vitest'
import { PostgresStore } from '../src/index.js'
import { PG_URL, pgFixture, sql } from './helpers.js'

const elsewhere = { pid: 4242, host: 'other-host.example', since: 1 }

describe.skipIf(!PG_URL)('postgres: writer leases', () => {
  it('a live lease of another host is SESSION_LOCKED naming host and pid; an expired one is taken over with a notice', async () => {
    const f = await pgFixture('lease')
    try {
      const handle = await f.store.create({ id: 'l' })
      appendSampleTurn(handle.session)
      await handle.close()
      await sql(
        `UPDATE ${f.schema}.sessions SET writer = $1, lease_token = lease_token + 1, lease_expires = now() + interval '1 hour' WHERE id = 'l'`,
        [elsewhere],
      )
      const locked = await f.store.open('l').then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(locked).toMatchObject({
        code: 'SESSION_LOCKED',
        details: { holder: { pid: 4242, host: 'other-host.example' } },
        message: expect.stringContaining('process 4242 on other-host.example'),
      })
      await expect(f.store.append('l', [])).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
      await sql(`UPDATE ${f.schema}.sessions SET lease_expires = now() - interval '1 second' WHERE id = 'l'`)
      const taken = await f.store.open('l')
      expect(taken.notices).toContainEqual(
        expect.objectContaining({
          code: 'STALE_LOCK_TAKEN_OVER',
          message: expect.stringContaining('process 4242 on other-host.example'),
        }),
      )
      appendSampleTurn(taken.session)
      await taken.close()
      expect((await f.store.load('l')).nextSeq).toBe(22)
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  })

  it('a holder whose lease was taken over is fenced out: its next batch writes nothing', async () => {
    const f = await pgFixture('fence')
    const a = new PostgresStore({ url: PG_URL!, schema: f.schema, leaseTtlMs: 60_000 })
    try {
      await (await f.store.create({ id: 'x' })).close()
      const old = await a.open('x')
      // the lease lapses (as if the holder's host stalled), and another writer takes over
      await sql(`UPDATE ${f.schema}.sessions SET writer = $1, lease_expires = now() - interval '1 second'`, [
        elsewhere,
      ])
      const next = await f.store.open('x')
      expect(next.notices.map((n) => n.code)).toContain('STALE_LOCK_TAKEN_OVER')
      appendSampleTurn(old.session)
      const failure = await old.flush().then(
        () => undefined,
        (error: unknown) => error,
      )
      expect(failure).toMatchObject({
        code: 'SESSION_WRITE_FAILED',
        cause: { code: 'SESSION_LOCKED', details: { holder: { pid: process.pid } } },
      })
      await old.close().catch(() => {})
      appendSampleTurn(next.session)
      await next.close()
      const loaded = await f.store.load('x')
      expect(loaded.nextSeq).toBe(11)
      expect(await sql(`SELECT writer FROM ${f.schema}.sessions WHERE id = 'x'`)).toEqual([{ writer: null }])
    } finally {
      await a.close()
      await f.store.close()
      await f.cleanup?.()
    }
  })

  it('an open handle keeps its short lease alive by heartbeat', async () => {
    const f = await pgFixture('beat')
    const holder = new PostgresStore({ url: PG_URL!, schema: f.schema, leaseTtlMs: 1_500 })
    try {
      const handle = await holder.create({ id: 'h' })
      await handle.flush()
      // several lease lifetimes pass; the heartbeat renews it each third
      await new Promise((resolve) => setTimeout(resolve, 5_000))
      await expect(f.store.open('h')).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
      appendSampleTurn(handle.session)
      await handle.close()
      const reopened = await f.store.open('h')
      expect(reopened.notices.map((n) => n.code)).not.toContain('STALE_LOCK_TAKEN_OVER')
      await reopened.close()
    } finally {
      await holder.close()
      await f.store.close()
      await f.cleanup?.()
    }
  }, 30_000)
})
