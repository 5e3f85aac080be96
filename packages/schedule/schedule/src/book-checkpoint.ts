import type { JsonValue } from '@keel/base'
import type { FoldCheckpoint } from '@keel/session'
import type { Schedule, ScheduleBook, ScheduleEnd } from './schedules.js'

/** How a {@link ScheduleBook} is kept in a checkpoint (its maps as entries); the projection's and the invariant's. */
export function bookCheckpoint(): FoldCheckpoint<ScheduleBook> {
  return {
    version: 1,
    save: (book) =>
      ({ live: [...book.live], ended: [...book.ended], created: book.created }) as unknown as JsonValue,
    restore: (saved) => {
      const s = saved as unknown as {
        live: [string, Schedule][]
        ended: [string, ScheduleEnd][]
        created: number
      }
      return { live: new Map(s.live), ended: new Map(s.ended), created: s.created }
    },
  }
}
