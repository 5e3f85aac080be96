import { registerEvents } from '@keel/session'
import { z } from 'zod'

/**
 * When a schedule fires, normalized at creation so replay never depends on the machine's
 * clock or time zone.
 * - `after`: once, `delayMs` after the schedule was created.
 * - `at`: once, at the instant `at` (Unix ms).
 * - `every`: repeatedly, every `intervalMs` from creation.
 * - `cron`: repeatedly, at the times a 5-field cron `expression` names in `timezone`
 *   (an IANA name, resolved at creation when none was given).
 */
export type ScheduleTrigger =
  | { kind: 'after'; delayMs: number }
  | { kind: 'at'; at: number }
  | { kind: 'every'; intervalMs: number }
  | { kind: 'cron'; expression: string; timezone: string }

/** Why a schedule ended before running out: removed by the model or the user, or expired. */
export type ScheduleDeleteReason = 'deleted' | 'expired'

/**
 * One transition of the schedules of a session. `v` is the operation format version, so
 * the shape of an operation can evolve without guessing: a reader refuses versions it does
 * not know.
 * - `create`: a new schedule. Ids are never reused in a session, even after deletion.
 *   `expiresAt` (recurring schedules only) is when it stops firing and is deleted.
 * - `delete`: the schedule stops; nothing fires for it afterwards.
 * - `dispatch`: the schedule fired for its due time `dueAt`, at `firedAt`. Written and
 *   made durable before the message is delivered, so a crash never delivers twice; a
 *   one-shot schedule is finished by its dispatch.
 */
export type ScheduleChange =
  | {
      v: 1
      op: 'create'
      id: string
      /** The message delivered, as a user message, each time the schedule fires. */
      prompt: string
      trigger: ScheduleTrigger
      /** When the schedule was created, Unix ms; `after` and `every` count from it. */
      createdAt: number
      expiresAt?: number
    }
  | { v: 1; op: 'delete'; id: string; reason: ScheduleDeleteReason }
  | { v: 1; op: 'dispatch'; id: string; dueAt: number; firedAt: number }

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * One validated transition of the session's schedules (create, delete, dispatch).
     * The live schedules are the fold of these events; the whole stream is checked when a
     * session is loaded (no duplicate ids, no dispatch or delete of an unknown, deleted or
     * finished schedule) and an invalid stream is refused rather than guessed at.
     */
    'schedule/change': ScheduleChange
  }
}

const time = z.number().int().nonnegative()
const id = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/)

/** Runtime schema of {@link ScheduleTrigger}. */
export const scheduleTriggerSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('after'), delayMs: z.number().int().positive() }),
  z.strictObject({ kind: z.literal('at'), at: time }),
  z.strictObject({ kind: z.literal('every'), intervalMs: z.number().int().positive() }),
  z.strictObject({ kind: z.literal('cron'), expression: z.string().min(1), timezone: z.string().min(1) }),
])

/** Runtime schema of {@link ScheduleChange}. */
export const scheduleChangeSchema = z.discriminatedUnion('op', [
  z.strictObject({
    v: z.literal(1),
    op: z.literal('create'),
    id,
    prompt: z.string().min(1),
    trigger: scheduleTriggerSchema,
    createdAt: time,
    expiresAt: time.optional(),
  }),
  z.strictObject({ v: z.literal(1), op: z.literal('delete'), id, reason: z.enum(['deleted', 'expired']) }),
  z.strictObject({ v: z.literal(1), op: z.literal('dispatch'), id, dueAt: time, firedAt: time }),
])

registerEvents('@keel/schedule', { 'schedule/change': scheduleChangeSchema })
