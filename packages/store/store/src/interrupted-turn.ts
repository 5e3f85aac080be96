import { closeInterruptedTurn, type Session } from '@keel/session'
import type { StoreNotice } from './store.js'

/**
 * Closes the turn a log ends in (the writer stopped mid-turn) with the session's
 * {@link closeInterruptedTurn}: unanswered calls answered `TOOL_INTERRUPTED`, `step/end` for
 * an open step, `turn/end { reason: 'interrupted' }`. The events are committed to `session`
 * (and so queued on its handle), not yet flushed. Returns the notice to report once they are
 * durable, or undefined when no turn was open.
 */
export function closeInterruptedTurnNoticed(session: Session): StoreNotice | undefined {
  const closed = closeInterruptedTurn(session)
  if (!closed) return undefined
  return {
    code: 'INTERRUPTED_TURN_CLOSED',
    message: `turn ${closed.turn} of session ${session.id} had no turn/end (the writer stopped mid-turn); closed it with turn/end { reason: 'interrupted' }${closed.step !== null ? ` after step/end of step ${closed.step}` : ''}`,
  }
}

/** What `inspect` reports for a log whose last turn has no `turn/end` (it repairs nothing). */
export function interruptedTurnNotice(turn: number): StoreNotice {
  return {
    code: 'INTERRUPTED_TURN',
    message: `turn ${turn} has no turn/end (the writer stopped mid-turn); opening the session closes it with turn/end { reason: 'interrupted' }`,
  }
}
