import { errorMessage, KeelError } from '@keel/base'
import { type Projection, registerProjection } from '@keel/session'
import { Cron } from 'croner'
import { bookCheckpoint } from './book-checkpoint.js'
import type { ScheduleChange, ScheduleTrigger } from './events.js'

/** One live schedule, as folded from its `schedule/change` events. */
export interface Schedule {
  readonly id: string
  readonly prompt: string
  readonly trigger: ScheduleTrigger
  readonly createdAt: number
  /** Recurring schedules only: when they stop firing. */
  readonly expiresAt?: number
  /** How many times it fired. */
  readonly dispatches: number
  /** The latest firing: the due time it was for, and when it happened. */
  readonly lastDispatch?: { readonly dueAt: number; readonly firedAt: number }
}

/** How a schedule that is no longer live ended. */
export type ScheduleEnd = 'deleted' | 'expired' | 'finished'

/** The fold of a session's `schedule/change` stream. */
export interface ScheduleBook {
  /** Live schedules by id, in creation order. */
  readonly live: ReadonlyMap<string, Schedule>
  /** Every id that was live once and ended, with how (ids are never reused). */
  readonly ended: ReadonlyMap<string, ScheduleEnd>
  /** How many schedules were ever created; new ids count on from it. */
  readonly created: number
}

/** Why a stored `schedule/change` stream was refused. */
export type ScheduleStreamErrorCode =
  /** A `create` reuses an id that was already created. */
  | 'SCHEDULE_STREAM_DUPLICATE_ID'
  /** A `delete`, `dispatch` or `lost` names an id that was never created. */
  | 'SCHEDULE_STREAM_UNKNOWN_ID'
  /** A `delete` or `dispatch` names a schedule that was deleted, expired or finished. */
  | 'SCHEDULE_STREAM_ENDED_ID'

/**
 * The log holds a schedule transition that cannot follow the ones before it. Loading
 * refuses the stream instead of guessing what was meant; `details` names the `seq`, the
 * `id` and the `op`.
 */
export class ScheduleStreamError extends KeelError<ScheduleStreamErrorCode> {}

/**
 * The live schedules: a strict fold of `schedule/change` events. `apply` throws
 * {@link ScheduleStreamError} at the first invalid transition, so `session.project()`
 * refuses an invalid stream every time it is asked, on load and after.
 */
export const scheduleProjection: Projection<ScheduleBook> = registerProjection<ScheduleBook>({
  name: '@keel/schedule/book',
  init: () => ({ live: new Map(), ended: new Map(), created: 0 }),
  apply: (book, event) =>
    event.type === 'schedule/change' ? applyChange(book, event.data, event.seq) : book,
  checkpoint: bookCheckpoint(),
})

/** One step of the schedule fold; throws {@link ScheduleStreamError} on an invalid transition. */
export function applyChange(book: ScheduleBook, change: ScheduleChange, seq: number): ScheduleBook {
  const { id } = change
  if (change.op === 'create') {
    if (book.live.has(id) || book.ended.has(id)) {
      throw new ScheduleStreamError(
        'SCHEDULE_STREAM_DUPLICATE_ID',
        `schedule/change at seq ${seq} creates schedule '${id}', which was already created; the log is inconsistent (edited or merged by hand?) and is refused`,
        { seq, id, op: change.op },
      )
    }
    const schedule: Schedule = {
      id,
      prompt: change.prompt,
      trigger: change.trigger,
      createdAt: change.createdAt,
      ...(change.expiresAt === undefined ? {} : { expiresAt: change.expiresAt }),
      dispatches: 0,
    }
    return { ...book, live: new Map(book.live).set(id, schedule), created: book.created + 1 }
  }
  if (change.op === 'lost') {
    // a report about an earlier dispatch: the schedule may have ended since (a one-shot did)
    if (book.live.has(id) || book.ended.has(id)) return book
    throw new ScheduleStreamError(
      'SCHEDULE_STREAM_UNKNOWN_ID',
      `schedule/change at seq ${seq} reports a lost firing of schedule '${id}', which was never created; the log is inconsistent and is refused`,
      { seq, id, op: change.op },
    )
  }
  const schedule = book.live.get(id)
  if (!schedule) {
    const ended = book.ended.get(id)
    throw new ScheduleStreamError(
      ended ? 'SCHEDULE_STREAM_ENDED_ID' : 'SCHEDULE_STREAM_UNKNOWN_ID',
      `schedule/change at seq ${seq} ${change.op === 'delete' ? 'deletes' : 'dispatches'} schedule '${id}', which ${ended ? `was already ${ended}` : 'was never created'}; the log is inconsistent and is refused`,
      { seq, id, op: change.op, ...(ended ? { ended } : {}) },
    )
  }
  const live = new Map(book.live)
  if (change.op === 'delete') {
    live.delete(id)
    return { ...book, live, ended: new Map(book.ended).set(id, change.reason) }
  }
  if (isOneShot(schedule.trigger)) {
    live.delete(id)
    return { ...book, live, ended: new Map(book.ended).set(id, 'finished') }
  }
  const lastDispatch = { dueAt: change.dueAt, firedAt: change.firedAt }
  live.set(id, { ...schedule, dispatches: schedule.dispatches + 1, lastDispatch })
  return { ...book, live }
}

/** Whether the trigger fires once (`after`, `at`) rather than repeatedly (`every`, `cron`). */
export function isOneShot(trigger: ScheduleTrigger): boolean {
  return trigger.kind === 'after' || trigger.kind === 'at'
}

const crons = new Map<string, Cron>()

/** A parsed cron (cached); throws croner's own error on a bad expression or time zone. */
export function parseCron(expression: string, timezone: string): Cron {
  const key = `${timezone} ${expression}`
  let cron = crons.get(key)
  if (!cron) {
    cron = new Cron(expression, { mode: '5-part', timezone, paused: true })
    if (crons.size >= 256) crons.clear()
    crons.set(key, cron)
  }
  return cron
}

/** The first cron time strictly after `after` (Unix ms), or null when there is none. */
export function nextCronTime(expression: string, timezone: string, after: number): number | null {
  return parseCron(expression, timezone).nextRun(new Date(after))?.getTime() ?? null
}

/**
 * When the schedule is next due (Unix ms), or null when it never fires again. Recurring
 * schedules count from their latest firing, not from their latest due time: runs missed
 * while the session was not running are skipped, never replayed.
 */
export function nextDueAt(schedule: Schedule): number | null {
  const { trigger, createdAt, lastDispatch } = schedule
  switch (trigger.kind) {
    case 'after':
      return lastDispatch ? null : createdAt + trigger.delayMs
    case 'at':
      return lastDispatch ? null : trigger.at
    case 'every': {
      if (!lastDispatch) return createdAt + trigger.intervalMs
      const periods = Math.floor((lastDispatch.firedAt - createdAt) / trigger.intervalMs) + 1
      return createdAt + periods * trigger.intervalMs
    }
    case 'cron':
      return nextCronTime(trigger.expression, trigger.timezone, lastDispatch?.firedAt ?? createdAt)
  }
}

/**
 * How many due times of a recurring schedule fall in `(dueAt, now]`: the runs a late
 * firing at `now` stands in for. Counts at most `cap`.
 */
export function missedRuns(schedule: Schedule, dueAt: number, now: number, cap = 10_000): number {
  const { trigger } = schedule
  if (trigger.kind === 'every') return Math.min(cap, Math.floor((now - dueAt) / trigger.intervalMs))
  if (trigger.kind !== 'cron') return 0
  let count = 0
  let at: number | null = dueAt
  while (count < cap) {
    at = nextCronTime(trigger.expression, trigger.timezone, at)
    if (at === null || at > now) break
    count++
  }
  return count
}

/** The kinds of schedule the model can ask for. */
export type ScheduleKind = ScheduleTrigger['kind']

/**
 * A schedule as asked for, before it is checked. `when` reads by `kind`: a duration for
 * `after` and `every` (`90s`, `15m`, `2h`, `1h30m`, `1d`), an ISO 8601 time with an offset
 * for `at` (`2026-12-01T09:00:00+01:00`), a 5-field cron expression for `cron`.
 */
export interface ScheduleRequest {
  kind: ScheduleKind
  when: string
  prompt: string
  /** IANA time zone of a `cron` expression. */
  timezone?: string
}

/** What a request is checked against. */
export interface ScheduleRules {
  /** Shortest allowed interval of a recurring schedule, ms. */
  minIntervalMs: number
  /** How long a recurring schedule lives, ms. */
  expireAfterMs: number
  /** Time zone of cron expressions that name none. */
  defaultTimezone: string
}

/** Why a schedule request was refused. The model gets the code and can fix its next call. */
export type ScheduleErrorCode =
  /** The prompt is empty. */
  | 'SCHEDULE_PROMPT_EMPTY'
  /** `when` is not a duration like `15m` or `1h30m`. */
  | 'SCHEDULE_DURATION_INVALID'
  /** `when` is not an ISO 8601 time with a date, a time and an offset. */
  | 'SCHEDULE_TIME_INVALID'
  /** An `at` time that has already passed. */
  | 'SCHEDULE_TIME_IN_PAST'
  /** A recurring schedule would fire more often than the configured minimum allows. */
  | 'SCHEDULE_INTERVAL_TOO_SHORT'
  /** The cron expression does not parse (5 fields: minute hour day-of-month month day-of-week). */
  | 'SCHEDULE_CRON_INVALID'
  /** The cron expression parses but names no future time (e.g. 30 February). */
  | 'SCHEDULE_CRON_NEVER_FIRES'
  /** The time zone is not an IANA name this runtime knows. */
  | 'SCHEDULE_TIMEZONE_INVALID'
  /** No live schedule has this id. */
  | 'SCHEDULE_NOT_FOUND'
  /** The session already has the configured maximum of live schedules. */
  | 'SCHEDULE_LIMIT_REACHED'

/** A refused schedule request or operation; `details` holds the offending value. */
export class ScheduleError extends KeelError<ScheduleErrorCode> {}

const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::\d{2}(?:\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/

/**
 * Parses an ISO 8601 time with a date, a time and an offset into Unix ms; null when it is
 * not one or names a day that does not exist (`Date.parse` would roll 31 February over).
 */
function parseIsoTime(text: string): number | null {
  const match = ISO_TIME.exec(text)
  if (!match) return null
  const at = Date.parse(text)
  if (Number.isNaN(at)) return null
  const [, year, month, day, hour, minute, offset] = match
  const offsetMs =
    offset === 'Z'
      ? 0
      : (offset!.startsWith('-') ? -1 : 1) *
        (Number(offset!.slice(1, 3)) * 60 + Number(offset!.slice(4))) *
        60_000
  const local = new Date(at + offsetMs)
  const same =
    local.getUTCFullYear() === Number(year) &&
    local.getUTCMonth() + 1 === Number(month) &&
    local.getUTCDate() === Number(day) &&
    local.getUTCHours() === Number(hour) &&
    local.getUTCMinutes() === Number(minute)
  return same ? at : null
}

/** Parses a duration (`90s`, `15m`, `2h`, `1h30m`, `1d`) into ms; throws `SCHEDULE_DURATION_INVALID`. */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim())
  const [days, hours, minutes, seconds] = (match?.slice(1) ?? []).map((part) => Number(part ?? 0))
  const ms = (((days ?? 0) * 24 + (hours ?? 0)) * 60 + (minutes ?? 0)) * 60_000 + (seconds ?? 0) * 1000
  if (!match || text.trim() === '' || ms <= 0) {
    throw new ScheduleError(
      'SCHEDULE_DURATION_INVALID',
      `'${text}' is not a duration; write whole units without spaces, largest first: 90s, 15m, 2h, 1h30m, 1d`,
      { when: text },
    )
  }
  return ms
}

function checkTimezone(timezone: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone })
    return timezone
  } catch {
    throw new ScheduleError(
      'SCHEDULE_TIMEZONE_INVALID',
      `'${timezone}' is not a known time zone; use an IANA name like 'Europe/Paris' or 'UTC'`,
      { timezone },
    )
  }
}

/**
 * Checks a request at `now` and turns it into the trigger (and, for recurring schedules,
 * the expiry) stored in the log. Throws {@link ScheduleError}.
 */
export function resolveTrigger(
  request: ScheduleRequest,
  now: number,
  rules: ScheduleRules,
): { trigger: ScheduleTrigger; expiresAt?: number } {
  if (request.prompt.trim() === '') {
    throw new ScheduleError(
      'SCHEDULE_PROMPT_EMPTY',
      'the prompt is empty; say what should be sent when the schedule fires',
      {},
    )
  }
  const when = request.when.trim()
  const expiresAt = now + rules.expireAfterMs
  switch (request.kind) {
    case 'after':
      return { trigger: { kind: 'after', delayMs: parseDuration(when) } }
    case 'at': {
      const at = parseIsoTime(when)
      if (at === null) {
        throw new ScheduleError(
          'SCHEDULE_TIME_INVALID',
          `'${request.when}' is not an ISO 8601 time with an offset; write e.g. 2026-12-01T09:00:00Z or 2026-12-01T09:00:00+01:00`,
          { when: request.when },
        )
      }
      if (at <= now) {
        throw new ScheduleError(
          'SCHEDULE_TIME_IN_PAST',
          `${request.when} has already passed (now is ${new Date(now).toISOString()}); pick a later time`,
          { when: request.when, now },
        )
      }
      return { trigger: { kind: 'at', at } }
    }
    case 'every': {
      const intervalMs = parseDuration(when)
      if (intervalMs < rules.minIntervalMs) throw tooShort(request.when, rules.minIntervalMs)
      return { trigger: { kind: 'every', intervalMs }, expiresAt }
    }
    case 'cron': {
      const timezone = checkTimezone(request.timezone ?? rules.defaultTimezone)
      let runs: Date[]
      try {
        runs = parseCron(when, timezone).nextRuns(6, new Date(now))
      } catch (error) {
        throw new ScheduleError(
          'SCHEDULE_CRON_INVALID',
          `'${request.when}' is not a cron expression (${errorMessage(error)}); use 5 fields: minute hour day-of-month month day-of-week, e.g. '0 9 * * 1-5'`,
          { when: request.when },
        )
      }
      if (runs.length === 0) {
        throw new ScheduleError(
          'SCHEDULE_CRON_NEVER_FIRES',
          `'${request.when}' never fires; check the day and month fields`,
          {
            when: request.when,
          },
        )
      }
      for (let i = 1; i < runs.length; i++) {
        if (runs[i]!.getTime() - runs[i - 1]!.getTime() < rules.minIntervalMs)
          throw tooShort(request.when, rules.minIntervalMs)
      }
      return { trigger: { kind: 'cron', expression: when, timezone }, expiresAt }
    }
  }
}

function tooShort(when: string, minIntervalMs: number): ScheduleError {
  return new ScheduleError(
    'SCHEDULE_INTERVAL_TOO_SHORT',
    `'${when}' fires more often than the minimum interval of ${formatDuration(minIntervalMs)}; use a longer interval`,
    { when, minIntervalMs },
  )
}

/** A duration for people: `45s`, `12m`, `3h 5m`, `2d 4h`. */
export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes}m`
  const hours = Math.floor(minutes / 60)
  if (hours < 24) return minutes % 60 ? `${hours}h ${minutes % 60}m` : `${hours}h`
  const days = Math.floor(hours / 24)
  return hours % 24 ? `${days}d ${hours % 24}h` : `${days}d`
}

/** The trigger in words: `after 15m`, `at 2026-12-01T08:00:00.000Z`, `every 1h`, `cron '0 9 * * 1-5' (Europe/Paris)`. */
export function describeTrigger(trigger: ScheduleTrigger): string {
  switch (trigger.kind) {
    case 'after':
      return `after ${formatDuration(trigger.delayMs)}`
    case 'at':
      return `at ${new Date(trigger.at).toISOString()}`
    case 'every':
      return `every ${formatDuration(trigger.intervalMs)}`
    case 'cron':
      return `cron '${trigger.expression}' (${trigger.timezone})`
  }
}
