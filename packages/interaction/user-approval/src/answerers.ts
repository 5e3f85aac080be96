import type { ToolAnswerer, ToolCallInfo } from '@keel/agent'
import type { Session } from '@keel/session'
import type { PermissionRequest } from './decide.js'

/** A question put to the answerers when the permission decision is `ask`. */
export interface ApprovalQuestion {
  /** The `approval/asked` id. */
  readonly id: string
  readonly turn: number
  readonly toolName: string
  readonly callId: string
  /** Why the decision asks; show it to the person. */
  readonly reason: string
  /** The validated tool input. */
  readonly input: unknown
  /** The call as the agent's interceptors see it (tool, call block, facts). */
  readonly info: ToolCallInfo
  /** What the decision was made from (paths with their real locations, command, policy). */
  readonly request: PermissionRequest
  /** Aborted when the turn is cancelled while the question is open: stop waiting then. */
  readonly signal: AbortSignal
}

/**
 * An answer: run this call once, run it and stop asking for matching calls this session,
 * or refuse it (the reason goes to the model with `USER_REJECTED`).
 */
export type ApprovalAnswer =
  | { readonly outcome: 'allow-once'; readonly reason?: string }
  | { readonly outcome: 'allow-session'; readonly reason?: string }
  | { readonly outcome: 'reject'; readonly reason: string }

/**
 * Something that can answer approval questions. `hook` answerers (the hooks plugin's
 * permission hooks) are consulted first, in registration order; then the session rules;
 * then `interactive` answerers (a terminal, a UI). Returning `undefined` passes the question
 * on; throwing counts as a rejection (fail closed). A hook's `allow-session` counts as
 * `allow-once`: only a person creates session rules.
 */
export interface ApprovalAnswerer {
  readonly name: string
  readonly kind: 'hook' | 'interactive'
  answer(question: ApprovalQuestion): ApprovalAnswer | undefined | Promise<ApprovalAnswer | undefined>
}

const slots = new WeakMap<Session, ApprovalAnswerer[]>()

/**
 * Registers an answerer for the approval questions of `session` (the session object the
 * agent runs on: plugins get it as `ctx.session`). Returns the function that unregisters
 * it; a plugin returns that from `setup` as (part of) its disposer.
 */
export function registerApprovalAnswerer(session: Session, answerer: ApprovalAnswerer): () => void {
  let list = slots.get(session)
  if (!list) {
    list = []
    slots.set(session, list)
  }
  list.push(answerer)
  return () => {
    const current = slots.get(session)
    const index = current?.indexOf(answerer) ?? -1
    if (current && index >= 0) current.splice(index, 1)
  }
}

/** The answerers registered for `session`, hooks first, each kind in registration order. */
export function approvalAnswerers(session: Session): ApprovalAnswerer[] {
  const list = slots.get(session) ?? []
  return [...list.filter((a) => a.kind === 'hook'), ...list.filter((a) => a.kind === 'interactive')]
}

/**
 * Uses an agent-level {@link ToolAnswerer} (the `answerer` option of `createAgent`, e.g. an
 * existing UI prompt) as an interactive approval answerer: `allow` is an allow-once, `deny`
 * a rejection. It cannot say "for this session"; give a terminal or UI answerer for that.
 */
export function fromToolAnswerer(answerer: ToolAnswerer, name = 'agent-answerer'): ApprovalAnswerer {
  return {
    name,
    kind: 'interactive',
    async answer(question) {
      const said = await answerer({
        ...question.info,
        reason: question.reason,
        plugin: '@keel/user-approval',
        signal: question.signal,
      })
      return said === 'allow' ? { outcome: 'allow-once' } : { outcome: 'reject', reason: 'declined' }
    },
  }
}
