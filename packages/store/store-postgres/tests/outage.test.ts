// A PostgreSQL that restarts or freezes: every path fails typed, nothing acknowledged is
// lost, and the store (and its open handles) recover when the server does. Runs against a
// throwaway cluster this file starts on a free loopback port (tests/cluster.ts) — never the
// shared server of KEEL_PG_URL, which other tests use.
import { appendSampleTurn, SAMPLE_TURN_EVENTS } from '@keel/store-testkit'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PostgresStore, type PostgresStoreOptions } from '../src/index.js'
import { type Cluster, clusterUnavailable, startCluster } from './cluster.js'
import { uniqueSchema } from './helpers.js'

const unavailable = clusterUnavailable()
if (unavailable && process.env.CI) {
  it('can start a throwaway PostgreSQL cluster in CI', () => {
    throw new Error(`CI is set but ${unavailable}: the outage tests cannot be skipped`)
  })
}

/** What a rejected promise rejected with (the test fails if it resolved). */
async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise
  } catch (error) {
    return error as Error & Record<string, unknown>
  }
  throw new Error('expected a rejection')
}

const unavailableError = (cause: Record<string, unknown> = {}) =>
  expect.objectContaining({
    code: 'STORE_UNAVAILABLE',
    details: expect.objectContaining({ transient: true }),
    cause: expect.objectContaining(cause),
  })

describe.skipIf(unavailable !== undefined)('postgres outages (throwaway cluster)', () => {
  let cluster: Cluster
  const stores: PostgresStore[] = []
  /** A store on the throwaway cluster with short waits, closed after the file. */
  const store = (schema: string, options: Partial<PostgresStoreOptions> = {}) => {
    const s = new PostgresStore({
      url: cluster.url,
      schema,
      poolSize: 3,
      connectTimeoutMs: 400,
      queryTimeoutMs: 400,
      statementTimeoutMs: 5_000,
      ...options,
    })
    stores.push(s)
    return s
  }

  beforeAll(async () => {
    cluster = await startCluster()
  })
  afterAll(async () => {
    cluster.thaw()
    for (const s of stores) await s.close().catch(() => undefined)
    await cluster?.destroy()
  })

  it('server down: open, load, inspect, create, append and list fail STORE_UNAVAILABLE with the cause; all work once it is back', async () => {
    const s = store(uniqueSchema('down'))
    const handle = await s.create({ id: 'a' })
    appendSampleTurn(handle.session)
    await handle.close()
    await cluster.stop()
    try {
      const refused = unavailableError({ code: 'ECONNREFUSED' })
      expect(await rejection(s.open('a'))).toEqual(refused)
      expect(await rejection(s.load('a'))).toEqual(refused)
      expect(await rejection(s.inspect('a'))).toEqual(refused)
      expect(await rejection(s.create({ id: 'b' }))).toEqual(refused)
      expect(await rejection(s.append('a', []))).toEqual(refused)
      expect(await rejection(s.list())).toEqual(refused)
      // a store that never reached the server (its migrations did not run) fails the same way
      const fresh = store(uniqueSchema('fresh'))
      expect(await rejection(fresh.load('a'))).toEqual(refused)
      const message = (await rejection(s.load('a'))).message
      expect(message).toMatch(
        /^PostgreSQL at 127\.0\.0\.1:\d+\/postgres is unavailable while loading session a: /,
      )
      expect(message).not.toContain('keel@') // no credentials in messages
    } finally {
      await cluster.start()
    }
    expect((await s.load('a')).nextSeq).toBe(SAMPLE_TURN_EVENTS)
    const reopened = await s.open('a')
    expect(reopened.notices).toEqual([])
    await reopened.close()
    await (await s.create({ id: 'b' })).close()
    expect((await s.list()).map((x) => x.id).sort()).toEqual(['a', 'b'])
  })

  it('a database that does not exist is STORE_UNAVAILABLE, not transient: the message says to fix the URL', async () => {
    const s = store(uniqueSchema('nodb'), {})
    const wrong = new PostgresStore({
      url: cluster.url.replace(/\/postgres$/, '/no_such_db'),
      schema: uniqueSchema('nodb'),
    })
    stores.push(wrong)
    const error = await rejection(wrong.list())
    expect(error).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      details: { transient: false, sqlstate: '3D000' },
      message: expect.stringContaining('KEEL_PG_URL'),
    })
    expect(await s.list()).toEqual([])
  })

  it('a restart under an open handle: flush fails typed, nothing acknowledged is lost, and the same handle recovers', async () => {
    const s = store(uniqueSchema('restart'))
    const handle = await s.create({ id: 'r' })
    appendSampleTurn(handle.session, 'before')
    await handle.flush() // acknowledged
    await cluster.stop()
    try {
      appendSampleTurn(handle.session, 'during') // accepted in memory, not acknowledged
      const failed = await rejection(handle.flush())
      expect(failed).toMatchObject({ code: 'SESSION_WRITE_FAILED', details: { retry: true } })
      expect(failed.cause).toMatchObject({ code: 'STORE_UNAVAILABLE' })
    } finally {
      await cluster.start()
    }
    appendSampleTurn(handle.session, 'after')
    await handle.flush()
    await handle.close()
    const loaded = await s.load('r')
    expect(loaded.nextSeq).toBe(3 * SAMPLE_TURN_EVENTS)
    expect(JSON.stringify(loaded.events)).toBe(JSON.stringify(handle.session.events))
  })

  it('a handle closed while the server is down: this process opens the session again at once when it is back', async () => {
    const schema = uniqueSchema('relock')
    const s = store(schema)
    const handle = await s.create({ id: 'l' })
    appendSampleTurn(handle.session)
    await handle.flush()
    await cluster.stop()
    try {
      appendSampleTurn(handle.session, 'lost')
      // the unflushed turn is not durable (never acknowledged); the lease could not be released
      expect(await rejection(handle.close())).toMatchObject({ code: 'SESSION_WRITE_FAILED' })
    } finally {
      await cluster.start()
    }
    const reopened = await s.open('l') // its own lease: taken back, no SESSION_LOCKED, no notice
    expect(reopened.notices).toEqual([])
    expect(reopened.session.nextSeq).toBe(SAMPLE_TURN_EVENTS)
    // another store of this same process is another writer: the live lease holds against it
    const other = store(schema)
    expect(await rejection(other.open('l'))).toMatchObject({
      code: 'SESSION_LOCKED',
      details: { holder: { pid: process.pid } },
    })
    await reopened.close()
    // closed properly: the other store gets it with no stale-lock notice
    const next = await other.open('l')
    expect(next.notices).toEqual([])
    await next.close()
  })

  it('a release that failed is retried by the heartbeat, so other processes are not locked out until the lease expires', async () => {
    const schema = uniqueSchema('retry')
    const s = store(schema, { leaseTtlMs: 900 }) // a heartbeat every 300 ms
    const handle = await s.create({ id: 'h' })
    await handle.flush()
    await cluster.stop()
    try {
      await rejection(handle.close())
    } finally {
      await cluster.start()
    }
    const client = new pg.Client({ connectionString: cluster.url })
    await client.connect()
    try {
      let writer: unknown = 'still set'
      for (let i = 0; i < 100 && writer !== null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        const { rows } = await client.query(`SELECT writer FROM ${schema}.sessions WHERE id = 'h'`)
        writer = rows[0]?.writer
      }
      expect(writer).toBeNull()
    } finally {
      await client.end()
    }
  })

  it('a frozen server (SIGSTOP): flush, load and open end typed within the timeouts; after it thaws the handle recovers and every event is stored once', async () => {
    const s = store(uniqueSchema('frozen'))
    const handle = await s.create({ id: 'f' })
    appendSampleTurn(handle.session, 'acknowledged')
    await handle.flush()
    cluster.freeze()
    try {
      appendSampleTurn(handle.session, 'while frozen')
      const failed = await rejection(handle.flush())
      expect(failed).toMatchObject({ code: 'SESSION_WRITE_FAILED', details: { retry: true } })
      expect(failed.cause).toMatchObject({
        code: 'STORE_UNAVAILABLE',
        details: { reason: 'no answer in time', transient: true },
      })
      expect(await rejection(s.load('f'))).toMatchObject({ code: 'STORE_UNAVAILABLE' })
      const other = store(uniqueSchema('frozen2'))
      expect(await rejection(other.list())).toMatchObject({
        code: 'STORE_UNAVAILABLE',
        details: { transient: true },
      })
    } finally {
      cluster.thaw()
    }
    // the abandoned batch may have been committed by the thawed server, or not: either way
    // the retry stores it exactly once
    await handle.flush()
    appendSampleTurn(handle.session, 'after')
    await handle.close()
    const loaded = await s.load('f')
    expect(loaded.nextSeq).toBe(3 * SAMPLE_TURN_EVENTS)
    expect(JSON.stringify(loaded.events)).toBe(JSON.stringify(handle.session.events))
  })

  it('a live server that is merely slow (a row lock held elsewhere) lets the statement wait, then the server cancels it: STORE_UNAVAILABLE (statement timeout)', async () => {
    const schema = uniqueSchema('slow')
    const s = store(schema, { queryTimeoutMs: 200, statementTimeoutMs: 1_500 })
    const handle = await s.create({ id: 's' })
    await handle.flush()
    const blocker = new pg.Client({ connectionString: cluster.url })
    await blocker.connect()
    try {
      await blocker.query('BEGIN')
      await blocker.query(`SELECT 1 FROM ${schema}.sessions WHERE id = 's' FOR UPDATE`)
      appendSampleTurn(handle.session)
      const failed = await rejection(handle.flush())
      // probed alive after 200 ms, so it waited on until the server's statement_timeout
      expect(failed.cause).toMatchObject({
        code: 'STORE_UNAVAILABLE',
        details: { sqlstate: '57014', transient: true },
      })
      await blocker.query('ROLLBACK')
      await handle.flush()
    } finally {
      await blocker.end()
    }
    await handle.close()
    expect((await s.load('s')).nextSeq).toBe(SAMPLE_TURN_EVENTS)
  })
})
