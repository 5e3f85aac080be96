import { isKeelError } from '@keel/base'
import { SESSION_FORMAT_VERSION, type Session } from '@keel/session'
import type { SessionStore, StoreOptions } from '@keel/store'
import { afterEach, describe, expect, it } from 'vitest'
import { checkpointCases } from './checkpoints.js'
import { hardeningCases } from './hardening.js'
import { appendEveryCoreEvent, appendSampleTurn, SAMPLE_TURN_EVENTS as N } from './sample.js'

/** What a backend gives the conformance suite for one test: a store over a fresh, empty location. */
export interface ConformanceFixture {
  /** A store over a fresh, empty location. */
  store: SessionStore
  /** Another store over the same location (stands for a second process or host), with `options`. */
  reopen(options?: StoreOptions): SessionStore | Promise<SessionStore>
  /**
   * Appends raw event envelopes to a stored session that no handle has open, bypassing
   * validation (used to plant an unknown required event or an unclosed turn).
   */
  appendRaw(id: string, events: readonly unknown[]): Promise<void>
  /** Overwrites the stored format version of a session (to test the refusal of a newer one). */
  setFormatVersion(id: string, version: number): Promise<void>
  /**
   * Overwrites fields of a stored session's header as stored, bypassing validation (to test
   * that a damaged header is refused). Optional: cases that need it are skipped without.
   */
  patchStoredHeader?(id: string, patch: Record<string, unknown>): Promise<void>
  /**
   * Removes (`missing`) or alters one byte of (`altered`) a stored blob of a spilled event.
   * Optional: cases that need it are skipped without.
   */
  damageBlob?(id: string, sha256: string, how: 'missing' | 'altered'): Promise<void>
  /** The stored checkpoint of a session, as stored (undefined when it has none). Optional, with the next. */
  checkpointText?(id: string): Promise<string | undefined>
  /** Replaces (undefined: removes) the stored checkpoint of a session, without checks. */
  setCheckpointText?(id: string, text: string | undefined): Promise<void>
  /**
   * Replaces the stored event lines of a session no handle has open (each the JSON of one
   * event, as stored), leaving its integrity records and checkpoint as they are. Optional.
   */
  editLines?(id: string, edit: (lines: string[]) => string[]): Promise<void>
  /** Removes the location; called after the test (stores are closed by the suite). */
  cleanup?(): Promise<void>
}

/** Resolves to the error `promise` rejected with (fails when it resolved). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

export function thrown(fn: () => unknown): unknown {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

export function expectCode(error: unknown, code: string): void {
  expect(isKeelError(error) ? error.code : error).toBe(code)
}

export const plain = (session: Session) => JSON.parse(JSON.stringify(session.events)) as unknown[]

/**
 * The storage conformance suite: every backend runs it (`makeStore` gives a fresh
 * location per test). Covers the round trip of every core event, ordering, flush
 * semantics, fork lineage, list, refusal cases and interrupted-turn closure.
 */
export function runStoreConformance(name: string, makeStore: () => Promise<ConformanceFixture>): void {
  describe(`${name}: store conformance`, () => {
    const stores: SessionStore[] = []
    const fixtures: ConformanceFixture[] = []
    const fixture = async () => {
      const f = await makeStore()
      fixtures.push(f)
      stores.push(f.store)
      return f
    }
    const reopen = async (f: ConformanceFixture, options?: StoreOptions) => {
      const s = await f.reopen(options)
      stores.push(s)
      return s
    }
    afterEach(async () => {
      for (const s of stores.splice(0)) await s.close().catch(() => {})
      for (const f of fixtures.splice(0)) await f.cleanup?.()
    })

    it('round-trips every core event, the header and the surface', async () => {
      const f = await fixture()
      const handle = await f.store.create({
        header: { cwd: '/work/a', agentPreset: 'coder', title: 'Round trip' },
      })
      appendEveryCoreEvent(handle.session)
      await handle.close()
      const loaded = await (await reopen(f)).load(handle.session.id)
      expect(loaded.header).toEqual(handle.session.header)
      expect(loaded.header.version).toBe(SESSION_FORMAT_VERSION)
      expect(plain(loaded)).toEqual(plain(handle.session))
      expect(loaded.deriveMessages()).toEqual(handle.session.deriveMessages())
      const types = new Set(loaded.events.map((e) => e.type))
      for (const type of [
        'system/message',
        'developer/message',
        'user/message',
        'turn/start',
        'step/start',
        'assistant/attempt',
        'assistant/message',
        'tool/call',
        'tool/result',
        'step/end',
        'turn/end',
      ]) {
        expect(types.has(type as never), type).toBe(true)
      }
    })

    it('keeps seq order across batches and flushes', async () => {
      const f = await fixture()
      const handle = await f.store.create({ id: 'ordering' })
      for (let i = 0; i < 30; i++) {
        appendSampleTurn(handle.session, `t${i}`)
        if (i % 3 === 0) await handle.flush()
        else if (i % 3 === 1) await new Promise((r) => setTimeout(r, 1))
      }
      await handle.flush()
      const loaded = await (await reopen(f)).load('ordering')
      expect(loaded.events.map((e) => e.seq)).toEqual(loaded.events.map((_, i) => i))
      expect(plain(loaded)).toEqual(plain(handle.session))
      await handle.close()
    })

    it('makes every event appended before flush() visible to another store once it resolves', async () => {
      const f = await fixture()
      const handle = await f.store.create({ id: 'flushing' })
      appendSampleTurn(handle.session)
      await handle.flush()
      const other = await reopen(f)
      expect((await other.load('flushing')).nextSeq).toBe(handle.session.nextSeq)
      appendSampleTurn(handle.session)
      const before = handle.session.nextSeq
      await handle.flush()
      expect((await other.load('flushing')).nextSeq).toBe(before)
      // flush with nothing pending resolves; close flushes what is pending
      await handle.flush()
      appendSampleTurn(handle.session)
      await handle.close()
      expect((await other.load('flushing')).nextSeq).toBe(handle.session.nextSeq)
    })

    it('forks with lineage: parentSession, seedLength and the end-seed marker', async () => {
      const f = await fixture()
      const parent = await f.store.create({ id: 'parent', header: { cwd: '/p', agentPreset: 'coder' } })
      appendSampleTurn(parent.session, 'one')
      appendSampleTurn(parent.session, 'two')
      await parent.close()
      const cut = N - 1 // the turn/end of turn 1
      const child = await f.store.fork('parent', { atSeq: cut, childId: 'child' })
      expect(child.session.header).toMatchObject({ parentSession: 'parent', seedLength: cut + 1, cwd: '/p' })
      appendSampleTurn(child.session, 'child work')
      await child.close()
      const loaded = await (await reopen(f)).load('child')
      expect(loaded.header.parentSession).toBe('parent')
      expect(loaded.events[cut + 1]).toMatchObject({
        type: 'session/end-seed',
        data: { parentSession: 'parent', parentSeq: cut },
      })
      expect(plain(loaded).slice(0, cut + 1)).toEqual(plain(parent.session).slice(0, cut + 1))
      expect(loaded.firstLiveSeq).toBe(cut + 2)
      expect(loaded.lastTurn).toBe(2)
      // a cut inside a turn is refused and stores nothing
      expectCode(await rejection(f.store.fork('parent', { atSeq: 3, childId: 'bad' })), 'FORK_CUT_INVALID')
      expectCode(await rejection(f.store.load('bad')), 'SESSION_NOT_FOUND')
      // create({ from }) persists an in-memory fork as well
      const fromHandle = await f.store.create({ from: loaded.fork('grandchild') })
      await fromHandle.close()
      expect((await f.store.load('grandchild')).header).toMatchObject({ parentSession: 'child' })
    })

    it('lists header-level data, newest first, filtered by cwd, limited', async () => {
      const f = await fixture()
      const made = [
        { id: 's1', header: { cwd: '/a', createdAt: 1000, title: 'first' } },
        { id: 's2', header: { cwd: '/b', createdAt: 2000 } },
        { id: 's3', header: { cwd: '/a', createdAt: 3000, agentPreset: 'coder' } },
      ]
      for (const init of made) {
        const h = await f.store.create(init)
        appendSampleTurn(h.session)
        await h.close()
      }
      const all = await (await reopen(f)).list()
      expect(all.map((s) => s.id)).toEqual(['s3', 's2', 's1'])
      expect(all[2]).toMatchObject({ id: 's1', createdAt: 1000, cwd: '/a', title: 'first' })
      expect(all[0]).toMatchObject({ agentPreset: 'coder' })
      for (const s of all) expect(s.eventCount).toBe(N)
      expect((await f.store.list({ cwd: '/a' })).map((s) => s.id)).toEqual(['s3', 's1'])
      expect((await f.store.list({ limit: 1 })).map((s) => s.id)).toEqual(['s3'])
      expect(await f.store.list({ cwd: '/nowhere' })).toEqual([])
    })

    it('lists by last activity: the time of the last event, createdAt while there is none', async () => {
      const f = await fixture()
      const rejectedTurn = (session: Session, time: number) => {
        const turn = session.lastTurn + 1
        session.append('turn/start', { turn }, { time })
        session.append('turn/end', { turn, reason: 'rejected' }, { time })
      }
      const made: Array<[string, number, number | undefined]> = [
        ['a1', 1000, 9000],
        ['a2', 2000, 5000],
        ['a3', 3000, undefined],
      ]
      for (const [id, createdAt, time] of made) {
        const h = await f.store.create({ id, header: { cwd: '/w', createdAt } })
        if (time !== undefined) rejectedTurn(h.session, time)
        await h.close()
      }
      const byActivity = await (await reopen(f)).list({ orderBy: 'activity' })
      expect(byActivity.map((s) => [s.id, s.lastActivityAt])).toEqual([
        ['a1', 9000],
        ['a2', 5000],
        ['a3', 3000],
      ])
      expect((await f.store.list()).map((s) => s.id)).toEqual(['a3', 'a2', 'a1'])
      const later = await f.store.open('a3')
      rejectedTurn(later.session, 20_000)
      await later.close()
      const again = await (await reopen(f)).list({ cwd: '/w', orderBy: 'activity', limit: 2 })
      expect(again.map((s) => [s.id, s.lastActivityAt, s.eventCount])).toEqual([
        ['a3', 20_000, 2],
        ['a1', 9000, 2],
      ])
    })

    it('refuses unknown ids, duplicate ids and a second writer', async () => {
      const f = await fixture()
      expectCode(await rejection(f.store.open('missing')), 'SESSION_NOT_FOUND')
      expectCode(await rejection(f.store.load('missing')), 'SESSION_NOT_FOUND')
      expectCode(await rejection(f.store.inspect('missing')), 'SESSION_NOT_FOUND')
      const handle = await f.store.create({ id: 'taken' })
      expectCode(await rejection(f.store.create({ id: 'taken' })), 'SESSION_EXISTS')
      expectCode(await rejection(f.store.open('taken')), 'SESSION_LOCKED')
      const other = await reopen(f)
      const locked = await rejection(other.open('taken'))
      expectCode(locked, 'SESSION_LOCKED')
      // readers are never blocked by the writer
      expect((await other.load('taken')).nextSeq).toBe(0)
      await handle.close()
      const second = await other.open('taken')
      expect(second.session.nextSeq).toBe(0)
      await second.close()
    })

    it('refuses appends after close', async () => {
      const f = await fixture()
      const handle = await f.store.create({ id: 'big' })
      appendSampleTurn(handle.session)
      const before = handle.session.nextSeq
      appendSampleTurn(handle.session)
      await handle.close()
      expectCode(
        thrown(() => appendSampleTurn(handle.session)),
        'SESSION_HANDLE_CLOSED',
      )
      const loaded = await f.store.load('big')
      expect(loaded.nextSeq).toBe(before + N)
      await handle.close() // idempotent
    })

    hardeningCases(fixture, reopen)
    checkpointCases(fixture, reopen)

    it('refuses an unknown required event with its type and seq, keeps unknown ignorable ones', async () => {
      const f = await fixture()
      const handle = await f.store.create({ id: 'foreign' })
      appendSampleTurn(handle.session)
      await handle.close()
      const opaque = { type: 'elsewhere/note', seq: N, time: 5, data: { any: ['json', 1] }, ignorable: true }
      await f.appendRaw('foreign', [opaque])
      const loaded = await f.store.load('foreign')
      expect(loaded.nextSeq).toBe(N + 1)
      expect(loaded.isOpaque(N)).toBe(true)
      expect(JSON.parse(JSON.stringify(loaded.events[N]))).toEqual(opaque)
      await f.appendRaw('foreign', [{ type: 'elsewhere/rule', seq: N + 1, time: 6, data: {} }])
      const error = await rejection(f.store.load('foreign'))
      expectCode(error, 'UNKNOWN_REQUIRED_EVENT')
      expect((error as { details: Record<string, unknown> }).details).toMatchObject({
        type: 'elsewhere/rule',
        seq: N + 1,
      })
      expectCode(await rejection(f.store.open('foreign')), 'UNKNOWN_REQUIRED_EVENT')
      // the refused open released the lock
      expectCode(await rejection(f.store.open('foreign')), 'UNKNOWN_REQUIRED_EVENT')
      // a read-only view still shows it, as stored, and says so (the ignorable one needs no word)
      const inspection = await f.store.inspect('foreign')
      expect(inspection.events.slice(N).map((e) => [e.type, e.data])).toEqual([
        ['elsewhere/note', { any: ['json', 1] }],
        ['elsewhere/rule', {}],
      ])
      expect(inspection.notices.filter((n) => n.code === 'UNKNOWN_EVENTS_KEPT')).toEqual([
        {
          code: 'UNKNOWN_EVENTS_KEPT',
          message:
            'events no loaded plugin owns, shown as stored: elsewhere/rule (1); the session opens only with their plugin installed',
        },
      ])
    })

    it('refuses a newer format version with its direction', async () => {
      const f = await fixture()
      const handle = await f.store.create({ id: 'future' })
      appendSampleTurn(handle.session)
      await handle.close()
      await f.setFormatVersion('future', SESSION_FORMAT_VERSION + 1)
      for (const attempt of [
        () => f.store.load('future'),
        () => f.store.open('future'),
        () => f.store.inspect('future'),
      ]) {
        const error = await rejection(attempt())
        expectCode(error, 'SESSION_FORMAT_UNSUPPORTED')
        expect((error as { details: Record<string, unknown> }).details).toMatchObject({ direction: 'newer' })
      }
    })

    it('low-level append: validates, checks the next seq, refuses conflicts', async () => {
      const f = await fixture()
      const handle = await f.store.create({ id: 'import' })
      appendSampleTurn(handle.session)
      expectCode(await rejection(f.store.append('import', [])), 'SESSION_LOCKED')
      await handle.close()
      const next = await f.store.append('import', [
        { type: 'turn/start', seq: N, time: 1, data: { turn: 2 } },
        { type: 'turn/end', seq: N + 1, time: 2, data: { turn: 2, reason: 'completed' } },
      ])
      expect(next).toBe(N + 2)
      const conflict = await rejection(
        f.store.append('import', [{ type: 'turn/start', seq: N + 1, time: 1, data: { turn: 3 } }]),
      )
      expectCode(conflict, 'CONCURRENT_APPEND')
      const invalid = await rejection(
        f.store.append('import', [{ type: 'turn/start', seq: N + 2, time: 1, data: { turn: 'three' } }]),
      )
      expectCode(invalid, 'EVENT_DATA_INVALID')
      expect((await f.store.load('import')).nextSeq).toBe(N + 2)
      expectCode(await rejection(f.store.append('nobody', [])), 'SESSION_NOT_FOUND')
    })

    it('closes an interrupted turn on open (written), reports it on inspect (not written)', async () => {
      const f = await fixture()
      const handle = await f.store.create({ id: 'crashed' })
      appendSampleTurn(handle.session)
      await handle.close()
      await f.appendRaw('crashed', [
        { type: 'turn/start', seq: N, time: 1, data: { turn: 2 } },
        { type: 'step/start', seq: N + 1, time: 2, data: { turn: 2, step: 1 } },
      ])
      const inspection = await f.store.inspect('crashed')
      expect(inspection.interruptedTurn).toBe(2)
      expect(inspection.events).toHaveLength(N + 2)
      expect(inspection.notices.map((n) => n.code)).toContain('INTERRUPTED_TURN')
      expect((await f.store.load('crashed')).openTurn).toEqual({ turn: 2, step: 1 })
      const opened = await (await reopen(f)).open('crashed')
      expect(opened.notices.map((n) => n.code)).toContain('INTERRUPTED_TURN_CLOSED')
      expect(opened.session.events.slice(N + 2).map((e) => [e.type, e.data])).toEqual([
        ['step/end', { turn: 2, step: 1 }],
        ['turn/end', { turn: 2, reason: 'interrupted' }],
      ])
      expect(opened.session.openTurn).toBeNull()
      // already durable before any flush by the caller
      const reloaded = await f.store.load('crashed')
      expect(reloaded.nextSeq).toBe(N + 4)
      expect(reloaded.openTurn).toBeNull()
      appendSampleTurn(opened.session)
      await opened.close()
      expect((await f.store.inspect('crashed')).interruptedTurn).toBeUndefined()
    })
  })
}
