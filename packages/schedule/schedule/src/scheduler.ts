import type { Clock } from '@keel/agent'
import { elide, errorMessage } from '@keel/base'
import type { UserMessage } from '@keel/llm'
import type { Session } from '@keel/session'
import { type LostFiring, lostFirings, scheduleSource } from './lost.js'
import {
  describeTrigger,
  formatDuration,
  isOneShot,
  missedRuns,
  nextDueAt,
  resolveTrigger,
  type Schedule,
  type ScheduleBook,
  ScheduleError,
  type ScheduleRequest,
  type ScheduleRules,
  scheduleProjection,
} from './schedules.js'

/** The longest delay a timer can be armed for (setTimeout's limit); longer waits re-arm. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** What a {@link Scheduler} works with. */
export interface SchedulerOptions extends ScheduleRules {
  /** The session whose schedules this is; its log is the only state. */
  session: Session
  /** Time and timers; a fake clock makes tests exact. */
  clock: Clock
  /**
   * Queues a fired schedule's message as a new turn (the agent's `enqueue`). It must only
   * queue — the message reaches the log later, when its turn starts — and it throws when
   * it refuses (the agent is closing): the firing is then not recorded and fires on the next
   * start. The `dispatch` is appended right after it returns, in the same step, so it
   * precedes the message in the log, and the agent's flush before each model call makes it
   * durable before the model can see the message.
   */
  deliver(message: UserMessage, source: string): void
  /** Tells the user something happened (a schedule fired, expired, was lost, or could not deliver). */
  notify?(kind: string, text: string): void
  /** Firings later than this (ms) say so in the delivered message. */
  lateNoteAfterMs: number
  /** How many schedules may be live at once. */
  maxLive: number
}

/**
 * Fires one session's schedules. The schedules themselves are the fold of the log
 * ({@link scheduleProjection}); the scheduler only holds a timer armed for the earliest
 * due time, re-armed whenever a `schedule/change` is appended.
 *
 * A firing delivers (queues the message) and appends `dispatch` in one step: a delivery
 * the host refuses (it is closing) records nothing and stops the scheduler, so the
 * schedule fires on the next start; a crash after the dispatch but before the queued turn
 * reached the log loses that delivery but never repeats it, and the next `start` records
 * a `lost` transition for it and says so through `notify`. On `start` (a new, resumed or
 * forked session) whatever came due while no scheduler ran fires at once: a one-shot
 * once, with a note saying how late; a recurring schedule once, its other missed runs
 * skipped. Recurring schedules past their `expiresAt` are deleted with reason `expired`
 * instead of firing.
 */
export class Scheduler {
  readonly #options: SchedulerOptions
  #timer: unknown = null
  #running = false
  #unsubscribe: (() => void) | null = null

  constructor(options: SchedulerOptions) {
    this.#options = options
  }

  /** The fold of the log. Throws `ScheduleStreamError` when the stored stream is invalid. */
  get book(): ScheduleBook {
    return this.#options.session.project(scheduleProjection)
  }

  /** The live schedules, in creation order. */
  get schedules(): Schedule[] {
    return [...this.book.live.values()]
  }

  /**
   * Validates the stored stream (throwing `ScheduleStreamError` when it is invalid), records
   * a `lost` transition for every firing a stopped process dispatched but never delivered
   * (and tells the user), and arms the timer. What is already overdue fires from a
   * zero-delay timer, never inside `start`, so the host is fully set up before anything is
   * delivered. Idempotent.
   */
  start(): void {
    if (this.#running) return
    void this.book
    this.#reportLost(lostFirings(this.#options.session.events))
    this.#running = true
    this.#unsubscribe = this.#options.session.subscribe((event) => {
      if (event.type === 'schedule/change') this.#arm()
    })
    this.#arm()
  }

  /** Disarms the timer: nothing is dispatched after it. Idempotent. */
  stop(): void {
    this.#running = false
    this.#unsubscribe?.()
    this.#unsubscribe = null
    this.#disarm()
  }

  /**
   * Resolves once every firing started so far has been delivered (or refused). Delivery is
   * synchronous with the firing, so this is already the case; kept for callers that wait.
   */
  settled(): Promise<void> {
    return Promise.resolve()
  }

  /** Checks a request, appends its `create`, and returns the new schedule. Throws {@link ScheduleError}. */
  create(request: ScheduleRequest): Schedule {
    const { session, clock, maxLive } = this.#options
    const book = this.book
    if (book.live.size >= maxLive) {
      throw new ScheduleError(
        'SCHEDULE_LIMIT_REACHED',
        `this session already has ${book.live.size} live schedules (the maximum); delete one with schedule_delete first`,
        { live: book.live.size, max: maxLive },
      )
    }
    const now = clock.now()
    const { trigger, expiresAt } = resolveTrigger(request, now, this.#options)
    let n = book.created + 1
    while (book.live.has(`s${n}`) || book.ended.has(`s${n}`)) n++ // ids written by another writer
    const id = `s${n}`
    session.append('schedule/change', {
      v: 1,
      op: 'create',
      id,
      prompt: request.prompt,
      trigger,
      createdAt: now,
      ...(expiresAt === undefined ? {} : { expiresAt }),
    })
    return this.book.live.get(id)!
  }

  /** Appends a `delete` for a live schedule and returns it. Throws `SCHEDULE_NOT_FOUND`. */
  delete(id: string): Schedule {
    const book = this.book
    const schedule = book.live.get(id)
    if (!schedule) {
      const ended = book.ended.get(id)
      throw new ScheduleError(
        'SCHEDULE_NOT_FOUND',
        ended
          ? `schedule '${id}' is no longer live (it ${ended === 'finished' ? 'already fired' : `was ${ended}`})`
          : `there is no schedule '${id}'; schedule_list shows the live ones`,
        { id, ...(ended ? { ended } : {}) },
      )
    }
    this.#options.session.append('schedule/change', { v: 1, op: 'delete', id, reason: 'deleted' })
    return schedule
  }

  /** When `schedule` fires next (Unix ms), or null when it will not (finished, or expiring first). */
  nextRunAt(schedule: Schedule): number | null {
    const due = nextDueAt(schedule)
    if (due === null || (schedule.expiresAt !== undefined && due >= schedule.expiresAt)) return null
    return due
  }

  #tick(): void {
    if (!this.#running) return
    this.#disarm()
    const { session, clock, deliver, notify } = this.#options
    const now = clock.now()
    for (const schedule of this.book.live.values()) {
      if (schedule.expiresAt !== undefined && now >= schedule.expiresAt) {
        session.append('schedule/change', { v: 1, op: 'delete', id: schedule.id, reason: 'expired' })
        notify?.(
          'schedule-expired',
          `Schedule ${schedule.id} (${describeTrigger(schedule.trigger)}) expired.`,
        )
        continue
      }
      const dueAt = nextDueAt(schedule)
      if (dueAt === null || dueAt > now) continue
      const text = `${schedule.prompt}\n\n${this.#note(schedule, dueAt, now)}`
      try {
        deliver({ role: 'user', content: [{ type: 'text', text }] }, scheduleSource(schedule.id))
      } catch (error) {
        // Refused (the agent is closing): nothing is recorded, so it fires on the next start;
        // and nothing more is dispatched here.
        this.stop()
        notify?.(
          'schedule-deferred',
          `Schedule ${schedule.id} (${describeTrigger(schedule.trigger)}) came due but could not be delivered (${errorMessage(error)}); it fires when the session is next opened.`,
        )
        return
      }
      session.append('schedule/change', { v: 1, op: 'dispatch', id: schedule.id, dueAt, firedAt: now })
      notify?.('schedule-fired', `Schedule ${schedule.id} (${describeTrigger(schedule.trigger)}) fired.`)
    }
    this.#arm()
  }

  /** Records and reports firings a stopped process dispatched but never delivered. */
  #reportLost(lost: readonly LostFiring[]): void {
    if (lost.length === 0) return
    const { session, notify } = this.#options
    const book = this.book
    const prompts = createdPrompts(session.events)
    for (const firing of lost) {
      session.append('schedule/change', {
        v: 1,
        op: 'lost',
        id: firing.id,
        dueAt: firing.dueAt,
        firedAt: firing.firedAt,
      })
      const schedule = book.live.get(firing.id)
      const next = schedule ? this.nextRunAt(schedule) : null
      notify?.(
        'schedule-lost',
        `Schedule ${firing.id} (${JSON.stringify(elide(schedule?.prompt ?? prompts.get(firing.id) ?? '', 120))}) fired at ${new Date(firing.firedAt).toISOString()} but its message was never delivered: the process stopped before its turn started (a firing is delivered at most once).${
          schedule === undefined
            ? ' It will not fire again.'
            : next === null
              ? ''
              : ` It fires next at ${new Date(next).toISOString()}.`
        }`,
      )
    }
  }

  /** The line that tells the model where the message came from, and how late it is. */
  #note(schedule: Schedule, dueAt: number, now: number): string {
    const late = now - dueAt
    const origin = `(Sent by schedule ${schedule.id}, ${describeTrigger(schedule.trigger)}.`
    if (late < this.#options.lateNoteAfterMs) return `${origin})`
    const lateness = ` It was due at ${new Date(dueAt).toISOString()} and is delivered ${formatDuration(late)} late`
    if (isOneShot(schedule.trigger)) return `${origin}${lateness}.)`
    const skipped = missedRuns(schedule, dueAt, now)
    return `${origin}${lateness}${skipped > 0 ? `; ${skipped} later missed run${skipped === 1 ? ' was' : 's were'} skipped` : ''}.)`
  }

  #arm(): void {
    if (!this.#running) return
    this.#disarm()
    const { clock } = this.#options
    let wake = Number.POSITIVE_INFINITY
    for (const schedule of this.book.live.values()) {
      const due = nextDueAt(schedule)
      if (due !== null) wake = Math.min(wake, due)
      if (schedule.expiresAt !== undefined) wake = Math.min(wake, schedule.expiresAt)
    }
    if (wake === Number.POSITIVE_INFINITY) return
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, wake - clock.now()))
    this.#timer = clock.setTimeout(() => {
      this.#timer = null
      this.#tick()
    }, delay)
  }

  #disarm(): void {
    if (this.#timer !== null) this.#options.clock.clearTimeout(this.#timer)
    this.#timer = null
  }
}

/** The prompt of every schedule ever created in `events` (ended ones included). */
function createdPrompts(events: Iterable<{ type: string; data: unknown }>): Map<string, string> {
  const prompts = new Map<string, string>()
  for (const event of events) {
    if (event.type !== 'schedule/change') continue
    const change = event.data as { op: string; id: string; prompt?: string }
    if (change.op === 'create' && change.prompt !== undefined) prompts.set(change.id, change.prompt)
  }
  return prompts
}
