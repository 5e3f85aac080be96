import type { EventInvariant } from '@keel/session'
import { bookCheckpoint } from './book-checkpoint.js'
import type { ScheduleChange } from './events.js'
import { applyChange, type ScheduleBook, ScheduleStreamError, scheduleProjection } from './schedules.js'

/**
 * The schedule stream's invariant, checked on every append and whenever a session is loaded
 * (registered by the generated `events.generated.ts`): ids are never reused, and a delete or
 * dispatch names a live schedule. The same fold as {@link scheduleProjection}.
 */
export const invariant: EventInvariant<ScheduleBook> = {
  init: scheduleProjection.init,
  check(book, event) {
    try {
      return { ok: true, state: applyChange(book, event.data as ScheduleChange, event.seq) }
    } catch (error) {
      if (error instanceof ScheduleStreamError) return { ok: false, reason: error.message, code: error.code }
      throw error
    }
  },
  checkpoint: bookCheckpoint(),
}
