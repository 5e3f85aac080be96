import { Session } from '@keel/session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  nextDueAt,
  parseDuration,
  resolveTrigger,
  type ScheduleChange,
  type ScheduleErrorCode,
  type ScheduleRules,
  type ScheduleStreamErrorCode,
  scheduleProjection,
} from '../src/index.js'
import { DAY, HOUR, harness, MINUTE, stored, T0 } from './helpers.js'

const rules: ScheduleRules = { minIntervalMs: MINUTE, expireAfterMs: 7 * DAY, defaultTimezone: 'UTC' }

function expectCode(fn: () => unknown, code: ScheduleErrorCode | ScheduleStreamErrorCode): Error {
  try {
    fn()
  } catch (error) {
    expect((error as { code?: string }).code, (error as Error).message).toBe(code)
    return error as Error
  }
  throw new Error(`expected ${code}, nothing was thrown`)
}

describe('resolveTrigger: each kind', () => {
  it('after: a duration from now, no expiry', () => {
    expect(resolveTrigger({ kind: 'after', when: '1h30m', prompt: 'p' }, T0, rules)).toEqual({
      trigger: { kind: 'after', delayMs: 90 * MINUTE },
    })
    expect(parseDuration('90s')).toBe(90_000)
    expect(parseDuration('1d')).toBe(DAY)
  })

  it('at: an ISO time with an offset, read as an instant', () => {
    expect(resolveTrigger({ kind: 'at', when: '2026-01-05T10:30:00+01:00', prompt: 'p' }, T0, rules)).toEqual(
      {
        trigger: { kind: 'at', at: Date.UTC(2026, 0, 5, 9, 30) },
      },
    )
  })

  it('every: an interval, expiring after the configured time', () => {
    expect(resolveTrigger({ kind: 'every', when: '2h', prompt: 'p' }, T0, rules)).toEqual({
      trigger: { kind: 'every', intervalMs: 2 * HOUR },
      expiresAt: T0 + 7 * DAY,
    })
  })

  it('cron: the expression and its time zone (the default one when none is named)', () => {
    expect(
      resolveTrigger({ kind: 'cron', when: '0 9 * * 1-5', prompt: 'p', timezone: 'Europe/Paris' }, T0, rules),
    ).toEqual({
      trigger: { kind: 'cron', expression: '0 9 * * 1-5', timezone: 'Europe/Paris' },
      expiresAt: T0 + 7 * DAY,
    })
    expect(resolveTrigger({ kind: 'cron', when: '*/5 * * * *', prompt: 'p' }, T0, rules).trigger).toEqual({
      kind: 'cron',
      expression: '*/5 * * * *',
      timezone: 'UTC',
    })
  })
})

describe('resolveTrigger: refusals by code', () => {
  const cases: Array<[string, Parameters<typeof resolveTrigger>[0], ScheduleErrorCode]> = [
    ['empty prompt', { kind: 'after', when: '5m', prompt: '  ' }, 'SCHEDULE_PROMPT_EMPTY'],
    ['words for a duration', { kind: 'after', when: '15 minutes', prompt: 'p' }, 'SCHEDULE_DURATION_INVALID'],
    ['a zero duration', { kind: 'after', when: '0m', prompt: 'p' }, 'SCHEDULE_DURATION_INVALID'],
    ['units out of order', { kind: 'every', when: '30m1h', prompt: 'p' }, 'SCHEDULE_DURATION_INVALID'],
    ['no offset', { kind: 'at', when: '2026-01-05T10:00:00', prompt: 'p' }, 'SCHEDULE_TIME_INVALID'],
    ['not a time', { kind: 'at', when: 'tomorrow', prompt: 'p' }, 'SCHEDULE_TIME_INVALID'],
    [
      'an impossible date',
      { kind: 'at', when: '2026-02-31T10:00:00Z', prompt: 'p' },
      'SCHEDULE_TIME_INVALID',
    ],
    ['the past', { kind: 'at', when: '2026-01-05T07:59:59Z', prompt: 'p' }, 'SCHEDULE_TIME_IN_PAST'],
    [
      'an interval under the minimum',
      { kind: 'every', when: '30s', prompt: 'p' },
      'SCHEDULE_INTERVAL_TOO_SHORT',
    ],
    ['four cron fields', { kind: 'cron', when: '* * * *', prompt: 'p' }, 'SCHEDULE_CRON_INVALID'],
    ['a cron seconds field', { kind: 'cron', when: '*/10 * * * * *', prompt: 'p' }, 'SCHEDULE_CRON_INVALID'],
    ['a cron value out of range', { kind: 'cron', when: '61 * * * *', prompt: 'p' }, 'SCHEDULE_CRON_INVALID'],
    ['cron garbage', { kind: 'cron', when: 'every monday', prompt: 'p' }, 'SCHEDULE_CRON_INVALID'],
    [
      'a cron that never fires',
      { kind: 'cron', when: '0 0 30 2 *', prompt: 'p' },
      'SCHEDULE_CRON_NEVER_FIRES',
    ],
    [
      'an unknown time zone',
      { kind: 'cron', when: '0 9 * * *', prompt: 'p', timezone: 'Mars/Base' },
      'SCHEDULE_TIMEZONE_INVALID',
    ],
  ]
  it.each(cases)('%s', (_name, request, code) => {
    const error = expectCode(() => resolveTrigger(request, T0, rules), code)
    expect(error.message.length).toBeGreaterThan(20)
  })

  it('a cron firing more often than the minimum interval', () => {
    expectCode(
      () =>
        resolveTrigger({ kind: 'cron', when: '*/5 * * * *', prompt: 'p' }, T0, {
          ...rules,
          minIntervalMs: 10 * MINUTE,
        }),
      'SCHEDULE_INTERVAL_TOO_SHORT',
    )
  })
})

describe('nextDueAt', () => {
  const base = { id: 's1', prompt: 'p', createdAt: T0, dispatches: 1 }
  it('every: counts from the latest firing, keeping the phase and skipping missed runs', () => {
    const every = { ...base, trigger: { kind: 'every' as const, intervalMs: 10 * MINUTE } }
    expect(nextDueAt({ ...every, dispatches: 0 })).toBe(T0 + 10 * MINUTE)
    expect(
      nextDueAt({ ...every, lastDispatch: { dueAt: T0 + 10 * MINUTE, firedAt: T0 + 10 * MINUTE } }),
    ).toBe(T0 + 20 * MINUTE)
    // fired 57 minutes late: the next run is the first on the grid after the firing
    expect(
      nextDueAt({ ...every, lastDispatch: { dueAt: T0 + 10 * MINUTE, firedAt: T0 + 67 * MINUTE } }),
    ).toBe(T0 + 70 * MINUTE)
  })

  it('cron: the first cron time after the latest firing, in its time zone', () => {
    const cron = {
      ...base,
      trigger: { kind: 'cron' as const, expression: '0 9 * * 1-5', timezone: 'Europe/Paris' },
    }
    // T0 is Monday 08:00 UTC = 09:00 Paris: strictly after it comes Tuesday 09:00 Paris
    expect(nextDueAt({ ...cron, dispatches: 0 })).toBe(Date.UTC(2026, 0, 6, 8))
    const friday = Date.UTC(2026, 0, 9, 8)
    expect(nextDueAt({ ...cron, lastDispatch: { dueAt: friday, firedAt: friday } })).toBe(
      Date.UTC(2026, 0, 12, 8),
    )
  })

  it('one-shots: due once, never after their dispatch', () => {
    const after = { ...base, dispatches: 0, trigger: { kind: 'after' as const, delayMs: 5 * MINUTE } }
    expect(nextDueAt(after)).toBe(T0 + 5 * MINUTE)
    expect(nextDueAt({ ...after, lastDispatch: { dueAt: T0, firedAt: T0 } })).toBeNull()
  })
})

/** A create op; `expiresAt: undefined` in `extra` drops the expiry (plain JSON has no undefined). */
const create = (id: string, extra: Partial<Extract<ScheduleChange, { op: 'create' }>> = {}): ScheduleChange =>
  JSON.parse(
    JSON.stringify({
      v: 1,
      op: 'create',
      id,
      prompt: `prompt ${id}`,
      trigger: { kind: 'every', intervalMs: HOUR },
      createdAt: T0,
      expiresAt: T0 + 7 * DAY,
      ...extra,
    }),
  ) as ScheduleChange
const del = (id: string): ScheduleChange => ({ v: 1, op: 'delete', id, reason: 'deleted' })
const dispatch = (id: string, at = T0 + HOUR): ScheduleChange => ({
  v: 1,
  op: 'dispatch',
  id,
  dueAt: at,
  firedAt: at,
})

/** A stored log holding these schedule changes. */
function logOf(changes: ScheduleChange[]): unknown[] {
  return changes.map((data, seq) => ({ type: 'schedule/change', seq, time: T0, data }))
}

describe('transition stream validation on load', () => {
  const invalid: Array<[string, ScheduleChange[], ScheduleStreamErrorCode, number]> = [
    ['a duplicate id', [create('s1'), create('s1')], 'SCHEDULE_STREAM_DUPLICATE_ID', 1],
    [
      'an id reused after deletion',
      [create('s1'), del('s1'), create('s1')],
      'SCHEDULE_STREAM_DUPLICATE_ID',
      2,
    ],
    ['a dispatch of an unknown schedule', [create('s1'), dispatch('s2')], 'SCHEDULE_STREAM_UNKNOWN_ID', 1],
    ['a delete of an unknown schedule', [del('s9')], 'SCHEDULE_STREAM_UNKNOWN_ID', 0],
    [
      'a dispatch of a deleted schedule',
      [create('s1'), del('s1'), dispatch('s1')],
      'SCHEDULE_STREAM_ENDED_ID',
      2,
    ],
    ['a second delete', [create('s1'), del('s1'), del('s1')], 'SCHEDULE_STREAM_ENDED_ID', 2],
    [
      'a second dispatch of a one-shot',
      [
        create('s1', { trigger: { kind: 'after', delayMs: HOUR }, expiresAt: undefined }),
        dispatch('s1'),
        dispatch('s1'),
      ],
      'SCHEDULE_STREAM_ENDED_ID',
      2,
    ],
  ]

  it.each(invalid)('refuses %s when the log is loaded, naming the seq', (_name, changes, code, seq) => {
    // The invariant fold registered with the events runs on load: the session is refused
    // before any projection is read.
    let error: unknown
    try {
      Session.create('bad', {}, logOf(changes))
    } catch (e) {
      error = e
    }
    expect(error).toMatchObject({ code: 'EVENT_INVARIANT_VIOLATED', details: { seq, invariantCode: code } })
    // the same transition is refused live, and the refused append changes nothing
    const live = Session.create('live', {}, logOf(changes.slice(0, -1)))
    expect(() => live.append('schedule/change', changes.at(-1)!)).toThrow(
      expect.objectContaining({ code: 'EVENT_INVARIANT_VIOLATED' }),
    )
    expect(live.nextSeq).toBe(changes.length - 1)
    // the projection is the same fold: over the raw stream it refuses with the schedule's code
    let book = scheduleProjection.init()
    expectCode(() => {
      for (const [i, data] of changes.entries())
        book = scheduleProjection.apply(book, { type: 'schedule/change', seq: i, time: T0, data } as never)
    }, code)
  })

  it('refuses an operation of an unknown format version at load (schema level)', () => {
    const log = logOf([create('s1')]) as Array<{ data: { v: number } }>
    log[0]!.data.v = 2
    expect(() => Session.create('v2', {}, log)).toThrowError(
      expect.objectContaining({ code: 'EVENT_DATA_INVALID' }),
    )
  })

  it('accepts a valid stream and folds it', () => {
    const session = Session.create('ok', {}, logOf([create('s1'), create('s2'), dispatch('s1'), del('s2')]))
    const book = session.project(scheduleProjection)
    expect([...book.live.keys()]).toEqual(['s1'])
    expect(book.live.get('s1')).toMatchObject({ dispatches: 1, lastDispatch: { dueAt: T0 + HOUR } })
    expect(book.ended.get('s2')).toBe('deleted')
    expect(book.created).toBe(2)
  })
})

describe('property: fork and replay', () => {
  /** A generated op: interpreted against the current fold so that the sequence stays valid. */
  const op = fc.oneof(
    fc.record({ kind: fc.constant('create' as const), oneShot: fc.boolean() }),
    fc.record({ kind: fc.constantFrom('delete' as const, 'dispatch' as const), pick: fc.nat() }),
  )

  it('any valid op sequence projects the same after a reload, a fork, and a fork-then-continue', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 30 }), fc.nat(), (generated, cutSeed) => {
        const ops = [{ kind: 'create' as const, oneShot: false }, ...generated]
        const { session } = harness()
        const changes: ScheduleChange[] = []
        let created = 0
        for (const o of ops) {
          const live = [...session.project(scheduleProjection).live.keys()]
          let change: ScheduleChange
          if (o.kind === 'create') {
            created++
            change = o.oneShot
              ? create(`s${created}`, { trigger: { kind: 'after', delayMs: MINUTE }, expiresAt: undefined })
              : create(`s${created}`)
          } else {
            if (live.length === 0) continue
            const id = live[o.pick % live.length]!
            change = o.kind === 'delete' ? del(id) : dispatch(id, T0 + changes.length * MINUTE)
          }
          changes.push(change)
          session.append('schedule/change', change)
        }
        const fold = session.project(scheduleProjection)
        const reloaded = Session.create('again', {}, stored(session))
        expect(reloaded.project(scheduleProjection)).toEqual(fold)
        expect(session.fork('child').project(scheduleProjection)).toEqual(fold)
        // cut anywhere, then let the child replay the rest of the parent's changes itself
        const cut = cutSeed % session.events.length
        const child = session.fork('child2', cut)
        for (const change of changes.slice(cut + 1)) child.append('schedule/change', change)
        expect(child.project(scheduleProjection)).toEqual(fold)
      }),
      { numRuns: 200 },
    )
  })
})
