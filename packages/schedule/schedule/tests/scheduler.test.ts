import { Session } from '@keel/session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type ScheduleChange, scheduleProjection } from '../src/index.js'
import { DAY, FakeClock, HOUR, harness, MINUTE, stored, T0 } from './helpers.js'

/** The schedule/change ops of a session, as `op:id` strings. */
function ops(session: Session): string[] {
  return session.events
    .filter((e) => e.type === 'schedule/change')
    .map((e) => {
      const change = e.data as ScheduleChange
      return change.op === 'delete' ? `delete:${change.id}:${change.reason}` : `${change.op}:${change.id}`
    })
}

describe('firing each kind', () => {
  it('after: fires once, exactly when due, as a user message with source schedule/<id>', async () => {
    const h = harness()
    h.scheduler.start()
    h.scheduler.create({ kind: 'after', when: '15m', prompt: 'check the build' })
    await h.clock.advance(15 * MINUTE - 1)
    await h.scheduler.settled()
    expect(h.delivered).toEqual([])
    await h.clock.advance(1)
    await h.scheduler.settled()
    expect(h.delivered).toHaveLength(1)
    expect(h.delivered[0]).toMatchObject({ source: 'schedule/s1', at: T0 + 15 * MINUTE })
    expect(h.delivered[0]!.text).toMatch(/^check the build\n\n\(Sent by schedule s1, after 15m\.\)$/)
    expect(h.scheduler.schedules).toEqual([])
    expect(h.session.project(scheduleProjection).ended.get('s1')).toBe('finished')
    await h.clock.advance(DAY)
    await h.scheduler.settled()
    expect(h.delivered).toHaveLength(1)
    expect(h.clock.pending).toBe(0)
  })

  it('at: fires at the instant named', async () => {
    const h = harness()
    h.scheduler.start()
    h.scheduler.create({ kind: 'at', when: '2026-01-05T12:00:00+02:00', prompt: 'lunch' })
    await h.clock.advance(2 * HOUR)
    await h.scheduler.settled()
    expect(h.delivered.map((d) => d.at)).toEqual([Date.UTC(2026, 0, 5, 10)])
  })

  it('every: fires on its grid until deleted', async () => {
    const h = harness()
    h.scheduler.start()
    h.scheduler.create({ kind: 'every', when: '20m', prompt: 'poll' })
    await h.clock.advance(HOUR)
    await h.scheduler.settled()
    expect(h.delivered.map((d) => (d.at - T0) / MINUTE)).toEqual([20, 40, 60])
    h.scheduler.delete('s1')
    await h.clock.advance(HOUR)
    await h.scheduler.settled()
    expect(h.delivered).toHaveLength(3)
    expect(ops(h.session)).toEqual([
      'create:s1',
      'dispatch:s1',
      'dispatch:s1',
      'dispatch:s1',
      'delete:s1:deleted',
    ])
  })

  it('cron: fires at the times the expression names, in its time zone', async () => {
    const h = harness()
    h.scheduler.start()
    h.scheduler.create({ kind: 'cron', when: '30 9 * * 1-5', prompt: 'standup', timezone: 'Europe/Paris' })
    await h.clock.advance(7 * DAY - 1)
    await h.scheduler.settled()
    // Mon 5 Jan 09:30 Paris is 08:30 UTC: Mon..Fri, then nothing at the weekend
    expect(h.delivered.map((d) => new Date(d.at).toISOString())).toEqual([
      '2026-01-05T08:30:00.000Z',
      '2026-01-06T08:30:00.000Z',
      '2026-01-07T08:30:00.000Z',
      '2026-01-08T08:30:00.000Z',
      '2026-01-09T08:30:00.000Z',
    ])
  })

  it('a time beyond the longest timer delay is reached by re-arming, exactly on time', async () => {
    const h = harness()
    h.scheduler.start()
    h.scheduler.create({ kind: 'at', when: '2026-03-01T00:00:00Z', prompt: 'far away' })
    await h.clock.advance(60 * DAY)
    await h.scheduler.settled()
    expect(h.delivered.map((d) => new Date(d.at).toISOString())).toEqual(['2026-03-01T00:00:00.000Z'])
    expect(Math.max(...h.clock.requested)).toBeLessThanOrEqual(2 ** 31 - 1)
  })

  it('several schedules due at once fire together, in creation order', async () => {
    const h = harness()
    h.scheduler.start()
    h.scheduler.create({ kind: 'after', when: '10m', prompt: 'a' })
    h.scheduler.create({ kind: 'at', when: '2026-01-05T08:10:00Z', prompt: 'b' })
    await h.clock.advance(10 * MINUTE)
    await h.scheduler.settled()
    expect(h.delivered.map((d) => d.source)).toEqual(['schedule/s1', 'schedule/s2'])
  })

  it('never reuses an id, even one a different writer chose', () => {
    const h = harness()
    h.session.append('schedule/change', {
      v: 1,
      op: 'create',
      id: 's2',
      prompt: 'written elsewhere',
      trigger: { kind: 'after', delayMs: HOUR },
      createdAt: T0,
    })
    expect(h.scheduler.create({ kind: 'after', when: '1h', prompt: 'a' }).id).toBe('s3')
    expect(h.scheduler.create({ kind: 'after', when: '1h', prompt: 'b' }).id).toBe('s4')
    expect(h.scheduler.schedules.map((s) => s.id)).toEqual(['s2', 's3', 's4'])
  })

  it('refuses more live schedules than configured, and deleting an unknown one, by code', () => {
    const h = harness({ maxLive: 2 })
    h.scheduler.create({ kind: 'after', when: '10m', prompt: 'a' })
    h.scheduler.create({ kind: 'after', when: '10m', prompt: 'b' })
    expect(() => h.scheduler.create({ kind: 'after', when: '10m', prompt: 'c' })).toThrowError(
      expect.objectContaining({ code: 'SCHEDULE_LIMIT_REACHED' }),
    )
    expect(() => h.scheduler.delete('s9')).toThrowError(
      expect.objectContaining({ code: 'SCHEDULE_NOT_FOUND' }),
    )
    h.scheduler.delete('s1')
    expect(() => h.scheduler.delete('s1')).toThrowError(
      expect.objectContaining({ code: 'SCHEDULE_NOT_FOUND' }),
    )
  })
})

describe('delivery and dispatch in one step', () => {
  it('queues the message and records the dispatch together; the dispatch precedes the message in the log', async () => {
    const h = harness()
    h.scheduler.start()
    h.scheduler.create({ kind: 'after', when: '5m', prompt: 'ping' })
    await h.clock.advance(5 * MINUTE)
    expect(ops(h.session)).toEqual(['create:s1', 'dispatch:s1'])
    expect(h.delivered).toHaveLength(1)
    const dispatch = h.session.events.find((e) => e.type === 'schedule/change' && e.data.op === 'dispatch')!
    const message = h.session.events.find((e) => e.type === 'user/message')!
    expect(message.data.source).toBe('schedule/s1')
    expect(dispatch.seq).toBeLessThan(message.seq)
    expect(h.notices).toEqual(['schedule-fired: Schedule s1 (after 5m) fired.'])
  })

  it('a delivery the host refuses records nothing and stops the scheduler; it fires on the next start', async () => {
    const h = harness({
      deliver: () => {
        throw new Error('AGENT_CLOSED: this agent is closing')
      },
    })
    h.scheduler.start()
    h.scheduler.create({ kind: 'after', when: '5m', prompt: 'once' })
    h.scheduler.create({ kind: 'every', when: '5m', prompt: 'again' })
    await h.clock.advance(5 * MINUTE)
    expect(ops(h.session)).toEqual(['create:s1', 'create:s2'])
    expect(h.notices).toEqual([
      expect.stringMatching(/^schedule-deferred: Schedule s1 .*it fires when the session is next opened\.$/),
    ])
    await h.clock.advance(HOUR) // stopped: nothing more is tried
    expect(h.notices).toHaveLength(1)

    const clock = new FakeClock(T0 + 2 * HOUR)
    const session = Session.create('sched', {}, stored(h.session), { clock: () => clock.now() })
    const resumed = harness({ session, clock })
    resumed.scheduler.start()
    await clock.advance(0)
    expect(resumed.delivered.map((d) => d.source)).toEqual(['schedule/s1', 'schedule/s2'])
    expect(resumed.delivered[0]!.text).toContain('is delivered 1h 55m late')
  })

  it('a crash between dispatch and delivery never delivers twice; the next start records and reports the loss, once', async () => {
    const h = harness({ crashBeforeTurn: true })
    h.scheduler.start()
    h.scheduler.create({ kind: 'after', when: '5m', prompt: 'once' })
    h.scheduler.create({ kind: 'every', when: '5m', prompt: 'again' })
    await h.clock.advance(5 * MINUTE) // both dispatched, then the process "dies" before their turns
    h.scheduler.stop()

    // resume at the same instant from what the store kept (dispatches included)
    const clock = new FakeClock(T0 + 5 * MINUTE)
    const session = Session.create('sched', {}, stored(h.session), { clock: () => clock.now() })
    const resumed = harness({ session, clock })
    resumed.scheduler.start()
    expect(ops(session).slice(-2)).toEqual(['lost:s1', 'lost:s2'])
    expect(resumed.notices).toEqual([
      expect.stringMatching(
        /^schedule-lost: Schedule s1 \("once"\) fired at 2026-01-05T08:05:00.000Z but its message was never delivered.*It will not fire again\.$/,
      ),
      expect.stringMatching(
        /^schedule-lost: Schedule s2 \("again"\) fired at .* It fires next at 2026-01-05T08:10:00.000Z\.$/,
      ),
    ])
    await clock.advance(0)
    expect(resumed.delivered).toEqual([])
    expect(resumed.scheduler.schedules.map((s) => s.id)).toEqual(['s2'])
    await clock.advance(5 * MINUTE)
    expect(resumed.delivered.map((d) => `${d.source}@${(d.at - T0) / MINUTE}`)).toEqual(['schedule/s2@10'])
    resumed.scheduler.stop()

    // a later start has nothing more to report
    const again = harness({ session: Session.create('sched', {}, stored(session)), clock })
    again.scheduler.start()
    expect(again.notices).toEqual([])
  })
})

describe('resume', () => {
  /** Creates schedules at T0, stops the process at `stopAt`, and resumes at `resumeAt`. */
  async function downtime(create: (h: ReturnType<typeof harness>) => void, stopAt: number, resumeAt: number) {
    const before = harness()
    before.scheduler.start()
    create(before)
    await before.clock.advance(stopAt - T0)
    await before.scheduler.settled()
    before.scheduler.stop()
    const clock = new FakeClock(resumeAt)
    const session = Session.create('sched', {}, stored(before.session), { clock: () => clock.now() })
    const after = harness({ session, clock })
    after.scheduler.start()
    return { before, after }
  }

  it('a missed one-shot fires once on resume, saying how late it is', async () => {
    const { before, after } = await downtime(
      (h) => h.scheduler.create({ kind: 'after', when: '10m', prompt: 'stand up' }),
      T0 + MINUTE,
      T0 + 2 * HOUR,
    )
    expect(before.delivered).toEqual([])
    expect(after.delivered).toEqual([]) // never inside start()
    await after.clock.advance(0)
    await after.scheduler.settled()
    expect(after.delivered).toHaveLength(1)
    expect(after.delivered[0]!.text).toContain(
      'It was due at 2026-01-05T08:10:00.000Z and is delivered 1h 50m late',
    )
    await after.clock.advance(DAY)
    await after.scheduler.settled()
    expect(after.delivered).toHaveLength(1)
  })

  it('a recurring schedule catches up once, skipping the other missed runs, then keeps its grid', async () => {
    const { before, after } = await downtime(
      (h) => h.scheduler.create({ kind: 'every', when: '10m', prompt: 'poll' }),
      T0 + 15 * MINUTE,
      T0 + 75 * MINUTE,
    )
    expect(before.delivered.map((d) => (d.at - T0) / MINUTE)).toEqual([10])
    await after.clock.advance(0)
    await after.scheduler.settled()
    // due at 20, resumed at 75: one catch-up standing in for 20, 30, …, 70
    expect(after.delivered.map((d) => (d.at - T0) / MINUTE)).toEqual([75])
    expect(after.delivered[0]!.text).toContain('is delivered 55m late; 5 later missed runs were skipped')
    await after.clock.advance(30 * MINUTE)
    await after.scheduler.settled()
    expect(after.delivered.map((d) => (d.at - T0) / MINUTE)).toEqual([75, 80, 90, 100])
  })

  it('a cron schedule catches up once too', async () => {
    const { after } = await downtime(
      (h) => h.scheduler.create({ kind: 'cron', when: '0 * * * *', prompt: 'hourly' }),
      T0 + 30 * MINUTE,
      T0 + 4 * HOUR + 30 * MINUTE,
    )
    await after.clock.advance(0)
    await after.scheduler.settled()
    expect(after.delivered).toHaveLength(1)
    expect(after.delivered[0]!.text).toContain('3 later missed runs were skipped')
    await after.clock.advance(30 * MINUTE)
    await after.scheduler.settled()
    expect(after.delivered.map((d) => new Date(d.at).toISOString())).toEqual([
      '2026-01-05T12:30:00.000Z',
      '2026-01-05T13:00:00.000Z',
    ])
  })
})

describe('expiry', () => {
  it('a recurring schedule expires after the configured time and is deleted with reason expired', async () => {
    const h = harness({ expireAfterMs: 3 * HOUR })
    h.scheduler.start()
    h.scheduler.create({ kind: 'every', when: '1h', prompt: 'poll' })
    await h.clock.advance(10 * HOUR)
    await h.scheduler.settled()
    // runs at 1h and 2h; the 3h run falls on the expiry
    expect(h.delivered.map((d) => (d.at - T0) / HOUR)).toEqual([1, 2])
    expect(ops(h.session)).toEqual(['create:s1', 'dispatch:s1', 'dispatch:s1', 'delete:s1:expired'])
    expect(h.notices.some((n) => n.startsWith('schedule-expired:'))).toBe(true)
    expect(h.clock.pending).toBe(0)
  })

  it('defaults to 7 days in the plugin config', async () => {
    const { scheduleConfigSchema } = await import('../src/index.js')
    expect(scheduleConfigSchema.parse({}).expireAfterMs).toBe(7 * DAY)
  })

  it('a schedule that expired while no process ran is deleted on resume without firing', async () => {
    const h = harness({ expireAfterMs: 3 * HOUR })
    h.scheduler.start()
    h.scheduler.create({ kind: 'every', when: '1h', prompt: 'poll' })
    h.scheduler.stop()
    const clock = new FakeClock(T0 + 5 * HOUR)
    const session = Session.create('sched', {}, stored(h.session), { clock: () => clock.now() })
    const resumed = harness({ session, clock, expireAfterMs: 3 * HOUR })
    resumed.scheduler.start()
    await clock.advance(0)
    await resumed.scheduler.settled()
    expect(resumed.delivered).toEqual([])
    expect(ops(session)).toEqual(['create:s1', 'delete:s1:expired'])
  })
})

describe('fork', () => {
  it('the child sees the parent schedules as of the fork point and owns its own changes', async () => {
    const parent = harness()
    parent.scheduler.start()
    parent.scheduler.create({ kind: 'after', when: '1h', prompt: 'one-shot' })
    parent.scheduler.create({ kind: 'every', when: '30m', prompt: 'recurring' })
    const cut = parent.session.nextSeq - 1
    parent.scheduler.create({ kind: 'after', when: '2h', prompt: 'after the cut' })

    const child = harness({
      session: parent.session.fork('child', cut, { clock: () => parent.clock.now() }),
      clock: parent.clock,
    })
    child.scheduler.start()
    expect(child.scheduler.schedules.map((s) => s.id)).toEqual(['s1', 's2'])
    child.scheduler.delete('s1')
    const own = child.scheduler.create({ kind: 'after', when: '45m', prompt: 'child only' })
    expect(own.id).toBe('s3') // ids count on from the child's own log

    expect(parent.scheduler.schedules.map((s) => `${s.id}:${s.prompt}`)).toEqual([
      's1:one-shot',
      's2:recurring',
      's3:after the cut',
    ])
    await parent.clock.advance(2 * HOUR)
    await parent.scheduler.settled()
    await child.scheduler.settled()
    const at = (d: { at: number; source: string }) => `${d.source}@${(d.at - T0) / MINUTE}`
    expect(parent.delivered.map(at)).toEqual([
      'schedule/s2@30',
      'schedule/s1@60',
      'schedule/s2@60',
      'schedule/s2@90',
      'schedule/s2@120',
      'schedule/s3@120',
    ])
    expect(child.delivered.map(at)).toEqual([
      'schedule/s2@30',
      'schedule/s3@45',
      'schedule/s2@60',
      'schedule/s2@90',
      'schedule/s2@120',
    ])
    expect(child.delivered.find((d) => d.source === 'schedule/s3')!.text).toContain('child only')
  })
})

describe('property: restarts never repeat or invent a delivery', () => {
  const create = fc.record({
    do: fc.constant('create' as const),
    recurring: fc.boolean(),
    minutes: fc.integer({ min: 1, max: 90 }),
  })
  const remove = fc.record({ do: fc.constant('delete' as const), pick: fc.nat() })
  const advance = fc.record({
    do: fc.constant('advance' as const),
    minutes: fc.integer({ min: 0, max: 240 }),
  })
  const restart = fc.record({
    do: fc.constant('restart' as const),
    gapMinutes: fc.integer({ min: 0, max: 600 }),
  })
  const action = fc.oneof(
    { weight: 3, arbitrary: create },
    { weight: 1, arbitrary: remove },
    { weight: 3, arbitrary: advance },
    { weight: 2, arbitrary: restart },
  )

  it('every dispatch is delivered exactly once, never early, one-shots once, recurring at most one catch-up', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 3, maxLength: 25 }), async (actions) => {
        const deliveries: string[] = []
        let h = harness({ expireAfterMs: 6 * HOUR, deliver: (_m, source) => deliveries.push(source) })
        h.scheduler.start()
        for (const a of actions) {
          if (a.do === 'create') {
            const when = `${a.minutes}m`
            h.scheduler.create({ kind: a.recurring ? 'every' : 'after', when, prompt: 'p' })
          } else if (a.do === 'delete') {
            const live = h.scheduler.schedules
            if (live.length > 0) h.scheduler.delete(live[a.pick % live.length]!.id)
          } else if (a.do === 'advance') {
            await h.clock.advance(a.minutes * MINUTE)
            await h.scheduler.settled()
          } else {
            h.scheduler.stop()
            const clock = new FakeClock(h.clock.now() + a.gapMinutes * MINUTE)
            const session = Session.create('sched', {}, stored(h.session), { clock: () => clock.now() })
            h = harness({
              session,
              clock,
              expireAfterMs: 6 * HOUR,
              deliver: (_m, source) => deliveries.push(source),
            })
            h.scheduler.start()
          }
        }
        await h.clock.advance(0)
        await h.scheduler.settled()

        const changes = h.session.events
          .filter((e) => e.type === 'schedule/change')
          .map((e) => e.data as ScheduleChange)
        const dispatches = changes.filter((c) => c.op === 'dispatch')
        // exactly one delivery per dispatch, in the same order
        expect(deliveries).toEqual(dispatches.map((d) => `schedule/${d.id}`))
        for (const d of dispatches) expect(d.firedAt).toBeGreaterThanOrEqual(d.dueAt)
        const byId = new Map<string, Array<Extract<ScheduleChange, { op: 'dispatch' }>>>()
        for (const d of dispatches) byId.set(d.id, [...(byId.get(d.id) ?? []), d])
        for (const c of changes) {
          if (c.op !== 'create') continue
          const own = byId.get(c.id) ?? []
          if (c.trigger.kind === 'after') expect(own.length).toBeLessThanOrEqual(1)
          // a recurring schedule never fires for a due time at or before its previous firing
          for (let i = 1; i < own.length; i++) expect(own[i]!.dueAt).toBeGreaterThan(own[i - 1]!.firedAt)
        }
        // nothing overdue is left behind
        const now = h.clock.now()
        for (const s of h.scheduler.schedules)
          expect(h.scheduler.nextRunAt(s) ?? Number.POSITIVE_INFINITY).toBeGreaterThan(now)
      }),
      { numRuns: 120 },
    )
  })
})
