import type { Message } from '@keel/llm'
import { Session, type SessionEvent, type SessionSeq } from '@keel/session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { userText } from './helpers.js'
import { action, build, forkCuts } from './random-log.js'

/** Reference derivation from scratch: a plain array with splices, no incremental state. */
function deriveFromScratch(events: readonly SessionEvent[]): Message[] {
  const nodes: Array<{ seq: number; message: Message }> = []
  for (const e of events) {
    if (!('message' in (e.data as object))) continue
    if (
      !['system/message', 'developer/message', 'user/message', 'assistant/message', 'tool/result'].includes(
        e.type,
      )
    )
      continue
    const node = { seq: e.seq as number, message: (e.data as { message: Message }).message }
    const op = (e as { surfaceOp?: unknown }).surfaceOp as
      | { op: 'replace'; startSeq: number; endSeq: number }
      | undefined
    if (op && typeof op === 'object') {
      const i = nodes.findIndex((n) => n.seq === op.startSeq)
      const j = nodes.findIndex((n) => n.seq === op.endSeq)
      nodes.splice(i, j - i + 1, node)
    } else nodes.push(node)
  }
  return nodes.map((n) => n.message)
}

describe('properties', () => {
  it('the incrementally derived surface equals a from-scratch derivation, live and after reload', () => {
    fc.assert(
      fc.property(fc.array(action, { maxLength: 25 }), (actions) => {
        const s = build(actions)
        const expected = deriveFromScratch(s.events)
        expect(s.deriveMessages()).toEqual(expected)
        const reloaded = Session.create('prop', s.header, JSON.parse(JSON.stringify(s.events)))
        expect(reloaded.deriveMessages()).toEqual(expected)
        expect(reloaded.surfaceSeqs()).toEqual(s.surfaceSeqs())
      }),
      { numRuns: 200 },
    )
  })

  it('derived messages stay correct when read between appends (cache maintenance)', () => {
    fc.assert(
      fc.property(fc.array(action, { minLength: 1, maxLength: 15 }), (actions) => {
        for (let k = 1; k <= actions.length; k++) {
          const s = build(actions.slice(0, k))
          expect(s.deriveMessages()).toEqual(deriveFromScratch(s.events))
        }
      }),
      { numRuns: 60 },
    )
  })

  it('fork + replay reproduces the prefix exactly', () => {
    fc.assert(
      fc.property(fc.array(action, { minLength: 1, maxLength: 20 }), fc.nat(), (actions, pick) => {
        const parent = build(actions)
        // cut points outside any open turn: every seq where no turn is open after it
        const cuts = forkCuts(parent)
        const at = cuts[pick % cuts.length]!
        const child = parent.fork('child', at)
        const prefix = parent.events.slice(0, at + 1)
        expect(child.events.slice(0, at + 1)).toEqual(prefix)
        const replayed = Session.create('again', {}, JSON.parse(JSON.stringify(prefix)))
        expect(child.deriveMessages()).toEqual(replayed.deriveMessages())
        expect(child.surfaceSeqs()).toEqual(replayed.surfaceSeqs())
        expect(child.lastTurn).toBe(replayed.lastTurn)
        // and the child round-trips through storage with its lineage marker
        const reloadedChild = Session.create('child', child.header, JSON.parse(JSON.stringify(child.events)))
        expect(reloadedChild.events).toEqual(child.events)
        expect(reloadedChild.firstLiveSeq).toBe(at + 2)
      }),
      { numRuns: 150 },
    )
  })

  it('a refused append never changes the session', () => {
    fc.assert(
      fc.property(fc.array(action, { maxLength: 12 }), fc.nat(), fc.nat(), (actions, a, b) => {
        const s = build(actions)
        const before = JSON.stringify([s.events, s.surfaceSeqs(), s.openTurn, s.deriveMessages()])
        const bad: Array<() => unknown> = [
          () => s.append('step/start', { turn: s.lastTurn, step: 1 }),
          () => s.append('turn/end', { turn: s.lastTurn + 1, reason: 'completed' }),
          () =>
            s.append('user/message', userText('x'), {
              surfaceOp: { op: 'replace', startSeq: (a % 50) as SessionSeq, endSeq: (b % 50) as SessionSeq },
              sourceEventSeqs: [],
            }),
        ]
        for (const attempt of bad) {
          try {
            attempt()
          } catch {
            // refused: checked below
          }
        }
        // every attempt above is invalid: no open turn, wrong turn, a replace citing none of the nodes it shadows
        expect(JSON.stringify([s.events, s.surfaceSeqs(), s.openTurn, s.deriveMessages()])).toBe(before)
      }),
      { numRuns: 150 },
    )
  })
})
