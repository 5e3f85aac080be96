import { answerUnansweredCalls, interruptedCallAnswer, type Session } from '@keel/session'

/**
 * Answers every committed `tool/call` of the open turn that has no `tool/result` (the
 * writer stopped while the tool ran) with an error result `TOOL_INTERRUPTED`, so the
 * history sent to the model stays well-formed. Called before the interrupted-turn closure.
 */
export function answerInterruptedCalls(session: Session): void {
  answerUnansweredCalls(session, interruptedCallAnswer)
}
