import type { Session } from '@keel/session'
import { AgentError } from './errors.js'

/**
 * The system prompt an agent starts with: it opens a blank session; a resumed one keeps its
 * log's. Returns the notice to give when the option was not applied (it differs from the
 * log's, or the resumed session has none), else undefined.
 */
export function startSystemPrompt(
  session: Session,
  prompt: string | undefined,
  resumed: boolean,
): { code: 'SYSTEM_PROMPT_KEPT'; message: string } | undefined {
  if (prompt === undefined) return undefined
  const current = session.events.find((e) => e.type === 'system/message')
  if (!resumed && !current) {
    session.append('system/message', {
      message: { role: 'system', content: [{ type: 'text', text: prompt }] },
    })
    return undefined
  }
  const logged = current ? current.data.message.content.map((b) => b.text).join('') : undefined
  if (logged === prompt) return undefined
  return {
    code: 'SYSTEM_PROMPT_KEPT',
    message:
      logged === undefined
        ? 'the resumed session has no system prompt and keeps none; the systemPrompt option applies to blank sessions only'
        : 'the resumed session keeps the system prompt of its log; call setSystemPrompt to change it',
  }
}

/**
 * Replaces the system prompt between turns (see `Agent.setSystemPrompt`): a logged surface
 * replace of the first message, or the first message of an empty history.
 */
export function replaceSystemPrompt(session: Session, text: string): void {
  if (session.openTurn) {
    throw new AgentError(
      'SYSTEM_PROMPT_UNCHANGEABLE',
      'a turn is running; change the system prompt between turns',
    )
  }
  const message = { role: 'system' as const, content: [{ type: 'text' as const, text }] }
  const firstSeq = session.surfaceSeqs()[0]
  if (firstSeq === undefined) {
    session.append('system/message', { message })
    return
  }
  if (session.deriveMessages()[0]!.role !== 'system') {
    throw new AgentError(
      'SYSTEM_PROMPT_UNCHANGEABLE',
      'this session has history but no system message; a system message may not follow other messages',
    )
  }
  session.append(
    'system/message',
    { message },
    { surfaceOp: { op: 'replace', startSeq: firstSeq, endSeq: firstSeq }, sourceEventSeqs: [firstSeq] },
  )
}
