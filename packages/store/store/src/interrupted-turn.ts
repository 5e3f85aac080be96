import { answerUnansweredCalls, interruptedCallAnswer, type Session } from '@keel/session'
import type { StoreNotice } from './store.js'

/**
 * Answers every committed `tool/call` of the open turn that has no `tool/result` (the
 * writer stopped while the tool ran) with an error result `TOOL_INTERRUPTED`, so the
 * history sent to the model stays well-formed. Called before the interrupted-turn closure.
 */
export function answerInterruptedCalls(session: Session): void {
  answerUnansweredCalls(session, interruptedCallAnswer)
}

/**
 * Closes the turn a log ends in (the writer stopped mid-turn): answers its unanswered calls,
 * appends `step/end` for an open step and `turn/end { reason: 'interrupted' }`. The events
 * are committed to `session` (and so queued on its handle), not yet flushed. Returns the
 * notice to report once they are durable, or undefined when no turn was open.
 */
export function closeInterruptedTurn(session: Session): StoreNotice | undefined {
  const open = session.openTurn
  if (!open) return undefined
  answerInterruptedCalls(session)
  if (open.step !== null) session.append('step/end', { turn: open.turn, step: open.step })
  session.append('turn/end', { turn: open.turn, reason: 'interrupted' })
  return {
    code: 'INTERRUPTED_TURN_CLOSED',
    message: `turn ${open.turn} of session ${session.id} had no turn/end (the writer stopped mid-turn); closed it with turn/end { reason: 'interrupted' }${open.step !== null ? ` after step/end of step ${open.step}` : ''}`,
  }
}

/** What `inspect` reports for a log whose last turn has no `turn/end` (it repairs nothing). */
export function interruptedTurnNotice(turn: number): StoreNotice {
  return {
    code: 'INTERRUPTED_TURN',
    message: `turn ${turn} has no turn/end (the writer stopped mid-turn); opening the session closes it with turn/end { reason: 'interrupted' }`,
  }
}
