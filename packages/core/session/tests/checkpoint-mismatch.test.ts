import { registerProjection, Session, type SessionCheckpoint } from '@keel/session'
import { describe, expect, it } from 'vitest'
import { build, stored } from './random-log.js'

registerProjection<number>({
  name: 'test/turns',
  init: () => 0,
  apply: (n, event) => (event.type === 'turn/end' ? n + 1 : n),
  checkpoint: { version: 1 },
})

const session = build([
  { kind: 'turn', steps: 2, tools: 1, text: 'x' },
  { kind: 'note', text: 'a' },
  { kind: 'turn', steps: 1, tools: 0, text: 'y' },
])
const events = stored(session)
/** A checkpoint as plain JSON, to damage. */
type Mutable = SessionCheckpoint & {
  projections: Record<string, { version: number; digest: string }>
  invariants: Record<string, { version: number; digest: string }>
}

const fresh = () => JSON.parse(JSON.stringify(session.checkpoint())) as SessionCheckpoint
const prefix = { read: (from: number, to: number) => events.slice(from, to) }

function refusal(change: (c: Mutable) => void): { code?: string; message: string } {
  const checkpoint = fresh() as Mutable
  change(checkpoint)
  try {
    Session.resume('prop', session.header, checkpoint, [], { prefix, parsedSeed: true })
  } catch (error) {
    return error as { code?: string; message: string }
  }
  throw new Error('resumed from a checkpoint that should have been refused')
}

describe('a checkpoint this build cannot use is refused with the reason', () => {
  it('resumes from an unchanged one', () => {
    const resumed = Session.resume('prop', session.header, fresh(), [], { prefix, parsedSeed: true })
    expect(resumed.deriveMessages()).toEqual(session.deriveMessages())
  })

  const cases: [string, (c: Mutable) => void, RegExp][] = [
    ['another state version', (c) => Object.assign(c, { version: 99 }), /state has version 99/],
    ['other core folds', (c) => Object.assign(c, { core: 'sha256:0' }), /other session rules/],
    [
      'a projection version',
      (c) => Object.assign(c.projections['test/turns']!, { version: 2 }),
      /'test\/turns' has version 2/,
    ],
    [
      'a projection digest',
      (c) => Object.assign(c.projections['test/turns']!, { digest: 'x' }),
      /'test\/turns' has other code/,
    ],
    ['a missing projection', (c) => delete c.projections['test/turns'], /'test\/turns' is not in it/],
    [
      'a type read otherwise',
      (c) => Object.assign(c.types, { 'fixture/note': 'known' }),
      /'fixture\/note' were read as known/,
    ],
    [
      'an invariant version',
      (c) => Object.assign(c.invariants['@keel/fixture-plugin']!, { version: 7 }),
      /invariant of @keel\/fixture-plugin has another version/,
    ],
    [
      'a missing invariant state',
      (c) => delete c.invariants['@keel/fixture-plugin'],
      /not folded by the writer/,
    ],
    ['a malformed state', (c) => delete (c as Partial<Mutable>).lifecycle, /malformed/],
    ['a surface seq it does not hold', (c) => c.surface.push(3), /surface names seq 3/],
    [
      'an event out of place',
      (c) => c.events.push({ ...(c.events[0] as object), seq: 999 }),
      /seq 999 out of place/,
    ],
  ]
  it.each(cases)('%s', (_name, change, reason) => {
    const error = refusal(change)
    expect(error.code).toBe('CHECKPOINT_MISMATCH')
    expect(error.message).toMatch(reason)
  })

  it('a registered projection that cannot be checkpointed forces a replay, named', () => {
    const before = fresh()
    registerProjection<number>({ name: 'test/uncheckpointable', init: () => 0, apply: (n) => n + 1 })
    expect(fresh().unsupported).toEqual(["projection 'test/uncheckpointable'"])
    for (const checkpoint of [before, fresh()]) {
      expect(() =>
        Session.resume('prop', session.header, checkpoint, [], { prefix, parsedSeed: true }),
      ).toThrow(/'test\/uncheckpointable' cannot be checkpointed/)
    }
  })
})
