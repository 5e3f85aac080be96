import type { UserMessage } from '@keel/llm'
import { Session } from '@keel/session'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import {
  applySplice,
  enqueueMessage,
  type InboxSplice,
  normalizeSplice,
  pendingMessages,
  spliceProblem,
  withdrawMessage,
} from '../src/index.js'
import { type Rig, rig } from './helpers.js'

const msg = (text: string): UserMessage => ({ role: 'user', content: [{ type: 'text', text }] })
const texts = (list: readonly UserMessage[]) =>
  list.map((m) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''))

describe('inbox splices', () => {
  it('normalizes: trims what is removed and inserted again, drops no-ops, refuses bad ranges', () => {
    const list = ['a', 'b', 'c'].map(msg)
    expect(normalizeSplice(list, { start: 0, removedCount: 2, inserted: [msg('a'), msg('x')] })).toEqual({
      target: 'next-turn',
      start: 1,
      removedCount: 1,
      inserted: [msg('x')],
    })
    expect(normalizeSplice(list, { start: 1, removedCount: 1, inserted: [msg('b')] })).toBeUndefined()
    expect(normalizeSplice(list, { start: 3 })).toBeUndefined()
    expect(() => normalizeSplice(list, { start: 4, inserted: [msg('z')] })).toThrow(
      expect.objectContaining({ code: 'INBOX_SPLICE_INVALID' }),
    )
    expect(() => normalizeSplice(list, { start: 2, removedCount: 2 })).toThrow(
      expect.objectContaining({ code: 'INBOX_SPLICE_INVALID' }),
    )
    expect(() =>
      normalizeSplice(list, { start: 0, removedCount: 1, inserted: [msg('x')], outcome: 'canceled' }),
    ).toThrow(expect.objectContaining({ code: 'INBOX_SPLICE_INVALID' }))
  })

  it('a normalized splice does what Array.splice does, is accepted, and normalizes to itself (property)', () => {
    const word = fc.constantFrom('a', 'b', 'c')
    fc.assert(
      fc.property(
        fc.array(word, { maxLength: 6 }),
        fc.nat(7),
        fc.nat(4),
        fc.array(word, { maxLength: 4 }),
        (items, rawStart, rawRemoved, added) => {
          const list = items.map(msg)
          const start = Math.min(rawStart, list.length)
          const removedCount = Math.min(rawRemoved, list.length - start)
          const inserted = added.map(msg)
          const expected = [...list]
          expected.splice(start, removedCount, ...inserted)
          const splice = normalizeSplice(list, { start, removedCount, inserted })
          if (splice === undefined) {
            expect(texts(expected)).toEqual(texts(list))
            return
          }
          expect(spliceProblem(list, splice)).toBeUndefined()
          expect(texts(applySplice(list, splice))).toEqual(texts(expected))
          expect(normalizeSplice(list, splice)).toEqual(splice)
        },
      ),
      { seed: 21, numRuns: 500 },
    )
  })

  it('the pending list is a fold of the log: a stored log with an impossible splice is refused at load', () => {
    const session = Session.create('inbox-fold')
    enqueueMessage(session, 'first')
    enqueueMessage(session, 'second')
    enqueueMessage(session, 'third')
    expect(texts([withdrawMessage(session, 1), withdrawMessage(session, 0)])).toEqual(['second', 'first'])
    expect(texts(pendingMessages(session))).toEqual(['third'])
    const reloaded = Session.create('inbox-fold', {}, JSON.parse(JSON.stringify(session.events)))
    expect(texts(pendingMessages(reloaded))).toEqual(['third'])
    expect(reloaded.events.at(-1)).toMatchObject({ data: { start: 0, removedCount: 1, outcome: 'canceled' } })
    const bad: InboxSplice = { target: 'next-turn', start: 0, removedCount: 2, inserted: [] }
    const stored = [
      ...JSON.parse(JSON.stringify(session.events)),
      { type: 'agent/inbox/spliced', seq: 5, time: 1, data: bad },
    ]
    expect(() => Session.create('inbox-bad', {}, stored)).toThrow(/only 1 are pending/u)
    expect(() => session.append('agent/inbox/spliced', bad)).toThrow(/only 1 are pending/u)
  })
})

const rigs: Rig[] = []
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.close()
})

describe('send({ fromInbox })', () => {
  it('takes the message out of the inbox right before its turn starts, so it is never in both or neither', async () => {
    const r = await rig([{ text: 'one' }, { text: 'two' }])
    rigs.push(r)
    enqueueMessage(r.session, 'queued one')
    enqueueMessage(r.session, 'queued two')
    const [first] = pendingMessages(r.session)
    expect((await r.agent.send(first!, { fromInbox: true })).text).toBe('one')
    expect(texts(pendingMessages(r.session))).toEqual(['queued two'])
    const types = r.types()
    const take = types.lastIndexOf('agent/inbox/spliced')
    expect(types.slice(take, take + 3)).toEqual(['agent/inbox/spliced', 'turn/start', 'user/message'])
    expect(r.session.events[take]!.data).toEqual({
      target: 'next-turn',
      start: 0,
      removedCount: 1,
      inserted: [],
    })
    // a message no longer pending (withdrawn meanwhile) runs without touching the inbox
    withdrawMessage(r.session, 0)
    const before = r.session.events.length
    expect((await r.agent.send(msg('queued two'), { fromInbox: true })).text).toBe('two')
    expect(r.session.events.slice(before).map((e) => e.type)).not.toContain('agent/inbox/spliced')
  })
})
