import type { ApprovalAnswer, ApprovalAnswerer, ApprovalQuestion } from './answerers.js'
import type { ApprovalAnswerSource, ApprovalOutcome, SessionRule } from './events.js'

/** How a question was settled: the payload of its `approval/decided` (less id and turn). */
export interface Settlement {
  outcome: ApprovalOutcome
  by: ApprovalAnswerSource
  answerer?: string
  reason?: string
  rule?: SessionRule
}

/** The rule an `allow-session` answer creates: the exact command for shell calls, else the tool. */
export function ruleFor(question: ApprovalQuestion): SessionRule {
  const command = question.request.command
  return command === undefined ? { toolName: question.toolName } : { toolName: question.toolName, command }
}

const cancelled: Settlement = { outcome: 'cancelled', by: 'none', reason: 'the turn was cancelled' }

/** Resolves with the answer, or with `aborted` as soon as the signal fires. */
async function raced(
  answerer: ApprovalAnswerer,
  question: ApprovalQuestion,
): Promise<ApprovalAnswer | undefined | 'aborted'> {
  const { signal } = question
  if (signal.aborted) return 'aborted'
  let onAbort = () => {}
  const abort = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted')
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([Promise.resolve().then(() => answerer.answer(question)), abort])
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}

async function consult(
  answerer: ApprovalAnswerer,
  question: ApprovalQuestion,
): Promise<Settlement | undefined> {
  const by: ApprovalAnswerSource = answerer.kind === 'hook' ? 'hook' : 'user'
  let answer: ApprovalAnswer | undefined | 'aborted'
  try {
    answer = await raced(answerer, question)
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    return { outcome: 'rejected', by, answerer: answerer.name, reason: `the answerer failed: ${why}` }
  }
  if (answer === 'aborted') return cancelled
  if (answer === undefined) return undefined
  const reason = answer.reason === undefined ? {} : { reason: answer.reason }
  switch (answer.outcome) {
    case 'allow-once':
      return { outcome: 'allowed-once', by, answerer: answerer.name, ...reason }
    case 'allow-session':
      // Only a person creates session rules; a hook's "always" is an "allow once".
      if (by === 'hook') return { outcome: 'allowed-once', by, answerer: answerer.name, ...reason }
      return { outcome: 'allowed-session', by, answerer: answerer.name, ...reason, rule: ruleFor(question) }
    case 'reject':
      return { outcome: 'rejected', by, answerer: answerer.name, reason: answer.reason || 'rejected' }
    default: {
      const unknown: unknown = answer
      return {
        outcome: 'rejected',
        by,
        answerer: answerer.name,
        reason: `unknown answer ${JSON.stringify(unknown)}`,
      }
    }
  }
}

/**
 * Settles a question: hook answerers in order, then the session rules (a rule added while
 * this question waited, by a parallel call, counts), then interactive answerers, then
 * `unavailable` (fail closed). The first answer wins; an abort at any point is `cancelled`.
 */
export async function settle(
  question: ApprovalQuestion,
  answerers: readonly ApprovalAnswerer[],
  currentRules: () => readonly SessionRule[],
): Promise<Settlement> {
  for (const answerer of answerers.filter((a) => a.kind === 'hook')) {
    const settled = await consult(answerer, question)
    if (settled) return settled
  }
  if (question.signal.aborted) return cancelled
  const wanted = ruleFor(question)
  const rule = currentRules().find(
    (r) => r.toolName === wanted.toolName && (r.command === undefined || r.command === wanted.command),
  )
  if (rule) return { outcome: 'allowed-session', by: 'session-rule', reason: 'allowed for this session' }
  for (const answerer of answerers.filter((a) => a.kind === 'interactive')) {
    const settled = await consult(answerer, question)
    if (settled) return settled
  }
  if (question.signal.aborted) return cancelled
  return { outcome: 'unavailable', by: 'none', reason: 'nobody can answer approval questions here' }
}
