// A child's approval questions go up to its parent: logged in the parent's turn and settled by
// the parent's session rules and interactive answerers (the person sees which subagent asks).
import {
  type ApprovalAnswer,
  type ApprovalAnswerer,
  type ApprovalQuestion,
  type PluginContext,
  type Settlement,
  sessionRulesProjection,
  settle,
} from '@keel/agent'

/** The parent's call a child runs under. */
export interface DelegatedCall {
  /** The child's definition name. */
  readonly agent: string
  /** The child's session id. */
  readonly child: string
  /** The parent's turn and `task` call. */
  readonly turn: number
  readonly callId: string
}

/** What a settlement in the parent means for the child's own chain. */
export function answerOf(settlement: Settlement): ApprovalAnswer | undefined {
  const reason = settlement.reason === undefined ? {} : { reason: settlement.reason }
  switch (settlement.outcome) {
    case 'allowed-once':
      return { outcome: 'allow-once', ...reason }
    case 'allowed-session':
      // A person's "for this session" is recorded in the child too; a parent's standing rule
      // answers this one question (the parent keeps the rule).
      return settlement.by === 'user'
        ? { outcome: 'allow-session', ...reason }
        : { outcome: 'allow-once', ...reason }
    case 'rejected':
      return { outcome: 'reject', reason: settlement.reason ?? 'rejected' }
    case 'cancelled':
      return { outcome: 'reject', reason: settlement.reason ?? 'the question was cancelled' }
    default:
      // Nobody can answer in the parent: pass, and the child's chain fails closed.
      return undefined
  }
}

/**
 * The child's interactive answerer that puts each of its questions to the parent: an
 * `approval/asked` in the parent's open turn (under the `task` call, the reason saying
 * which subagent asks), settled by the parent's session rules and its interactive
 * answerers (the parent's hook answerers are not asked again: the child's own hooks already
 * voted), then one `approval/decided`. A question from a grandchild keeps the innermost
 * `delegate`, so the person sees the agent that really asks.
 */
export function parentAnswerer(ctx: PluginContext<unknown>, call: DelegatedCall): ApprovalAnswerer {
  return {
    name: `parent session ${ctx.session.id}`,
    kind: 'interactive',
    async answer(question: ApprovalQuestion) {
      const id = `${call.turn}:${call.callId}>${call.child}:${question.id}`
      const reason = `subagent ${call.agent} asks: ${question.reason}`
      ctx.session.append('approval/asked', {
        id,
        turn: call.turn,
        toolName: question.toolName,
        callId: call.callId,
        reason,
        plugin: ctx.name,
      })
      const asked: ApprovalQuestion = {
        ...question,
        id,
        turn: call.turn,
        callId: call.callId,
        reason,
        plugin: ctx.name,
        delegate: question.delegate ?? { agent: call.agent, session: call.child },
      }
      const interactive = ctx.answerers().filter((answerer) => answerer.kind === 'interactive')
      const settlement = await settle(asked, interactive, () => ctx.session.project(sessionRulesProjection))
      ctx.session.append('approval/decided', { id, turn: call.turn, ...settlement })
      return answerOf(settlement)
    },
  }
}
