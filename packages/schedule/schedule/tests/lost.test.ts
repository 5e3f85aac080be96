import { Session } from '@keel/session'
import { describe, expect, it } from 'vitest'
import '../src/index.js'
import { lostFirings } from '../src/lost.js'

/** A log built from compact steps: `c1` create s1 (recurring), `o1` create s1 (one-shot), `d1` dispatch, `m1` message, `l1` lost. */
function log(steps: string): Session {
  const session = Session.create('lost', {}, undefined, { clock: () => 1_000 })
  let at = 1_000
  for (const step of steps.split(' ')) {
    const id = `s${step.slice(1)}`
    at += 60_000
    if (step.startsWith('c') || step.startsWith('o')) {
      const trigger = step.startsWith('c')
        ? { kind: 'every' as const, intervalMs: 60_000 }
        : { kind: 'after' as const, delayMs: 60_000 }
      session.append('schedule/change', {
        v: 1,
        op: 'create',
        id,
        prompt: `p ${id}`,
        trigger,
        createdAt: 1_000,
      })
    } else if (step.startsWith('d')) {
      session.append('schedule/change', { v: 1, op: 'dispatch', id, dueAt: at, firedAt: at })
    } else if (step.startsWith('l')) {
      session.append('schedule/change', { v: 1, op: 'lost', id, dueAt: at, firedAt: at })
    } else if (step.startsWith('m')) {
      const turn = session.lastTurn + 1
      session.append('turn/start', { turn })
      session.append('user/message', {
        message: { role: 'user', content: [{ type: 'text', text: 'x' }] },
        source: `schedule/${id}`,
      })
      session.append('turn/end', { turn, reason: 'completed' })
    }
  }
  return session
}

const lostIds = (steps: string) => lostFirings(log(steps).events).map((l) => `${l.id}@${l.seq}`)

describe('lostFirings', () => {
  it.each([
    ['nothing dispatched', 'c1', []],
    ['delivered after its dispatch', 'c1 d1 m1', []],
    ['delivered before its dispatch is written (order does not matter)', 'c1 m1 d1', []],
    ['dispatched, never delivered', 'c1 d1', ['s1@1']],
    ['a one-shot dispatched, never delivered', 'o1 d1', ['s1@1']],
    ['already reported', 'c1 d1 l1', []],
    ['the tail of a recurring schedule', 'c1 d1 m1 d1 m1 d1', ['s1@9']],
    ['two lost since the last start', 'c1 d1 m1 d1 d1', ['s1@5', 's1@6']],
    ['reported, then fired and delivered again', 'c1 d1 l1 d1 m1', []],
    ['two schedules, one lost', 'c1 o2 d1 d2 m2', ['s1@2']],
  ])('%s', (_what, steps, expected) => {
    expect(lostIds(steps)).toEqual(expected)
  })
})
