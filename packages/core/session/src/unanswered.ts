import { errorResultText, type ToolCallId } from '@keel/llm'
import type { UnansweredCall } from './lifecycle.js'
import type { Session } from './session.js'

/** How {@link answerUnansweredCalls} answers each call: an error code and the text the model reads. */
export interface UnansweredCallAnswer {
  readonly errorCode: string
  text(call: UnansweredCall): string
}

/**
 * Appends an error `tool/result` for every committed `tool/call` of the open turn that has
 * none (`Error [<code>]: <text>`, `isError`, `errorCode`), so the step can end and the
 * history sent to the model stays well-formed. Returns how many calls it answered.
 */
export function answerUnansweredCalls(session: Session, answer: UnansweredCallAnswer): number {
  const calls = session.unansweredCalls
  for (const call of calls) {
    session.append('tool/result', {
      turn: call.turn,
      step: call.step,
      message: {
        role: 'tool',
        toolCallId: call.callId as ToolCallId,
        toolName: call.name,
        content: [{ type: 'text', text: errorResultText(answer.errorCode, answer.text(call)) }],
        isError: true,
      },
      errorCode: answer.errorCode,
    })
  }
  return calls.length
}

/** The answer the stores give calls left unanswered by a writer that stopped (`TOOL_INTERRUPTED`). */
export const interruptedCallAnswer: UnansweredCallAnswer = {
  errorCode: 'TOOL_INTERRUPTED',
  text: (call) =>
    `${call.name} did not finish: the process stopped before the tool returned its result. Its effects, if any, are unknown; check before repeating it.`,
}

/**
 * Closes the turn a log ends in (its writer stopped mid-turn): answers its unanswered calls
 * with {@link interruptedCallAnswer}, appends `step/end` for an open step and `turn/end
 * { reason: 'interrupted' }`. Returns the turn and step it closed, or undefined when no
 * turn was open.
 */
export function closeInterruptedTurn(session: Session): { turn: number; step: number | null } | undefined {
  const open = session.openTurn
  if (!open) return undefined
  answerUnansweredCalls(session, interruptedCallAnswer)
  if (open.step !== null) session.append('step/end', { turn: open.turn, step: open.step })
  session.append('turn/end', { turn: open.turn, reason: 'interrupted' })
  return { turn: open.turn, step: open.step }
}
