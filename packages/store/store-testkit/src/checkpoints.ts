import type { Session } from '@keel/session'
import {
  CHECKPOINT_FORMAT_VERSION,
  type CheckpointDocument,
  decodeCheckpoint,
  encodeCheckpoint,
  type SessionStore,
  type StoreOptions,
} from '@keel/store'
import { expect, it } from 'vitest'
import { type ConformanceFixture, expectCode, plain, rejection } from './conformance.js'
import { appendBigWriteTurn, BIG_WRITE_TURN_EVENTS } from './hardening.js'
import { appendSampleTurn, SAMPLE_TURN_EVENTS as N } from './sample.js'

/** Checkpoints at every turn end and on close, so small logs have them. */
export const EAGER_CHECKPOINTS: StoreOptions = { checkpoints: { every: 1, minEvents: 0 } }

/** What a load must give whatever it started from. */
function observed(s: Session) {
  return {
    events: plain(s),
    messages: s.deriveMessages(),
    surface: s.surfaceSeqs(),
    openTurn: s.openTurn,
    lastTurn: s.lastTurn,
    checkpoint: s.checkpoint(),
  }
}

const codes = (notices: readonly { code: string }[]) => notices.map((n) => n.code)

/**
 * Conformance cases for checkpoints and integrity records: a load resumes from the latest
 * checkpoint and reads only the tail; a tampered, truncated, foreign, stale or
 * mismatched checkpoint is never used (the log wins, a notice says why); a line changed
 * after it was written is caught by its record and validated in full; `verify` replays all.
 */
export function checkpointCases(
  fixture: () => Promise<ConformanceFixture>,
  reopen: (f: ConformanceFixture, options?: StoreOptions) => Promise<SessionStore>,
): void {
  /** A session of `turns` sample turns written through an eager store, closed. */
  async function written(f: ConformanceFixture, id: string, turns = 3): Promise<SessionStore> {
    const store = await reopen(f, EAGER_CHECKPOINTS)
    const handle = await store.create({ id })
    for (let i = 0; i < turns; i++) {
      appendSampleTurn(handle.session, `turn ${i}`)
      await handle.flush()
    }
    await handle.close()
    return store
  }

  /** The session as a full replay gives it (checkpoints off). */
  async function replayed(f: ConformanceFixture, id: string): Promise<Session> {
    return (await reopen(f, { checkpoints: false })).load(id)
  }

  it('resumes from the checkpoint written on close and reads only the tail; same session as a full replay', async () => {
    const f = await fixture()
    const store = await written(f, 'cp')
    const resumed = await store.load('cp')
    expect(resumed.residentFrom).toBe(3 * N)
    const full = await replayed(f, 'cp')
    expect(full.residentFrom).toBe(0)
    expect(observed(resumed)).toEqual(observed(full))
    // appending after a resume, then resuming again
    const handle = await store.open('cp')
    expect(handle.session.residentFrom).toBe(3 * N)
    appendSampleTurn(handle.session, 'after')
    await handle.close()
    const again = await (await reopen(f)).load('cp')
    expect(again.residentFrom).toBe(4 * N)
    expect(observed(again)).toEqual(observed(await replayed(f, 'cp')))
    // events before the checkpoint are read on demand
    expect(again.events[1]).toEqual(full.events[1])
    const inspection = await store.inspect('cp')
    expect(plain({ events: inspection.events } as Session)).toEqual(plain(await replayed(f, 'cp')))
    // a fork at an early seq from a resumed parent
    const child = await store.fork('cp', { atSeq: N - 1, childId: 'cp-child' })
    expect(plain(child.session).slice(0, N)).toEqual(plain(full).slice(0, N))
    await child.close()
  })

  it('keeps a surface event over the line cap in the checkpoint as its blob stub (the blob index)', async (ctx) => {
    const f = await fixture()
    const store = await reopen(f, EAGER_CHECKPOINTS)
    const handle = await store.create({ id: 'big-cp' })
    appendSampleTurn(handle.session)
    appendBigWriteTurn(handle.session)
    await handle.close()
    const resumed = await store.load('big-cp')
    expect(resumed.residentFrom).toBe(N + BIG_WRITE_TURN_EVENTS)
    expect(observed(resumed)).toEqual(observed(await replayed(f, 'big-cp')))
    if (!f.checkpointText) return ctx.skip('this fixture cannot reach checkpoints')
    const text = (await f.checkpointText('big-cp'))!
    expect(text.length).toBeLessThan(100_000) // the 1.2 MB event is not copied in
    const decoded = decodeCheckpoint(text, 'big-cp')
    expect(decoded.ok && decoded.doc.blobs.length).toBeGreaterThan(0)
  })

  it('writes nothing between flushes: events wait for flush() or close()', async () => {
    const f = await fixture()
    const handle = await f.store.create({ id: 'points' })
    appendSampleTurn(handle.session)
    await handle.flush()
    appendSampleTurn(handle.session)
    await new Promise((r) => setTimeout(r, 30))
    expect((await (await reopen(f)).load('points')).nextSeq).toBe(N)
    await handle.flush()
    expect((await (await reopen(f)).load('points')).nextSeq).toBe(2 * N)
    await handle.close()
  })

  const damages: [string, (text: string, doc: CheckpointDocument) => string, RegExp][] = [
    [
      'tampered (a byte changed)',
      (t) => t.replace('"lastTurn":3', '"lastTurn":9'),
      /does not match its digest/,
    ],
    ['truncated', (t) => t.slice(0, Math.floor(t.length * 0.6)), /truncated/],
    ['foreign (another format)', () => '{"format":"not-keel","rows":[]}\n{}', /foreign format/],
    [
      'of another checkpoint version',
      (t) =>
        t.replace(
          `"format":"keel-checkpoint","version":${CHECKPOINT_FORMAT_VERSION}`,
          '"format":"keel-checkpoint","version":7',
        ),
      /checkpoint format 7/,
    ],
    [
      'of another session',
      (_t, doc) => encodeCheckpoint({ ...doc, session: 'someone-else' }),
      /belongs to session "someone-else"/,
    ],
    [
      'folded by another build (digest-valid, other state version)',
      (_t, doc) => encodeCheckpoint({ ...doc, state: { ...doc.state, version: 99 } }),
      /state has version 99/,
    ],
    [
      'not tied to the log (its record differs)',
      (_t, doc) => encodeCheckpoint({ ...doc, mark: { ...doc.mark, chain: '0'.repeat(64) } }),
      /stale/,
    ],
  ]

  for (const [name, damage, reason] of damages) {
    it(`never uses a checkpoint that is ${name}: the log wins, a notice says why`, async (ctx) => {
      const f = await fixture()
      if (!f.checkpointText || !f.setCheckpointText) return ctx.skip('this fixture cannot reach checkpoints')
      await written(f, 'bad')
      const text = await f.checkpointText('bad')
      expect(text).toBeDefined()
      const decoded = decodeCheckpoint(text!, 'bad')
      if (!decoded.ok) throw new Error(decoded.reason)
      await f.setCheckpointText('bad', damage(text!, decoded.doc))
      const store = await reopen(f, EAGER_CHECKPOINTS)
      const inspection = await store.inspect('bad')
      const notice = inspection.notices.find((n) => n.code === 'CHECKPOINT_IGNORED')
      expect(notice?.message).toMatch(reason)
      const loaded = await store.load('bad')
      expect(loaded.residentFrom).toBe(0)
      expect(observed(loaded)).toEqual(observed(await replayed(f, 'bad')))
      const handle = await store.open('bad')
      expect(codes(handle.notices)).toContain('CHECKPOINT_IGNORED')
      appendSampleTurn(handle.session, 'more')
      await handle.close()
      // the writer replaced the damaged checkpoint with a good one
      expect((await store.load('bad')).residentFrom).toBe(4 * N)
    })
  }

  it('never uses a stale checkpoint: the log was cut and written again behind it', async (ctx) => {
    const f = await fixture()
    if (!f.editLines) return ctx.skip('this fixture cannot edit stored lines')
    const store = await written(f, 'stale', 3)
    await f.editLines('stale', (lines) => lines.slice(0, N))
    const handle = await (await reopen(f, { checkpoints: false })).open('stale')
    expect(handle.session.nextSeq).toBe(N)
    appendSampleTurn(handle.session, 'other 1')
    appendSampleTurn(handle.session, 'other 2')
    await handle.close()
    const inspection = await store.inspect('stale')
    expect(inspection.notices.find((n) => n.code === 'CHECKPOINT_IGNORED')?.message).toMatch(/stale/)
    const loaded = await store.load('stale')
    expect(loaded.residentFrom).toBe(0)
    expect(observed(loaded)).toEqual(observed(await replayed(f, 'stale')))
  })

  it('a line changed after it was written fails its integrity record and is validated in full', async (ctx) => {
    const f = await fixture()
    if (!f.editLines) return ctx.skip('this fixture cannot edit stored lines')
    await written(f, 'edited', 2)
    // a valid change: loaded as the log now says, after a notice
    await f.editLines('edited', (lines) =>
      lines.map((l, i) => (i === 1 ? l.replace('turn 0 1', 'TURN 0 1') : l)),
    )
    const store = await reopen(f, { checkpoints: false })
    const inspection = await store.inspect('edited')
    expect(codes(inspection.notices)).toContain('INTEGRITY_BROKEN')
    const text = (inspection.events[1]!.data as { message: { content: { text: string }[] } }).message
      .content[0]!
    expect(text.text).toBe('TURN 0 1')
    // an invalid change: the error a full validation gives, at its line — never skipped
    await f.editLines('edited', (lines) =>
      lines.map((l, i) => (i === 2 ? l.replace('"step":1', '"step":"one"') : l)),
    )
    const error = await rejection(store.load('edited'))
    expectCode(error, 'SESSION_CORRUPT')
    expect((error as Error).message).toMatch(/step/)
  })

  it('verify replays everything and compares it with the checkpoint; a forged one is caught', async (ctx) => {
    const f = await fixture()
    const store = await written(f, 'verified')
    const report = await store.verify('verified')
    expect(report).toMatchObject({ events: 3 * N, differences: [], checkpoint: { seq: 3 * N, usable: true } })
    expect(report.coveredTo).toBe(3 * N)
    if (!f.checkpointText || !f.setCheckpointText) return ctx.skip('this fixture cannot reach checkpoints')
    const decoded = decodeCheckpoint((await f.checkpointText('verified'))!, 'verified')
    if (!decoded.ok) throw new Error(decoded.reason)
    const { doc } = decoded
    // digest-valid and tied to the log, but folded wrong: only a full replay can tell
    const forged = { ...doc.state, lifecycle: { ...doc.state.lifecycle, lastTurn: 42 } }
    await f.setCheckpointText('verified', encodeCheckpoint({ ...doc, state: forged }))
    const forgedReport = await store.verify('verified')
    expect(forgedReport.differences).toContain('lifecycle')
  })
}
