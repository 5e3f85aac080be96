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

/** A hook answerer insisted that a person decides (with its reason, when it gave one). */
export interface HookAsks {
  readonly ask: true
  readonly reason?: string
}

async function consult(
  answerer: ApprovalAnswerer,
  question: ApprovalQuestion,
): Promise<Settlement | HookAsks | undefined> {
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
    case 'ask':
      // A hook wants a person to decide; from a person's answerer it is a pass.
      return by === 'hook' ? { ask: true, ...reason } : undefined
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
 * Consults the `hook` answerers in order: the first settlement wins; otherwise the first
 * hook that asked for a person (`HookAsks`); otherwise `undefined` (no hook had an opinion).
 */
export async function consultHooks(
  question: ApprovalQuestion,
  answerers: readonly ApprovalAnswerer[],
): Promise<Settlement | HookAsks | undefined> {
  let asks: HookAsks | undefined
  for (const answerer of answerers.filter((a) => a.kind === 'hook')) {
    const said = await consult(answerer, question)
    if (said === undefined) continue
    if ('ask' in said) asks ??= said
    else return said
  }
  return asks
}

/**
 * Settles a question: hook answerers in order (skipped when `hooksConsulted`: they already
 * asked for a person), then the session rules (a rule added while this question waited, by
 * a parallel call, counts), then interactive answerers, then `unavailable` (fail closed).
 * The first answer wins; an abort at any point is `cancelled`.
 */
export async function settle(
  question: ApprovalQuestion,
  answerers: readonly ApprovalAnswerer[],
  currentRules: () => readonly SessionRule[],
  hooksConsulted = false,
): Promise<Settlement> {
  if (!hooksConsulted) {
    const said = await consultHooks(question, answerers)
    if (said !== undefined && !('ask' in said)) return said
  }
  if (question.signal.aborted) return cancelled
  const wanted = ruleFor(question)
  const rule = currentRules().find(
    (r) => r.toolName === wanted.toolName && (r.command === undefined || r.command === wanted.command),
  )
  if (rule) return { outcome: 'allowed-session', by: 'session-rule', reason: 'allowed for this session' }
  for (const answerer of answerers.filter((a) => a.kind === 'interactive')) {
    const settled = await consult(answerer, question)
    if (settled !== undefined && !('ask' in settled)) return settled
  }
  if (question.signal.aborted) return cancelled
  return { outcome: 'unavailable', by: 'none', reason: 'nobody can answer approval questions here' }
}

/**
 * How one call the decision allowed or asked about (`question.permission`) is answered.
 * `ask`: `open(reason)` records the question, then {@link settle}. `allow`: the hook
 * answerers review it first — no objection (or an allow) runs it without a question
 * (`undefined`); a rejection or an `ask` opens a question with the hook's reason, settled by
 * the hook or, for an `ask`, by the session rules and interactive answerers. Never throws: a
 * failure while asking is a rejection, and `open` is always called before a settlement is
 * returned.
 */
export async function answerCall(
  question: ApprovalQuestion,
  answerers: readonly ApprovalAnswerer[],
  currentRules: () => readonly SessionRule[],
  open: (reason: string) => void,
): Promise<{ settlement: Settlement; reason: string } | undefined> {
  let reason = question.reason
  let opened = false
  const openOnce = (why: string): void => {
    reason = why
    opened = true
    open(why)
  }
  try {
    if (question.permission === 'ask') {
      openOnce(reason)
      return { settlement: await settle(question, answerers, currentRules), reason }
    }
    const review = await consultHooks(question, answerers)
    if (review === undefined) return undefined
    if ('ask' in review) {
      openOnce(review.reason ?? 'a PreToolUse hook asks for approval')
      const asked: ApprovalQuestion = { ...question, reason, permission: 'ask' }
      return { settlement: await settle(asked, answerers, currentRules, true), reason }
    }
    if (review.outcome === 'allowed-once' || review.outcome === 'allowed-session') return undefined
    openOnce(review.reason ?? 'a hook refused it')
    return { settlement: review, reason }
  } catch (error) {
    if (!opened) openOnce(reason)
    const why = error instanceof Error ? error.message : String(error)
    return { settlement: { outcome: 'rejected', by: 'none', reason: `asking failed: ${why}` }, reason }
  }
}
