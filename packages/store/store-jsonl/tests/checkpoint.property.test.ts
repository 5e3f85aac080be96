import { rmSync } from 'node:fs'
import type { Session, SessionSeq, ToolCallId } from '@keel/session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { JsonlStore } from '../src/index.js'
import { tempHome } from './helpers.js'

/** One step of a writer: a turn, a compaction, a flush, or closing and reopening the session. */
type Step =
  | { kind: 'turn'; tools: number; text: string }
  | { kind: 'compact'; keep: number }
  | { kind: 'flush' }
  | { kind: 'reopen' }

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('turn' as const),
      tools: fc.nat({ max: 2 }),
      text: fc.string({ maxLength: 6 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const), keep: fc.nat({ max: 6 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'flush' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reopen' as const }) },
)

function turn(s: Session, tools: number, text: string): void {
  const t = s.lastTurn + 1
  const ids = Array.from({ length: tools }, (_, i) => `c${t}_${i}` as ToolCallId)
  const stream = { provider: 'p', model: 'm', startedAt: 1, endedAt: 2, chunks: 1 }
  s.append('turn/start', { turn: t })
  s.append('user/message', { message: { role: 'user', content: [{ type: 'text', text }] } })
  s.append('step/start', { turn: t, step: 1 })
  s.append('assistant/message', {
    turn: t,
    step: 1,
    message: {
      role: 'assistant',
      content: ids.map((id) => ({ type: 'tool-call' as const, id, name: 'read', arguments: '{}' })),
    },
    stream,
  })
  for (const id of ids) s.append('tool/call', { turn: t, step: 1, callId: id, name: 'read', arguments: '{}' })
  for (const id of ids) {
    s.append('tool/result', {
      turn: t,
      step: 1,
      message: {
        role: 'tool',
        toolCallId: id,
        toolName: 'read',
        content: [{ type: 'text', text: `out ${text}` }],
      },
    })
  }
  s.append('step/end', { turn: t, step: 1 })
  s.append('turn/end', { turn: t, reason: 'completed' })
}

/** A compaction: everything on the surface but the last `keep` nodes replaced by a summary. */
function compact(s: Session, keep: number): void {
  const surface = s.surfaceSeqs()
  const shadowed = surface.slice(0, Math.max(0, surface.length - keep))
  if (shadowed.length === 0) return
  s.append(
    'user/message',
    { message: { role: 'user', content: [{ type: 'text', text: 'summary' }] }, source: 'compaction' },
    {
      surfaceOp: { op: 'replace', startSeq: shadowed[0]!, endSeq: shadowed.at(-1)! as SessionSeq },
      sourceEventSeqs: shadowed,
    },
  )
}

const observed = (s: Session) => ({
  events: JSON.parse(JSON.stringify(s.events)) as unknown,
  messages: s.deriveMessages(),
  surface: s.surfaceSeqs(),
  openTurn: s.openTurn,
  lastTurn: s.lastTurn,
  checkpoint: s.checkpoint(),
})

describe('jsonl: checkpoint + tail against the full replay', () => {
  it('give the same session for random writers (turns, compactions, flushes, reopens, forks)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 24 }), fc.nat(), async (steps, forkPick) => {
        const home = tempHome()
        try {
          const writer = new JsonlStore({ home, checkpoints: { every: 5, minEvents: 0 } })
          let handle = await writer.create({ id: 's' })
          for (const st of steps) {
            if (st.kind === 'turn') turn(handle.session, st.tools, st.text)
            else if (st.kind === 'compact') compact(handle.session, st.keep)
            else if (st.kind === 'flush') await handle.flush()
            else {
              await handle.close()
              handle = await writer.open('s')
            }
          }
          await handle.close()
          const resumed = await new JsonlStore({ home }).load('s')
          const replayed = await new JsonlStore({ home, checkpoints: false }).load('s')
          expect(resumed.residentFrom).toBe(replayed.nextSeq) // the close wrote a checkpoint of it all
          expect(observed(resumed)).toEqual(observed(replayed))
          // a fork at any turn boundary, from the resumed parent, reads the prefix on demand
          const cuts = replayed.events.filter((e) => e.type === 'turn/end').map((e) => e.seq as number)
          if (cuts.length > 0) {
            const at = cuts[forkPick % cuts.length]!
            const forked = await new JsonlStore({ home }).fork('s', { atSeq: at, childId: 'child' })
            await forked.close()
            const child = await new JsonlStore({ home }).load('child')
            const expected = replayed.fork('child', at)
            expect(JSON.parse(JSON.stringify(child.events.slice(0, at + 1)))).toEqual(
              JSON.parse(JSON.stringify(replayed.events.slice(0, at + 1))),
            )
            expect(child.deriveMessages()).toEqual(expected.deriveMessages())
            expect([child.lastTurn, child.openTurn, child.nextSeq]).toEqual([
              expected.lastTurn,
              expected.openTurn,
              expected.nextSeq,
            ])
          }
        } finally {
          rmSync(home, { recursive: true, force: true })
        }
      }),
      { numRuns: 25 },
    )
  }, 120_000)
})
