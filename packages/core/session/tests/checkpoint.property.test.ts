import {
  type PrefixReader,
  type Projection,
  registerProjection,
  Session,
  type SessionCheckpoint,
  type SessionEvent,
} from '@keel/session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { userText } from './helpers.js'
import { type Action, action, applyActions, build, forkCuts, stored } from './random-log.js'

/** A registered, checkpointable projection: events per type. */
const counts = registerProjection<Record<string, number>>({
  name: 'test/counts',
  init: () => ({}),
  apply: (state, event) => ({ ...state, [event.type]: (state[event.type] ?? 0) + 1 }),
  checkpoint: { version: 1 },
})

/** An unregistered projection with a Map state: folded from the log on first use after a resume. */
const lastTextBySeq: Projection<ReadonlyMap<number, string>> = {
  name: 'test/user-texts',
  init: () => new Map(),
  apply: (state, event) =>
    event.type === 'user/message'
      ? new Map(state).set(
          event.seq,
          event.data.message.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
        )
      : state,
}

const clock = () => 42

/** A reader over stored events that counts what it was asked for. */
function reader(events: readonly unknown[]): PrefixReader & { reads: number } {
  const r = {
    reads: 0,
    read(from: number, to: number) {
      r.reads += to - from
      return JSON.parse(JSON.stringify(events.slice(from, to))) as unknown[]
    },
  }
  return r
}

/** What two sessions must agree on. */
function observe(s: Session) {
  return {
    events: JSON.parse(JSON.stringify(s.events)) as unknown,
    messages: s.deriveMessages(),
    surface: s.surfaceSeqs(),
    openTurn: s.openTurn,
    lastTurn: s.lastTurn,
    nextSeq: s.nextSeq,
    unanswered: s.unansweredCalls,
    opaque: s.events.map((e) => s.isOpaque(e.seq)),
    counts: s.project(counts),
    texts: [...s.project(lastTextBySeq)],
  }
}

/** The checkpoint of the first `cut` stored events, through JSON (as a store keeps it). */
function checkpointAt(events: readonly unknown[], cut: number, header: Session['header']): SessionCheckpoint {
  const prefix = Session.create('prop', header, structuredClone(events.slice(0, cut)), { parsedSeed: true })
  return JSON.parse(JSON.stringify(prefix.checkpoint())) as SessionCheckpoint
}

/** Random logs with an ignorable event of an unknown type spliced in (reloaded from storage). */
const withOpaque = (actions: Action[], at: number): unknown[] => {
  const s = build(actions)
  const events = stored(s)
  const k = at % (events.length + 1)
  const renumbered = [
    ...events.slice(0, k),
    { type: 'elsewhere/note', seq: k, time: 7, data: { kept: [1, 'two'] }, ignorable: true },
    ...events.slice(k).map((e) => ({ ...(e as object), seq: (e as { seq: number }).seq + 1 })),
  ]
  // a splice can shift the seqs replaces cite; keep only logs that still load
  try {
    Session.create('prop', s.header, structuredClone(renumbered), { parsedSeed: true })
    return renumbered
  } catch {
    return events
  }
}

describe('resume from a checkpoint', () => {
  it('checkpoint + tail and a full replay give the same session, before and after more appends and forks', () => {
    fc.assert(
      fc.property(
        fc.array(action, { minLength: 1, maxLength: 18 }),
        fc.array(action, { maxLength: 6 }),
        fc.nat(),
        fc.nat(),
        fc.nat(),
        fc.boolean(),
        (actions, more, cutPick, opaquePick, forkPick, openTail) => {
          const events = withOpaque(actions, opaquePick)
          if (openTail) {
            // a log that ends mid-turn (a crashed writer): the open turn survives the checkpoint
            const n = events.length
            const turn =
              Session.create('prop', {}, structuredClone(events), { parsedSeed: true }).lastTurn + 1
            events.push({ type: 'turn/start', seq: n, time: 1, data: { turn } })
            events.push({ type: 'step/start', seq: n + 1, time: 1, data: { turn, step: 1 } })
          }
          const header = Session.create('prop', {}, undefined, { clock: () => 42 }).header
          const cut = cutPick % (events.length + 1)
          const checkpoint = checkpointAt(events, cut, header)
          const prefix = reader(events)
          const resumed = Session.resume('prop', header, checkpoint, structuredClone(events.slice(cut)), {
            prefix,
            parsedSeed: true,
            clock,
          })
          const full = Session.create('prop', header, structuredClone(events), { parsedSeed: true, clock })
          // continuing needs nothing from the covered prefix
          resumed.deriveMessages()
          void resumed.openTurn
          resumed.project(counts)
          expect(prefix.reads).toBe(0)
          expect(observe(resumed)).toEqual(observe(full))
          if (resumed.openTurn === null) {
            applyActions(resumed, more)
            applyActions(full, more)
            expect(observe(resumed)).toEqual(observe(full))
            const cuts = forkCuts(full)
            const at = cuts[forkPick % cuts.length]!
            expect(observe(resumed.fork('child', at))).toEqual(observe(full.fork('child', at)))
          }
          // the fixture invariant's state came through: a repeated note is refused by both
          const note = { note: { text: 'a', tags: [] } }
          const outcome = (s: Session) => {
            try {
              s.append('fixture/note', note)
              return 'ok'
            } catch (error) {
              return (error as { code: string }).code
            }
          }
          expect(outcome(resumed)).toBe(outcome(full))
        },
      ),
      { numRuns: 150 },
    )
  })

  it('reads events before the checkpoint on demand, in blocks, and checks them', () => {
    const s = build(
      Array.from({ length: 60 }, (_, i): Action => ({ kind: 'turn', steps: 2, tools: 1, text: `t${i}` })),
    )
    const events = stored(s)
    const cut = events.length - 3
    const prefix = reader(events)
    const resumed = Session.resume('prop', s.header, checkpointAt(events, cut, s.header), events.slice(cut), {
      prefix,
      parsedSeed: true,
    })
    expect(resumed.residentFrom).toBe(cut)
    expect(resumed.events[5]).toEqual(s.events[5])
    expect(prefix.reads).toBe(256) // one block
    expect(resumed.events.find((e) => e.type === 'system/message')?.seq).toBe(0)
    expect(prefix.reads).toBe(256) // cached
    expect(resumed.events.slice(300, 302)).toEqual(s.events.slice(300, 302))
    expect(resumed.events.length).toBe(s.events.length)
    expect(Array.isArray(resumed.events)).toBe(true)
    expect(() => (resumed.events as SessionEvent[]).push(s.events[0]!)).toThrow(TypeError)
    // a damaged event read on demand is refused with the session's own error
    const damaged = stored(s)
    const call = s.events.findIndex((e) => e.seq > 300 && e.type === 'tool/call') // not held in memory
    ;(damaged[call] as { data: unknown }).data = { turn: 'one' }
    const again = Session.resume('prop', s.header, checkpointAt(events, cut, s.header), events.slice(cut), {
      prefix: reader(damaged),
      parsedSeed: true,
    })
    expect(() => again.events[call]).toThrow(expect.objectContaining({ code: 'EVENT_DATA_INVALID' }))
    resumed.append('user/message', userText('after'))
    expect(resumed.events.at(-1)?.type).toBe('user/message')
  })
})
