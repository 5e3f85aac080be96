import { Session, type SessionErrorCode, type SessionEventMap, type SessionEventType } from '@keel/session'
import { describe, expect, it } from 'vitest'
import { assistantText, callId, seq, stream, toolResult, userText } from './helpers.js'

function expectCode(fn: () => unknown, code: SessionErrorCode): Error {
  try {
    fn()
  } catch (error) {
    expect((error as { code?: string }).code, (error as Error).message).toBe(code)
    return error as Error
  }
  throw new Error(`expected ${code}, nothing was thrown`)
}

/** A session inside turn 1, step 1. */
function inStep(): Session {
  const s = Session.create('s', {}, undefined, { clock: () => 1000 })
  s.append('turn/start', { turn: 1 })
  s.append('user/message', userText('hi'))
  s.append('step/start', { turn: 1, step: 1 })
  return s
}

/** Appending must be all-or-nothing: compare the observable state before and after. */
function snapshot(s: Session) {
  return JSON.stringify({
    events: s.events,
    surface: s.surfaceSeqs(),
    open: s.openTurn,
    messages: s.deriveMessages(),
  })
}

function refusedUnchanged(s: Session, fn: () => unknown, code: SessionErrorCode): Error {
  const before = snapshot(s)
  const error = expectCode(fn, code)
  expect(snapshot(s)).toBe(before)
  return error
}

describe('append: envelope and data', () => {
  it('assigns contiguous seqs and the clock time, and freezes the event deeply', () => {
    const s = inStep()
    const e = s.append('assistant/message', assistantText(1, 1, 'hello'))
    expect(e.seq).toBe(3)
    expect(e.time).toBe(1000)
    expect(Object.isFrozen(e)).toBe(true)
    expect(Object.isFrozen(e.data.message.content[0])).toBe(true)
    expect(s.events.map((x) => x.seq)).toEqual([0, 1, 2, 3])
  })

  it('copies data: later mutation of the caller object does not reach the log', () => {
    const s = Session.create('s')
    const data = userText('original')
    s.append('user/message', data)
    ;(data.message.content[0] as { text: string }).text = 'mutated'
    expect((s.events[0]!.data as SessionEventMap['user/message']).message.content[0]).toEqual({
      type: 'text',
      text: 'original',
    })
  })

  const nonJson: Array<[string, unknown, string]> = [
    ['undefined property', { turn: 1, extra: undefined }, 'data.extra'],
    ['NaN', { turn: Number.NaN }, 'data.turn'],
    ['Infinity', { turn: Number.POSITIVE_INFINITY }, 'data.turn'],
    ['function', { turn: 1, f: () => 1 }, 'data.f'],
    ['Date', { turn: 1, at: new Date(0) }, 'data.at'],
    ['Map', { turn: 1, m: new Map() }, 'data.m'],
    ['class instance', { turn: 1, c: new (class Foo {})() }, 'data.c'],
    ['bigint', { turn: 1, n: 10n }, 'data.n'],
    ['symbol', { turn: 1, s: Symbol('x') }, 'data.s'],
    ['nested undefined in array', { turn: 1, list: [1, undefined] }, 'data.list[1]'],
  ]
  for (const [name, data, path] of nonJson) {
    it(`refuses non-JSON data (${name}) naming the event type and path`, () => {
      const s = Session.create('s')
      const error = refusedUnchanged(
        s,
        () => s.append('turn/start', data as { turn: number }),
        'NON_JSON_DATA',
      )
      expect(error.message).toContain("'turn/start'")
      expect(error.message).toContain(path)
    })
  }

  it('refuses a cycle', () => {
    const s = Session.create('s')
    const data: Record<string, unknown> = { turn: 1 }
    data.self = data
    refusedUnchanged(s, () => s.append('turn/start', data as { turn: number }), 'NON_JSON_DATA')
  })

  it('refuses data failing its schema, naming the JSON path', () => {
    const s = Session.create('s')
    const error = refusedUnchanged(
      s,
      () =>
        s.append('user/message', {
          message: { role: 'user', content: [{ type: 'text', text: 5 }] },
        } as never),
      'EVENT_DATA_INVALID',
    )
    expect(error.message).toContain('data.message.content[0].text')
    expect(error.message).toContain("'user/message'")
  })

  it('refuses unknown properties (schemas are strict, so nothing is silently dropped)', () => {
    const s = Session.create('s')
    refusedUnchanged(s, () => s.append('turn/start', { turn: 1, note: 'x' } as never), 'EVENT_DATA_INVALID')
  })

  it('refuses an unregistered event type', () => {
    const s = Session.create('s')
    refusedUnchanged(
      s,
      () => s.append('nobody/owns-this' as SessionEventType, {} as never),
      'EVENT_TYPE_UNREGISTERED',
    )
  })

  it('refuses surface fields on a non-surface event at run time too', () => {
    const s = Session.create('s')
    refusedUnchanged(
      s,
      () => s.append('turn/start', { turn: 1 }, { surfaceOp: 'append' } as never),
      'SURFACE_FIELDS_NOT_ALLOWED',
    )
    refusedUnchanged(
      s,
      () => s.append('turn/start', { turn: 1 }, { sourceEventSeqs: [] } as never),
      'SURFACE_FIELDS_NOT_ALLOWED',
    )
  })

  it('keeps the ignorable marker', () => {
    const s = Session.create('s')
    const e = s.append('user/message', userText('x'), { ignorable: true })
    expect(e.ignorable).toBe(true)
  })
})

describe('append: lifecycle invariants', () => {
  it('refuses a nested turn and a non-increasing turn number', () => {
    const s = Session.create('s')
    s.append('turn/start', { turn: 1 })
    refusedUnchanged(s, () => s.append('turn/start', { turn: 2 }), 'TURN_ALREADY_OPEN')
    s.append('turn/end', { turn: 1, reason: 'completed' })
    refusedUnchanged(s, () => s.append('turn/start', { turn: 1 }), 'TURN_NUMBER_INVALID')
    s.append('turn/start', { turn: 2 })
    expect(s.openTurn).toEqual({ turn: 2, step: null })
  })

  it('refuses steps outside a turn, nested steps and a step/end for another step', () => {
    const s = Session.create('s')
    refusedUnchanged(s, () => s.append('step/start', { turn: 1, step: 1 }), 'OUTSIDE_TURN')
    s.append('turn/start', { turn: 1 })
    refusedUnchanged(s, () => s.append('step/start', { turn: 2, step: 1 }), 'OUTSIDE_TURN')
    s.append('step/start', { turn: 1, step: 1 })
    refusedUnchanged(s, () => s.append('step/start', { turn: 1, step: 2 }), 'STEP_ALREADY_OPEN')
    refusedUnchanged(s, () => s.append('step/end', { turn: 1, step: 2 }), 'OUTSIDE_STEP')
    refusedUnchanged(s, () => s.append('turn/end', { turn: 1, reason: 'completed' }), 'STEP_STILL_OPEN')
    s.append('step/end', { turn: 1, step: 1 })
    refusedUnchanged(s, () => s.append('step/start', { turn: 1, step: 1 }), 'OUTSIDE_STEP')
    refusedUnchanged(s, () => s.append('step/end', { turn: 1, step: 1 }), 'OUTSIDE_STEP')
  })

  it('refuses turn/end outside a turn or for another turn', () => {
    const s = Session.create('s')
    refusedUnchanged(s, () => s.append('turn/end', { turn: 1, reason: 'completed' }), 'OUTSIDE_TURN')
    s.append('turn/start', { turn: 1 })
    refusedUnchanged(s, () => s.append('turn/end', { turn: 3, reason: 'completed' }), 'OUTSIDE_TURN')
  })

  it('refuses step-scoped events outside a step', () => {
    const s = Session.create('s')
    refusedUnchanged(s, () => s.append('assistant/message', assistantText(1, 1, 'x')), 'OUTSIDE_TURN')
    s.append('turn/start', { turn: 1 })
    refusedUnchanged(s, () => s.append('assistant/message', assistantText(1, 1, 'x')), 'OUTSIDE_STEP')
    refusedUnchanged(
      s,
      () =>
        s.append('assistant/attempt', {
          turn: 1,
          step: 1,
          attempt: 1,
          stream,
          error: { code: 'LLM_SERVER', message: 'boom' },
        }),
      'OUTSIDE_STEP',
    )
    refusedUnchanged(
      s,
      () => s.append('tool/call', { turn: 1, step: 1, callId: callId('c1'), name: 'echo', arguments: '{}' }),
      'OUTSIDE_STEP',
    )
  })

  it('pairs tool results with their calls: no result without a call, no duplicate result or call id', () => {
    const s = inStep()
    refusedUnchanged(s, () => s.append('tool/result', toolResult(1, 1, 'c1')), 'TOOL_RESULT_WITHOUT_CALL')
    s.append('tool/call', { turn: 1, step: 1, callId: callId('c1'), name: 'echo', arguments: '{}' })
    refusedUnchanged(
      s,
      () => s.append('tool/call', { turn: 1, step: 1, callId: callId('c1'), name: 'echo', arguments: '{}' }),
      'DUPLICATE_TOOL_CALL',
    )
    s.append('tool/result', toolResult(1, 1, 'c1'))
    refusedUnchanged(s, () => s.append('tool/result', toolResult(1, 1, 'c1')), 'DUPLICATE_TOOL_RESULT')
  })

  it('does not let a result answer a call of an earlier turn', () => {
    const s = inStep()
    s.append('tool/call', { turn: 1, step: 1, callId: callId('c1'), name: 'echo', arguments: '{}' })
    s.append('step/end', { turn: 1, step: 1 })
    s.append('turn/end', { turn: 1, reason: 'aborted' })
    s.append('turn/start', { turn: 2 })
    s.append('step/start', { turn: 2, step: 1 })
    refusedUnchanged(s, () => s.append('tool/result', toolResult(2, 1, 'c1')), 'TOOL_RESULT_WITHOUT_CALL')
  })

  it('accepts a rewrite of an answered result (one node, same call, turn and step) outside its step, and nothing looser', () => {
    const s = inStep()
    s.append('tool/call', { turn: 1, step: 1, callId: callId('c1'), name: 'echo', arguments: '{}' })
    const original = s.append('tool/result', toolResult(1, 1, 'c1', 'a long output'))
    s.append('step/end', { turn: 1, step: 1 })
    s.append('turn/end', { turn: 1, reason: 'completed' })
    const user = s.append('user/message', userText('between turns'))
    const replace = { op: 'replace' as const, startSeq: original.seq, endSeq: original.seq }
    // another call id, another step, or a range that is not one result: the ordinary rules apply
    refusedUnchanged(
      s,
      () =>
        s.append('tool/result', toolResult(1, 1, 'c2'), {
          surfaceOp: replace,
          sourceEventSeqs: [original.seq],
        }),
      'OUTSIDE_TURN',
    )
    refusedUnchanged(
      s,
      () =>
        s.append('tool/result', toolResult(1, 2, 'c1'), {
          surfaceOp: replace,
          sourceEventSeqs: [original.seq],
        }),
      'OUTSIDE_TURN',
    )
    refusedUnchanged(
      s,
      () =>
        s.append('tool/result', toolResult(1, 1, 'c1'), {
          surfaceOp: { op: 'replace', startSeq: original.seq, endSeq: user.seq },
          sourceEventSeqs: [original.seq, user.seq],
        }),
      'OUTSIDE_TURN',
    )
    const rewrite = s.append('tool/result', toolResult(1, 1, 'c1', '[pruned]'), {
      surfaceOp: replace,
      sourceEventSeqs: [original.seq],
    })
    expect(s.isOnSurface(original.seq)).toBe(false)
    expect(s.deriveMessages().map((m) => (m.role === 'tool' ? m.content : m.role))).toContainEqual([
      { type: 'text', text: '[pruned]' },
    ])
    // the rewrite can itself be rewritten; the shadowed original cannot
    refusedUnchanged(
      s,
      () =>
        s.append('tool/result', toolResult(1, 1, 'c1'), {
          surfaceOp: replace,
          sourceEventSeqs: [original.seq],
        }),
      'SURFACE_REPLACE_INVALID',
    )
    s.append('tool/result', toolResult(1, 1, 'c1', '[pruned again]'), {
      surfaceOp: { op: 'replace', startSeq: rewrite.seq, endSeq: rewrite.seq },
      sourceEventSeqs: [rewrite.seq],
    })
    // replay of the stored log accepts the same events
    const reloaded = Session.create(
      's',
      {},
      s.events.map((e) => JSON.parse(JSON.stringify(e))),
    )
    expect(reloaded.deriveMessages()).toEqual(s.deriveMessages())
  })

  it('allows messages between turns (system prompt, summaries)', () => {
    const s = Session.create('s')
    s.append('system/message', { message: { role: 'system', content: [{ type: 'text', text: 'be brief' }] } })
    s.append('developer/message', {
      message: { role: 'developer', content: [{ type: 'text', text: 'note' }] },
    })
    s.append('user/message', userText('hello'))
    expect(s.deriveMessages().map((m) => m.role)).toEqual(['system', 'developer', 'user'])
  })
})

describe('subscribe', () => {
  it('notifies after commit, and refuses a re-entrant append without deadlock', () => {
    const s = Session.create('s')
    const seen: number[] = []
    let inner: unknown
    const off = s.subscribe((event, session) => {
      seen.push(event.seq)
      expect(session.events.length).toBe(event.seq + 1)
      try {
        session.append('user/message', userText('from listener'))
      } catch (error) {
        inner = error
      }
    })
    s.append('user/message', userText('a'))
    expect(seen).toEqual([0])
    expect((inner as { code?: string }).code).toBe('REENTRANT_APPEND')
    expect(s.events.length).toBe(1)
    off()
    s.append('user/message', userText('b'))
    expect(seen).toEqual([0])
  })

  it('a throwing listener does not roll back the committed event, and other listeners still run', () => {
    const s = Session.create('s')
    const seen: number[] = []
    s.subscribe(() => {
      throw new Error('listener failed')
    })
    s.subscribe((e) => seen.push(e.seq))
    const error = expectCode(() => s.append('user/message', userText('a')), 'SUBSCRIBER_FAILED')
    expect(error.message).toContain('committed at seq 0')
    expect(error.message).toContain('listener failed')
    expect(s.events.length).toBe(1)
    expectCode(() => s.append('user/message', userText('b')), 'SUBSCRIBER_FAILED')
    expect(s.events.length).toBe(2)
    expect(seen).toEqual([0, 1])
  })
})

describe('surface replace', () => {
  function withSurface(): Session {
    const s = Session.create('s')
    s.append('system/message', { message: { role: 'system', content: [{ type: 'text', text: 'sys' }] } }) // 0
    s.append('turn/start', { turn: 1 }) // 1
    s.append('user/message', userText('q1')) // 2
    s.append('step/start', { turn: 1, step: 1 }) // 3
    s.append('assistant/message', assistantText(1, 1, 'a1')) // 4
    s.append('step/end', { turn: 1, step: 1 }) // 5
    s.append('turn/end', { turn: 1, reason: 'completed' }) // 6
    s.append('user/message', userText('q2')) // 7
    return s
  }

  it('replaces a range with one node citing every shadowed node; raw events stay', () => {
    const s = withSurface()
    s.append('user/message', userText('summary'), {
      surfaceOp: { op: 'replace', startSeq: seq(2), endSeq: seq(4) },
      sourceEventSeqs: [seq(2), seq(4)],
    })
    expect(s.surfaceSeqs()).toEqual([0, 8, 7])
    expect(s.deriveMessages().map((m) => (m.content[0] as { text: string }).text)).toEqual([
      'sys',
      'summary',
      'q2',
    ])
    expect(s.events.length).toBe(9)
    // a later replace can shadow the replacement itself
    s.append('user/message', userText('all'), {
      surfaceOp: { op: 'replace', startSeq: seq(0), endSeq: seq(7) },
      sourceEventSeqs: [seq(0), seq(8), seq(7)],
    })
    expect(s.surfaceSeqs()).toEqual([9])
  })

  it('refuses ranges that are not current surface nodes, are reversed, or miss sources', () => {
    const s = withSurface()
    const op = (a: number, b: number) => ({ op: 'replace' as const, startSeq: seq(a), endSeq: seq(b) })
    refusedUnchanged(
      s,
      () =>
        s.append('user/message', userText('x'), { surfaceOp: op(1, 4), sourceEventSeqs: [seq(2), seq(4)] }),
      'SURFACE_REPLACE_INVALID',
    )
    refusedUnchanged(
      s,
      () =>
        s.append('user/message', userText('x'), { surfaceOp: op(4, 2), sourceEventSeqs: [seq(2), seq(4)] }),
      'SURFACE_REPLACE_INVALID',
    )
    refusedUnchanged(
      s,
      () =>
        s.append('user/message', userText('x'), { surfaceOp: op(2, 7), sourceEventSeqs: [seq(2), seq(7)] }),
      'SURFACE_SOURCES_INVALID',
    )
    refusedUnchanged(
      s,
      () =>
        s.append('user/message', userText('x'), { surfaceOp: op(2, 4), sourceEventSeqs: [seq(2), seq(99)] }),
      'SURFACE_SOURCES_INVALID',
    )
    s.append('user/message', userText('s'), { surfaceOp: op(2, 4), sourceEventSeqs: [seq(2), seq(4)] })
    // 2 is shadowed now, so it is no longer a current surface node
    refusedUnchanged(
      s,
      () =>
        s.append('user/message', userText('x'), { surfaceOp: op(2, 7), sourceEventSeqs: [seq(2), seq(7)] }),
      'SURFACE_REPLACE_INVALID',
    )
    refusedUnchanged(
      s,
      () => s.append('user/message', userText('x'), { surfaceOp: { op: 'bogus' } as never }),
      'SURFACE_REPLACE_INVALID',
    )
  })
})
