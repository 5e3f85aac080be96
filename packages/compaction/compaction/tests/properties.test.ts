// Invariants of any sequence of compactions over any history: every tool call on the surface
// keeps its result right after its assistant message, the surface still starts with the
// system prompt, a reload of the log derives the same messages, and the todo list is the
// log's, untouched.
import { Session } from '@keel/session'
import { todoProjection } from '@keel/todo'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Compactor } from '../src/index.js'
import { type Call, filler, newSession, type Step, serve, writeTurn } from './helpers.js'

const callArb: fc.Arbitrary<Call> = fc.record({
  name: fc.constantFrom('read_file', 'edit_file', 'bash'),
  args: fc.record({ path: fc.constantFrom('a.ts', 'b.ts', 'c.ts') }),
  output: fc.nat({ max: 6_000 }).map((n) => filler(n, 'out')),
})
const stepArb: fc.Arbitrary<Step> = fc.record({
  text: fc.nat({ max: 2_000 }).map((n) => filler(n, 'say')),
  calls: fc.array(callArb, { maxLength: 3 }),
})
const turnArb = fc.record({
  steps: fc.array(stepArb, { minLength: 1, maxLength: 4 }),
  todo: fc.boolean(),
  compaction: fc.constantFrom('none', 'auto-mid-turn', 'auto', 'manual'),
})

/** Each tool message follows the assistant message (and sibling results) that asked for it. */
function wellFormed(session: Session): boolean {
  const messages = session.deriveMessages()
  if (messages[0]?.role !== 'system') return false
  let open = new Set<string>()
  for (const m of messages) {
    if (m.role === 'tool') {
      if (!open.delete(m.toolCallId)) return false
      continue
    }
    if (open.size > 0) return false
    open = new Set(
      m.role === 'assistant' ? m.content.flatMap((b) => (b.type === 'tool-call' ? [b.id] : [])) : [],
    )
  }
  return open.size === 0
}

describe('compaction invariants', () => {
  it('keep the surface well-formed, replayable and the todo list intact', async () => {
    const { llm } = await serve({ handler: (request) => ({ text: `Summary ${request.index}.` }) })
    let run = 0
    const seen = { prunes: 0, summaries: 0, failures: 0 }
    await fc.assert(
      fc.asyncProperty(fc.array(turnArb, { minLength: 2, maxLength: 8 }), async (turns) => {
        const session = newSession(`prop-${run++}`)
        const compactor = new Compactor({
          session,
          llm,
          config: { contextWindow: 5_000, threshold: 0.7, target: 0.4, keepRecent: 0.1 },
        })
        for (const [index, turn] of turns.entries()) {
          if (turn.todo) {
            session.append('todo/write', {
              todos: [{ id: `t${index}`, content: `Item ${index}`, status: 'in_progress' }],
            })
          }
          const todos = session.project(todoProjection)
          const mid = turn.compaction === 'auto-mid-turn'
          writeTurn(session, `Turn ${index}.`, turn.steps, { open: mid })
          if (mid) await compactor.compactIfNeeded()
          if (turn.compaction === 'auto') await compactor.compact({ trigger: 'auto' })
          if (turn.compaction === 'manual') await compactor.compact({ trigger: 'manual' })
          if (mid) session.append('turn/end', { turn: session.openTurn!.turn, reason: 'completed' })
          expect(wellFormed(session)).toBe(true)
          expect(session.project(todoProjection)).toBe(todos)
        }
        const reloaded = Session.create(session.id, {}, JSON.parse(JSON.stringify(session.events)))
        expect(reloaded.deriveMessages()).toEqual(session.deriveMessages())
        const ends = session.events.filter((e) => e.type === 'compaction/end').length
        expect(ends).toBe(session.events.filter((e) => e.type === 'compaction/start').length)
        for (const e of session.events) {
          if (e.type === 'compaction/prune') seen.prunes++
          if (e.type === 'compaction/summary') seen.summaries++
          if (e.type === 'compaction/end' && e.data.error) seen.failures++
        }
      }),
      { seed: 20261130, numRuns: 25 },
    )
    // the generated histories did exercise both tiers
    expect(seen.prunes).toBeGreaterThan(10)
    expect(seen.summaries).toBeGreaterThan(10)
  }, 120_000)
})
