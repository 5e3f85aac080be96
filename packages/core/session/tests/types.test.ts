// Type-level tests: checked by `tsc` (pnpm typecheck) — a wrong type or an unused
// expect-error directive fails the build — and run by vitest so the file is part of the suite.
import type { AssistantMessage, UserMessage } from '@keel/llm'
import {
  registerEvents,
  Session,
  type SessionEvent,
  type SessionEventMap,
  type SessionEventType,
  type SessionSeq,
  type SurfaceEventType,
  type SurfaceOp,
} from '@keel/session'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import type { FixtureNote } from './fixtures/plugin/src/index.js'
import './fixtures/plugin/src/index.js'
import { userText } from './helpers.js'

describe('SessionEvent is a discriminated union', () => {
  it('narrows data by type', () => {
    const describeEvent = (e: SessionEvent): string => {
      switch (e.type) {
        case 'user/message':
          expectTypeOf(e.data.message).toEqualTypeOf<UserMessage>()
          return 'user'
        case 'assistant/message':
          expectTypeOf(e.data.message).toEqualTypeOf<AssistantMessage>()
          expectTypeOf(e.data.interrupted).toEqualTypeOf<true | undefined>()
          return 'assistant'
        case 'turn/end':
          expectTypeOf(e.data.reason).toEqualTypeOf<
            | 'completed'
            | 'aborted'
            | 'error'
            | 'max-steps'
            | 'rejected'
            | 'interrupted'
            | 'output-limit'
            | 'content-filter'
          >()
          return 'end'
        default:
          return e.type
      }
    }
    const s = Session.create('t')
    expect(describeEvent(s.append('user/message', userText('x')))).toBe('user')
  })

  it('surface fields exist only on surface variants', () => {
    expectTypeOf<SessionEvent<'user/message'>['surfaceOp']>().toEqualTypeOf<SurfaceOp | undefined>()
    expectTypeOf<SessionEvent<'tool/result'>['sourceEventSeqs']>().toEqualTypeOf<SessionSeq[] | undefined>()
    expectTypeOf<SessionEvent<'turn/start'>['surfaceOp']>().toEqualTypeOf<undefined>()
    expectTypeOf<SessionEvent<'tool/call'>['sourceEventSeqs']>().toEqualTypeOf<undefined>()
    expectTypeOf<SurfaceEventType>().toEqualTypeOf<
      'system/message' | 'developer/message' | 'user/message' | 'assistant/message' | 'tool/result'
    >()
  })

  it('append rejects surface options and wrong payloads at compile time', () => {
    const s = Session.create('t')
    s.append('user/message', userText('x'), { surfaceOp: 'append' })
    const refuse = () => {
      // @ts-expect-error surfaceOp is not allowed on a non-surface event
      s.append('turn/start', { turn: 1 }, { surfaceOp: 'append' })
      const call = { turn: 1, step: 1, callId: 'c' as never, name: 'n', arguments: '' }
      // @ts-expect-error sourceEventSeqs is not allowed on a non-surface event
      s.append('tool/call', call, { sourceEventSeqs: [] })
      // @ts-expect-error payload must match SessionEventMap['turn/start']
      s.append('turn/start', { turn: '1' })
      // @ts-expect-error unknown event type
      s.append('no/such-event', {})
      // @ts-expect-error a plain number is not a SessionSeq
      s.append('user/message', userText('x'), { sourceEventSeqs: [1] })
    }
    expect(typeof refuse).toBe('function')
  })
})

describe('declaration merging from a plugin package', () => {
  it('adds a typed event to SessionEventMap', () => {
    expectTypeOf<'fixture/note'>().toExtend<SessionEventType>()
    expectTypeOf<SessionEventMap['fixture/note']>().toEqualTypeOf<{ note: FixtureNote; pinned?: true }>()
    const s = Session.create('t')
    const e = s.append('fixture/note', { note: { text: 'n', tags: [] } })
    expectTypeOf(e.data.note).toEqualTypeOf<FixtureNote>()
    expectTypeOf(e).toHaveProperty('surfaceOp').toEqualTypeOf<undefined>()
    expect(e.type).toBe('fixture/note')
  })

  it('refuses, at compile time, a schema that does not match its map entry', () => {
    const neverCalled = () => {
      registerEvents('@keel/x', {
        // @ts-expect-error the schema's output (string) does not match SessionEventMap['turn/start'].turn (number)
        'turn/start': z.strictObject({ turn: z.string() }),
      })
      registerEvents('@keel/x', {
        // @ts-expect-error a schema missing a property does not match either
        'fixture/note': z.strictObject({ note: z.strictObject({ text: z.string() }) }),
      })
      registerEvents('@keel/x', {
        // @ts-expect-error an event type nobody declared
        'undeclared/event': z.strictObject({}),
      })
    }
    expect(typeof neverCalled).toBe('function')
  })
})
