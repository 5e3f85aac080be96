import { type Projection, Session, type SessionEvent, type SessionEventMap } from '@keel/session'
import { describe, expect, it } from 'vitest'
import { assistantText, callId, toolResult, userText } from './helpers.js'
import '../tests/fixtures/plugin/src/index.js'

function stored(s: Session): unknown[] {
  return JSON.parse(JSON.stringify(s.events))
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    return (error as { code?: string }).code
  }
  return undefined
}

function oneTurn(): Session {
  const s = Session.create('parent', { cwd: '/work', agentPreset: 'coder' })
  s.append('system/message', { message: { role: 'system', content: [{ type: 'text', text: 'sys' }] } })
  s.append('turn/start', { turn: 1 })
  s.append('user/message', userText('q'))
  s.append('step/start', { turn: 1, step: 1 })
  s.append('assistant/message', {
    ...assistantText(1, 1, ''),
    message: {
      role: 'assistant',
      content: [{ type: 'tool-call', id: callId('c1'), name: 'echo', arguments: '{"a":1}' }],
    },
  })
  s.append('tool/call', { turn: 1, step: 1, callId: callId('c1'), name: 'echo', arguments: '{"a":1}' })
  s.append('tool/result', toolResult(1, 1, 'c1'))
  s.append('step/end', { turn: 1, step: 1 })
  s.append('step/start', { turn: 1, step: 2 })
  s.append('assistant/message', assistantText(1, 2, 'done'))
  s.append('step/end', { turn: 1, step: 2 })
  s.append('turn/end', { turn: 1, reason: 'completed' })
  return s
}

describe('loading a stored log (seed)', () => {
  it('round-trips: same events, same surface, same lifecycle state', () => {
    const s = oneTurn()
    const loaded = Session.create('parent', s.header, stored(s))
    expect(loaded.events).toEqual(s.events)
    expect(loaded.deriveMessages()).toEqual(s.deriveMessages())
    expect(loaded.openTurn).toBeNull()
    expect(loaded.lastTurn).toBe(1)
    loaded.append('turn/start', { turn: 2 })
  })

  it('re-validates every stored event with the same rules as append', () => {
    const events = stored(oneTurn()) as Array<{ data: Record<string, unknown> }>
    events[2]!.data = { message: { role: 'user', content: 'not an array' } }
    expect(codeOf(() => Session.create('x', {}, events))).toBe('EVENT_DATA_INVALID')
    const lifecycle = stored(oneTurn())
    lifecycle.splice(1, 1) // drop turn/start: seqs no longer contiguous
    expect(codeOf(() => Session.create('x', {}, lifecycle))).toBe('EVENT_ENVELOPE_INVALID')
  })

  it('refuses a duplicated or skipped seq', () => {
    const events = stored(oneTurn()) as Array<{ seq: number }>
    const dup = [...events.slice(0, 3), { ...events[2] }, ...events.slice(3)]
    expect(codeOf(() => Session.create('x', {}, dup))).toBe('EVENT_ENVELOPE_INVALID')
    events[4]!.seq = 5
    expect(codeOf(() => Session.create('x', {}, events))).toBe('EVENT_ENVELOPE_INVALID')
  })

  it('refuses envelope garbage: not an object, no type, bad time, unknown field', () => {
    expect(codeOf(() => Session.create('x', {}, ['nope']))).toBe('EVENT_ENVELOPE_INVALID')
    expect(codeOf(() => Session.create('x', {}, [{ seq: 0, time: 1, data: {} }]))).toBe(
      'EVENT_ENVELOPE_INVALID',
    )
    expect(
      codeOf(() => Session.create('x', {}, [{ type: 'turn/start', seq: 0, time: 'now', data: { turn: 1 } }])),
    ).toBe('EVENT_ENVELOPE_INVALID')
    expect(
      codeOf(() =>
        Session.create('x', {}, [{ type: 'turn/start', seq: 0, time: 1, data: { turn: 1 }, extra: 1 }]),
      ),
    ).toBe('EVENT_ENVELOPE_INVALID')
    expect(
      codeOf(() =>
        Session.create('x', {}, [
          { type: 'turn/start', seq: 0, time: 1, data: { turn: 1 }, surfaceOp: 'append' },
        ]),
      ),
    ).toBe('SURFACE_FIELDS_NOT_ALLOWED')
  })

  it('refuses an unknown required event type, naming type and seq', () => {
    const events = [...stored(oneTurn()), { type: 'future/thing', seq: 12, time: 1, data: { a: 1 } }]
    let error: { code?: string; message?: string; details?: Record<string, unknown> } = {}
    try {
      Session.create('x', {}, events)
    } catch (e) {
      error = e as typeof error
    }
    expect(error.code).toBe('UNKNOWN_REQUIRED_EVENT')
    expect(error.message).toContain("'future/thing'")
    expect(error.details).toMatchObject({ type: 'future/thing', seq: 12 })
  })

  it('keeps an unknown ignorable event verbatim without interpreting it', () => {
    const unknown = { type: 'future/telemetry', seq: 12, time: 5, data: { x: [1, 2] }, ignorable: true }
    const events = [...stored(oneTurn()), unknown]
    const s = Session.create('x', {}, events)
    expect(s.events[12]).toEqual(unknown)
    expect(s.isOpaque(12)).toBe(true)
    const seen: string[] = []
    s.project({
      name: 'types',
      init: () => 0,
      apply: (n, e) => {
        seen.push(e.type)
        return n + 1
      },
    })
    expect(seen).not.toContain('future/telemetry')
    // and the log stays appendable and forkable, keeping the event
    s.append('turn/start', { turn: 2 })
    expect(s.fork('child', 12).events[12]).toEqual(unknown)
  })

  it('keeps a known event whose plugin is not loaded as plain JSON, verbatim', () => {
    const known = { 'other/event': { surface: false, owner: '@keel/other' } }
    const raw = { type: 'other/event', seq: 0, time: 1, data: { anything: { goes: [true] } } }
    const s = Session.create('x', {}, [raw], { knownEventTypes: known })
    expect(s.events[0]).toEqual(raw)
    expect(s.isOpaque(0)).toBe(false)
    const bad = { type: 'other/event', seq: 0, time: 1, data: { n: null, d: undefined } }
    expect(codeOf(() => Session.create('x', {}, [bad], { knownEventTypes: known }))).toBe('NON_JSON_DATA')
    // appending it is still refused: its schema is not registered
    expect(codeOf(() => s.append('other/event' as never, {} as never))).toBe('EVENT_TYPE_UNREGISTERED')
  })

  it('stamps createdAt from the injected clock', () => {
    expect(Session.create('x', {}, undefined, { clock: () => 1234 }).header.createdAt).toBe(1234)
    expect(Session.create('x', { createdAt: 99 }, undefined, { clock: () => 1234 }).header.createdAt).toBe(99)
  })

  it('refuses a header of another format version and a bad id', () => {
    expect(codeOf(() => Session.create('x', { version: 2 }))).toBe('HEADER_INVALID')
    expect(codeOf(() => Session.create('../etc'))).toBe('HEADER_INVALID')
    expect(codeOf(() => Session.create(''))).toBe('HEADER_INVALID')
  })

  it('restores an open turn so the next append continues it', () => {
    const s = Session.create('x')
    s.append('turn/start', { turn: 1 })
    s.append('step/start', { turn: 1, step: 1 })
    const loaded = Session.create('x', {}, stored(s))
    expect(loaded.openTurn).toEqual({ turn: 1, step: 1 })
    loaded.append('step/end', { turn: 1, step: 1 })
    loaded.append('turn/end', { turn: 1, reason: 'interrupted' })
  })
})

describe('fork', () => {
  it('copies the prefix, records lineage and appends session/end-seed', () => {
    const parent = oneTurn()
    const child = parent.fork('child')
    expect(child.header).toMatchObject({
      parentSession: 'parent',
      seedLength: 12,
      cwd: '/work',
      agentPreset: 'coder',
    })
    expect(child.events.slice(0, 12)).toEqual(parent.events)
    expect(child.events[12]).toMatchObject({
      type: 'session/end-seed',
      seq: 12,
      data: { parentSession: 'parent', parentSeq: 11 },
    })
    expect(child.firstLiveSeq).toBe(13)
    expect(parent.firstLiveSeq).toBe(0)
    expect(child.deriveMessages()).toEqual(parent.deriveMessages())
    child.append('turn/start', { turn: 2 })
    expect(parent.events.length).toBe(12)
  })

  it('refuses a cut inside an open turn or outside the log', () => {
    const parent = oneTurn()
    expect(codeOf(() => parent.fork('c', 5))).toBe('FORK_CUT_INVALID')
    // the refusal names the cuts that work: just before the turn, or at its end
    expect(() => parent.fork('c', 5)).toThrow(
      'cannot fork session parent at seq 5: turn 1 (seqs 1..11) is still open there; cut at seq 0, before it, or at seq 11, its turn/end',
    )
    const unfinished = oneTurn()
    unfinished.append('turn/start', { turn: 2 })
    unfinished.append('user/message', userText('again'))
    expect(() => unfinished.fork('c', 13)).toThrow(
      'turn 2 (from seq 12, not ended) is still open there; cut at seq 11, before it',
    )
    expect(codeOf(() => parent.fork('c', 99))).toBe('FORK_CUT_INVALID')
    expect(parent.fork('c', 0).events.length).toBe(2)
    expect(codeOf(() => parent.fork('c', -1))).toBe('FORK_CUT_INVALID')
    expect(codeOf(() => Session.create('empty').fork('c'))).toBe('FORK_CUT_INVALID')
  })
})

describe('projections', () => {
  const countTurns: Projection<{ turns: number; applied: number }> = {
    name: 'count-turns',
    init: () => ({ turns: 0, applied: 0 }),
    apply: (state, event) => ({
      turns: state.turns + (event.type === 'turn/start' ? 1 : 0),
      applied: state.applied + 1,
    }),
  }

  it('folds incrementally and caches per projection', () => {
    const s = oneTurn()
    expect(s.project(countTurns)).toEqual({ turns: 1, applied: 12 })
    s.append('turn/start', { turn: 2 })
    expect(s.project(countTurns)).toEqual({ turns: 2, applied: 13 })
    expect(s.project(countTurns)).toEqual({ turns: 2, applied: 13 })
  })

  it('sees plugin events with typed data after narrowing', () => {
    const s = Session.create('p')
    s.append('fixture/note', { note: { text: 'remember', tags: ['a'] }, pinned: true })
    const notes: Projection<string[]> = {
      name: 'notes',
      init: () => [],
      apply: (state, event: SessionEvent) =>
        event.type === 'fixture/note' ? [...state, event.data.note.text] : state,
    }
    expect(s.project(notes)).toEqual(['remember'])
    const data: SessionEventMap['fixture/note'] = s.events[0]!.data as SessionEventMap['fixture/note']
    expect(data.pinned).toBe(true)
  })
})
