import type { SessionEvent } from '@keel/session'
import type { ScheduleChange } from './events.js'

/** A firing whose dispatch is in the log but whose message is not. */
export interface LostFiring {
  readonly id: string
  readonly dueAt: number
  readonly firedAt: number
  /** The seq of the `dispatch`. */
  readonly seq: number
}

/** The `source` a delivered schedule's `user/message` carries. */
export const scheduleSource = (id: string): string => `schedule/${id}`

/**
 * The dispatches of `events` that were never delivered and not yet reported. Per schedule,
 * the k-th `user/message` of source `schedule/<id>` is the delivery of its k-th `dispatch`
 * (counted, so the order of the two in the log does not matter) and every `lost` record
 * accounts for one more; the dispatches left over are the last ones, since each start
 * reports what the process before it left. A dispatch is written in the same step as its
 * message is queued, so this is what a process that stopped in between leaves. Pure; in
 * log order.
 */
export function lostFirings(events: Iterable<SessionEvent>): LostFiring[] {
  const dispatches = new Map<string, LostFiring[]>()
  const accounted = new Map<string, number>()
  const count = (id: string) => accounted.set(id, (accounted.get(id) ?? 0) + 1)
  for (const event of events) {
    if (event.type === 'schedule/change') {
      const change = event.data as ScheduleChange
      if (change.op === 'dispatch') {
        const firing = { id: change.id, dueAt: change.dueAt, firedAt: change.firedAt, seq: event.seq }
        const list = dispatches.get(change.id)
        if (list) list.push(firing)
        else dispatches.set(change.id, [firing])
      } else if (change.op === 'lost') count(change.id)
      continue
    }
    if (event.type !== 'user/message') continue
    const source = event.data.source
    if (typeof source === 'string' && source.startsWith('schedule/')) count(source.slice(9))
  }
  const lost: LostFiring[] = []
  for (const [id, list] of dispatches) {
    const left = list.length - (accounted.get(id) ?? 0)
    if (left > 0) lost.push(...list.slice(list.length - left))
  }
  return lost.sort((a, b) => a.seq - b.seq)
}
