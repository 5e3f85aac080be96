// The one permission path. Every `beforeTool` voter votes (see `interceptors-run.ts`); a
// `deny` refuses the call; an `ask` comes here: hook answerers, then the session rules, then
// interactive answerers, then fail closed (`unavailable`). Each question is logged as one
// `approval/asked` and one `approval/decided`.
import { errorMessage } from '@keel/base'
import { type Projection, registerProjection, type Session } from '@keel/session'
import type { ApprovalAnswerSource, ApprovalOutcome, SessionRule } from './events.js'
import type { BeforeToolDecision, ToolCallInfo } from './plugin.js'

/** A question put to the answerers when a `beforeTool` vote was `ask`. */
export interface ApprovalQuestion {
  /** The `approval/asked` id. */
  readonly id: string
  readonly turn: number
  readonly toolName: string
  readonly callId: string
  /** Why the vote asks; show it to the person. */
  readonly reason: string
  /** The plugin whose vote asked. */
  readonly plugin?: string
  /** The validated tool input (after any rewrite). */
  readonly input: unknown
  /** The call as the interceptors saw it (tool, call block, facts). */
  readonly info: ToolCallInfo
  /** What an `allow-session` answer records: show the person its scope. */
  readonly rule: SessionRule
  /** Aborted when the turn is cancelled while the question is open: stop waiting then. */
  readonly signal: AbortSignal
  /**
   * The child agent the question comes from, when a delegating plugin put a subagent's
   * question to this agent's answerers: show the person which agent asks.
   */
  readonly delegate?: { readonly agent: string; readonly session: string }
}

/**
 * An answer: run this call once, run it and stop asking for calls the question's `rule`
 * covers this session, refuse it (the reason goes to the model as `USER_REJECTED`, or
 * `HOOK_DENIED` from a hook), or — `hook` answerers only — insist that a person decides
 * (`ask`: passed on to the session rules and interactive answerers; from an interactive
 * answerer it is a pass).
 */
export type ApprovalAnswer =
  | { readonly outcome: 'allow-once'; readonly reason?: string }
  | { readonly outcome: 'allow-session'; readonly reason?: string }
  | { readonly outcome: 'reject'; readonly reason: string }
  | { readonly outcome: 'ask'; readonly reason?: string }

/**
 * Something that answers approval questions. `hook` answerers (PreToolUse hooks) are
 * consulted first, in registration order; then the session rules; then `interactive`
 * answerers (a terminal, a UI, a parent agent). `undefined` passes the question on;
 * throwing counts as a rejection (fail closed). A hook's `allow-session` counts as
 * `allow-once`: only a person creates session rules.
 */
export interface ApprovalAnswerer {
  readonly name: string
  readonly kind: 'hook' | 'interactive'
  answer(question: ApprovalQuestion): ApprovalAnswer | undefined | Promise<ApprovalAnswer | undefined>
}

/** How a question was settled: the payload of its `approval/decided` (less id and turn). */
export interface Settlement {
  outcome: ApprovalOutcome
  by: ApprovalAnswerSource
  answerer?: string
  reason?: string
  rule?: SessionRule
}

/** `child` is `parent` or lies under it (absolute, normalized paths). */
function isUnder(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`)
}

/**
 * Whether a recorded rule covers the rule a question proposes: the same tool, the same
 * command when the rule names one, and a path under the rule's when it names one.
 */
export function ruleCovers(rule: SessionRule, proposed: SessionRule): boolean {
  if (rule.toolName !== proposed.toolName) return false
  if (rule.command !== undefined && rule.command !== proposed.command) return false
  if (rule.path !== undefined && (proposed.path === undefined || !isUnder(proposed.path, rule.path))) {
    return false
  }
  return true
}

/** The rule an "allow for this session" answer records by default: the exact command for shell calls, else the tool. */
export function defaultRule(info: Pick<ToolCallInfo, 'tool' | 'facts'>): SessionRule {
  const command = info.facts.command
  return command === undefined ? { toolName: info.tool.name } : { toolName: info.tool.name, command }
}

/** Says what a rule allows, for a person deciding ("`ls -la` (this exact command)"). */
export function describeRule(rule: SessionRule): string {
  if (rule.command !== undefined) return `\`${rule.command}\` with ${rule.toolName} (this exact command line)`
  if (rule.path !== undefined) return `${rule.toolName} under ${rule.path}`
  return `every ${rule.toolName} call`
}

/**
 * The "allow for this session" rules: the `rule` of every `approval/decided` with outcome
 * `allowed-session`, in order, without duplicates. Folded from the log, so a resumed
 * session keeps them and a fork inherits those made before the fork point.
 */
export const sessionRulesProjection: Projection<readonly SessionRule[]> = registerProjection<
  readonly SessionRule[]
>({
  name: '@keel/agent/session-rules',
  init: () => [],
  apply: (rules, event) => {
    if (event.type !== 'approval/decided' || event.data.outcome !== 'allowed-session' || !event.data.rule) {
      return rules
    }
    const rule = event.data.rule
    if (
      rules.some((r) => r.toolName === rule.toolName && r.command === rule.command && r.path === rule.path)
    ) {
      return rules
    }
    return [...rules, rule]
  },
  checkpoint: { version: 1 },
})

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

/** One answerer's word: a settlement, a hook's "a person must decide", or a pass. */
async function consult(
  answerer: ApprovalAnswerer,
  question: ApprovalQuestion,
): Promise<Settlement | { ask: true } | undefined> {
  const by: ApprovalAnswerSource = answerer.kind === 'hook' ? 'hook' : 'user'
  let answer: ApprovalAnswer | undefined | 'aborted'
  try {
    answer = await raced(answerer, question)
  } catch (error) {
    const why = errorMessage(error)
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
      return { outcome: 'allowed-session', by, answerer: answerer.name, ...reason, rule: question.rule }
    case 'reject':
      return { outcome: 'rejected', by, answerer: answerer.name, reason: answer.reason || 'rejected' }
    case 'ask':
      return by === 'hook' ? { ask: true } : undefined
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
 * Settles a question: hook answerers in order (the first settlement wins; a hook that asks
 * for a person passes it on), then the session rules (a rule added while this question
 * waited, by a parallel call, counts), then interactive answerers, then `unavailable` (fail
 * closed). An abort at any point is `cancelled`.
 */
export async function settle(
  question: ApprovalQuestion,
  answerers: readonly ApprovalAnswerer[],
  rules: () => readonly SessionRule[],
): Promise<Settlement> {
  for (const answerer of answerers) {
    if (answerer.kind !== 'hook') continue
    const said = await consult(answerer, question)
    if (said !== undefined && !('ask' in said)) return said
  }
  if (question.signal.aborted) return cancelled
  if (rules().some((rule) => ruleCovers(rule, question.rule))) {
    return {
      outcome: 'allowed-session',
      by: 'session-rule',
      reason: `allowed for this session (${describeRule(question.rule)})`,
    }
  }
  for (const answerer of answerers) {
    if (answerer.kind !== 'interactive') continue
    const said = await consult(answerer, question)
    if (said !== undefined && !('ask' in said)) return said
  }
  if (question.signal.aborted) return cancelled
  return { outcome: 'unavailable', by: 'none', reason: 'nobody can answer approval questions here' }
}

/** What a settlement means for the call: run it, or refuse it with a code the model can act on. */
export function verdict(
  settlement: Settlement,
  reason: string,
): Exclude<BeforeToolDecision, { action: 'ask' }> {
  switch (settlement.outcome) {
    case 'allowed-once':
    case 'allowed-session':
      return { action: 'allow' }
    case 'rejected':
      if (settlement.by === 'hook') {
        return { action: 'deny', errorCode: 'HOOK_DENIED', reason: `a hook refused it: ${settlement.reason}` }
      }
      return {
        action: 'deny',
        errorCode: 'USER_REJECTED',
        reason: `${reason}; rejected: ${settlement.reason}`,
      }
    case 'cancelled':
      return { action: 'deny', errorCode: 'APPROVAL_CANCELLED', reason: `${reason}; the turn was cancelled` }
    default:
      return {
        action: 'deny',
        errorCode: 'APPROVAL_UNAVAILABLE',
        reason: `${reason}; approval was needed but nobody can answer here, so the call fails closed`,
      }
  }
}

/** What {@link askAbout} needs from the agent. */
export interface AskContext {
  readonly session: Session
  /** Hook answerers and interactive answerers, in the order they are consulted within their kind. */
  readonly answerers: readonly ApprovalAnswerer[]
  /** How often each call of the turn was asked about: a rewritten call is asked again under `<id>:<n>`. */
  readonly asked: Map<string, number>
}

/**
 * Answers one `ask` vote: records `approval/asked`, settles it ({@link settle}), records
 * `approval/decided`, and returns what happens to the call. Never throws for an answerer's
 * failure (that is a rejection); a log that refuses the events throws (the turn closes).
 */
export async function askAbout(
  ctx: AskContext,
  ask: Extract<BeforeToolDecision, { action: 'ask' }>,
  plugin: string | undefined,
  info: ToolCallInfo,
  signal: AbortSignal,
): Promise<Exclude<BeforeToolDecision, { action: 'ask' }>> {
  const base = `${info.turn}:${info.call.id}`
  const pass = (ctx.asked.get(base) ?? 0) + 1
  ctx.asked.set(base, pass)
  const asked = {
    id: pass === 1 ? base : `${base}:${pass}`,
    turn: info.turn,
    toolName: info.tool.name,
    callId: info.call.id,
    reason: ask.reason,
    ...(plugin === undefined ? {} : { plugin }),
  }
  ctx.session.append('approval/asked', asked)
  const { id } = asked
  const question: ApprovalQuestion = {
    ...asked,
    input: info.input,
    info,
    rule: ask.rule ?? defaultRule(info),
    signal,
  }
  const settlement = await settle(question, ctx.answerers, () => ctx.session.project(sessionRulesProjection))
  ctx.session.append('approval/decided', { id, turn: info.turn, ...settlement })
  return verdict(settlement, ask.reason)
}
