import './events.generated.js'

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
  | {
      kind: 'after'
      /** @integer @minimum 1 */
      delayMs: number
    }
  | {
      kind: 'at'
      /** @integer @minimum 0 */
      at: number
    }
  | {
      kind: 'every'
      /** @integer @minimum 1 */
      intervalMs: number
    }
  | {
      kind: 'cron'
      /** @minLength 1 */
      expression: string
      /** @minLength 1 */
      timezone: string
    }

/** Why a schedule ended before running out: removed by the model or the user, or expired. */
export type ScheduleDeleteReason = 'deleted' | 'expired'

/**
 * One transition of the schedules of a session. `v` is the operation format version, so
 * the shape of an operation can evolve without guessing: a reader refuses versions it does
 * not know.
 * - `create`: a new schedule. Ids are never reused in a session, even after deletion.
 *   `expiresAt` (recurring schedules only) is when it stops firing and is deleted.
 * - `delete`: the schedule stops; nothing fires for it afterwards.
 * - `dispatch`: the schedule fired for its due time `dueAt`, at `firedAt`: its message was
 *   queued as a new turn in the same step, so the dispatch precedes the delivered message
 *   in the log and a crash never delivers twice; a one-shot schedule is finished by its
 *   dispatch. A firing the agent refuses (it is closing) is not dispatched: it fires on the
 *   next start.
 * - `lost`: a `dispatch` (its `dueAt` and `firedAt`) whose message never reached the log —
 *   the process stopped between the two. Written once, when the next start finds it, so
 *   the loss is reported once (delivery is at most once).
 */
export type ScheduleChange =
  | {
      v: 1
      op: 'create'
      /** @pattern ^[A-Za-z0-9_-]{1,64}$ */
      id: string
      /**
       * The message delivered, as a user message, each time the schedule fires.
       * @minLength 1
       */
      prompt: string
      trigger: ScheduleTrigger
      /**
       * When the schedule was created, Unix ms; `after` and `every` count from it.
       * @integer @minimum 0
       */
      createdAt: number
      /** @integer @minimum 0 */
      expiresAt?: number
    }
  | {
      v: 1
      op: 'delete'
      /** @pattern ^[A-Za-z0-9_-]{1,64}$ */
      id: string
      reason: ScheduleDeleteReason
    }
  | {
      v: 1
      op: 'dispatch'
      /** @pattern ^[A-Za-z0-9_-]{1,64}$ */
      id: string
      /** @integer @minimum 0 */
      dueAt: number
      /** @integer @minimum 0 */
      firedAt: number
    }
  | {
      v: 1
      op: 'lost'
      /** @pattern ^[A-Za-z0-9_-]{1,64}$ */
      id: string
      /** @integer @minimum 0 */
      dueAt: number
      /** @integer @minimum 0 */
      firedAt: number
    }

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * One validated transition of the session's schedules (create, delete, dispatch, lost).
     * The live schedules are the fold of these events; the whole stream is checked when a
     * session is loaded (no duplicate ids, no dispatch or delete of an unknown, deleted or
     * finished schedule) and an invalid stream is refused rather than guessed at.
     * @example {"v":1,"op":"create","id":"s1","prompt":"Check the build","trigger":{"kind":"every","intervalMs":3600000},"createdAt":1700000000000,"expiresAt":1700086400000}
     */
    'schedule/change': ScheduleChange
  }
}
