import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { isKeelError } from '@keel/base'
import { appendSampleTurn, runStoreConformance } from '@keel/store-testkit'
import { describe, expect, it } from 'vitest'
import { MIGRATIONS, PostgresStore } from '../src/index.js'
import { PG_URL, pgFixture, sql, uniqueSchema } from './helpers.js'

const SKIP_REASON =
  'KEEL_PG_URL is not set: PostgreSQL tests skipped (as root, `source scripts/ci/start-postgres.sh` starts a server and sets it)'

if (!PG_URL) {
  if (process.env.CI) {
    it('has a PostgreSQL server in CI', () => {
      throw new Error(
        'CI is set but KEEL_PG_URL is not: .ci/run must source scripts/ci/start-postgres.sh, so the PostgreSQL tests cannot be skipped',
      )
    })
  } else {
    console.warn(SKIP_REASON)
    describe.skip(SKIP_REASON, () => {
      it('postgres store', () => {})
    })
  }
} else {
  runStoreConformance('postgres', () => pgFixture('conf'))

  describe('postgres specifics', () => {
    it('creates its tables by a versioned migration on first use, once', async () => {
      const schema = uniqueSchema('mig')
      try {
        const stores = [0, 1, 2].map(() => new PostgresStore({ url: PG_URL, schema }))
        // concurrent first use: the migration runs exactly once
        await Promise.all(stores.map((s) => s.list()))
        const rows = await sql<{ version: number }>(
          `SELECT version FROM ${schema}.keel_migrations ORDER BY version`,
        )
        expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version))
        for (const s of stores) await s.close()
      } finally {
        await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      }
    })

    it('two clients appending the same seq: exactly one wins, the other gets CONCURRENT_APPEND', async () => {
      const f = await pgFixture('race')
      try {
        const handle = await f.store.create({ id: 'shared' })
        appendSampleTurn(handle.session)
        await handle.close()
        const a = await f.reopen()
        const b = await f.reopen()
        for (let round = 0; round < 5; round++) {
          const next = (await a.load('shared')).nextSeq
          const event = (turn: number) => ({ type: 'turn/start', seq: next, time: 1, data: { turn } })
          const last = (await a.load('shared')).lastTurn
          const results = await Promise.allSettled([
            a.append('shared', [event(last + 1)]),
            b.append('shared', [event(last + 1)]),
          ])
          const won = results.filter((r) => r.status === 'fulfilled')
          const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
          expect(won).toHaveLength(1)
          expect(lost).toHaveLength(1)
          expect(isKeelError(lost[0]!.reason, 'CONCURRENT_APPEND')).toBe(true)
          // the loser changed nothing; close the turn for the next round
          const after = await a.load('shared')
          expect(after.nextSeq).toBe(next + 1)
          await a.append('shared', [
            { type: 'turn/end', seq: next + 1, time: 2, data: { turn: last + 1, reason: 'completed' } },
          ])
        }
        await a.close()
        await b.close()
      } finally {
        await f.store.close()
        await f.cleanup?.()
      }
    })

    it('an open handle whose log moved underneath gets CONCURRENT_APPEND on flush, nothing half-written', async () => {
      const f = await pgFixture('moved')
      try {
        const handle = await f.store.create({ id: 'moved' })
        await handle.flush()
        await f.appendRaw('moved', [{ type: 'turn/start', seq: 0, time: 1, data: { turn: 1 } }])
        appendSampleTurn(handle.session)
        await expect(handle.flush()).rejects.toMatchObject({ code: 'CONCURRENT_APPEND' })
        await handle.close().catch(() => {})
        const other = await f.reopen()
        expect((await other.load('moved')).nextSeq).toBe(1)
        await other.close()
      } finally {
        await f.store.close()
        await f.cleanup?.()
      }
    })

    it('a writer killed with SIGKILL is released at once on its host (its process is gone); its open turn is closed on open', async () => {
      const f = await pgFixture('kill')
      const schema = f.schema
      const child = fileURLToPath(new URL('./fixtures/holder.ts', import.meta.url))
      try {
        const handle = await f.store.create({ id: 'held' })
        appendSampleTurn(handle.session)
        await handle.close()
        const proc = spawn(process.execPath, ['--import', 'tsx', child, PG_URL!, schema, 'held'], {
          stdio: ['ignore', 'pipe', 'inherit'],
        })
        let out = ''
        proc.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString()
        })
        await expect.poll(() => out, { timeout: 20_000, interval: 20 }).toContain('open')
        const locked = await f.store.open('held').then(
          () => undefined,
          (error: unknown) => error,
        )
        expect(locked).toMatchObject({ code: 'SESSION_LOCKED', details: { holder: { pid: proc.pid } } })
        proc.kill('SIGKILL')
        await new Promise((resolve) => proc.once('exit', resolve))
        let reopened: Awaited<ReturnType<typeof f.store.open>> | undefined
        await expect
          .poll(
            async () => {
              reopened ??= await f.store.open('held').catch(() => undefined)
              return reopened !== undefined
            },
            { timeout: 10_000, interval: 50 },
          )
          .toBe(true)
        expect(reopened!.notices.map((n) => n.code)).toContain('INTERRUPTED_TURN_CLOSED')
        expect(reopened!.notices.map((n) => n.code)).toContain('STALE_LOCK_TAKEN_OVER')
        expect(reopened!.session.openTurn).toBeNull()
        await reopened!.close()
      } finally {
        await f.store.close()
        await f.cleanup?.()
      }
    }, 60_000)

    it('refuses without a connection string', () => {
      const saved = process.env.KEEL_PG_URL
      delete process.env.KEEL_PG_URL
      try {
        expect(() => new PostgresStore()).toThrow(expect.objectContaining({ code: 'KEEL_PG_URL_MISSING' }))
      } finally {
        process.env.KEEL_PG_URL = saved
      }
    })
  })
}
