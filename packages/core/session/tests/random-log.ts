import { Session } from '@keel/session'
import fc from 'fast-check'
import { assistantText, callId, toolResult, userText } from './helpers.js'
import './fixtures/plugin/src/index.js'

/** One step of a random but valid log, applied through the public API by {@link applyActions}. */
export type Action =
  | { kind: 'user'; text: string }
  | { kind: 'turn'; steps: number; tools: number; text: string }
  | { kind: 'replace'; a: number; b: number; text: string }
  | { kind: 'note'; text: string }

export const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant('user' as const), text: fc.string({ maxLength: 8 }) }),
  fc.record({
    kind: fc.constant('turn' as const),
    steps: fc.integer({ min: 1, max: 3 }),
    tools: fc.integer({ min: 0, max: 3 }),
    text: fc.string({ maxLength: 8 }),
  }),
  fc.record({
    kind: fc.constant('replace' as const),
    a: fc.nat(),
    b: fc.nat(),
    text: fc.string({ maxLength: 8 }),
  }),
  fc.record({ kind: fc.constant('note' as const), text: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f') }),
)

/** Appends `actions` to `s` (a note whose text was already used is refused by the fixture invariant and skipped). */
export function applyActions(s: Session, actions: readonly Action[]): Session {
  for (const act of actions) {
    if (act.kind === 'user') s.append('user/message', userText(act.text))
    else if (act.kind === 'note') {
      try {
        s.append('fixture/note', { note: { text: act.text, tags: [] } })
      } catch (error) {
        if ((error as { code?: string }).code !== 'EVENT_INVARIANT_VIOLATED') throw error
      }
    } else if (act.kind === 'turn') {
      const turn = s.lastTurn + 1
      s.append('turn/start', { turn })
      s.append('user/message', userText(act.text))
      for (let step = 1; step <= act.steps; step++) {
        s.append('step/start', { turn, step })
        const calls = step < act.steps ? act.tools : 0
        const ids = Array.from({ length: calls }, (_, i) => callId(`t${turn}s${step}c${i}`))
        s.append('assistant/message', {
          ...assistantText(turn, step, act.text),
          message: {
            role: 'assistant',
            content: [
              { type: 'text', text: act.text },
              ...ids.map((id) => ({ type: 'tool-call' as const, id, name: 'echo', arguments: '{}' })),
            ],
          },
        })
        for (const id of ids) s.append('tool/call', { turn, step, callId: id, name: 'echo', arguments: '{}' })
        for (const id of ids) s.append('tool/result', toolResult(turn, step, id, act.text))
        s.append('step/end', { turn, step })
      }
      s.append('turn/end', { turn, reason: 'completed' })
    } else {
      const surface = s.surfaceSeqs()
      if (surface.length === 0) continue
      const i = act.a % surface.length
      const j = i + (act.b % (surface.length - i))
      const shadowed = surface.slice(i, j + 1)
      s.append('user/message', userText(act.text), {
        surfaceOp: { op: 'replace', startSeq: surface[i]!, endSeq: surface[j]! },
        sourceEventSeqs: shadowed,
      })
    }
  }
  return s
}

/** A session opened by a system message, then `actions`. */
export function build(actions: readonly Action[]): Session {
  const s = Session.create('prop', {}, undefined, { clock: () => 42 })
  s.append('system/message', { message: { role: 'system', content: [{ type: 'text', text: 'sys' }] } })
  return applyActions(s, actions)
}

/** The events as stored (JSON), fresh copies. */
export function stored(s: Session): unknown[] {
  return JSON.parse(JSON.stringify(s.events)) as unknown[]
}

/** Seqs after which no turn is open: where a fork may cut. */
export function forkCuts(s: Session): number[] {
  const cuts: number[] = []
  let open = false
  for (const e of s.events) {
    if (e.type === 'turn/start') open = true
    if (e.type === 'turn/end') open = false
    if (!open) cuts.push(e.seq as number)
  }
  return cuts
}
