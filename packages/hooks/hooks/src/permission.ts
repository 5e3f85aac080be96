import type { ToolCallInfo } from '@keel/agent'
import type { Session } from '@keel/session'
import type { ApprovalAnswer, ApprovalAnswerer } from '@keel/user-approval'
import { hookSessionOf } from './state.js'

/** The hooks' opinion on one tool call, for the approval answerer chain. */
export interface HookPermissionAnswer {
  readonly decision: 'allow' | 'deny' | 'ask'
  readonly reason: string
  readonly source: 'hook'
}

/**
 * What the PreToolUse hooks decided for this call (deny > ask > allow), or `undefined` when
 * the hooks plugin is not in the agent running `session` or no hook had an opinion. The
 * hooks run once per call: if the hooks plugin's `beforeTool` already ran them, their result
 * is reused (and if this runs them first, `beforeTool` reuses it). `signal` (the turn's)
 * kills running hooks when the turn is aborted.
 *
 * It never lifts a limit by itself: the approval plugin consults it only for calls its
 * permission decision allowed or asked about, so a hook `allow` skips the prompt but can
 * never override a sandbox or policy deny (a deny is final before any answerer is asked).
 */
export async function hookPermission(
  session: Session,
  info: Pick<ToolCallInfo, 'turn' | 'call' | 'input' | 'signal'>,
): Promise<HookPermissionAnswer | undefined> {
  const hooks = hookSessionOf(session)
  if (!hooks) return undefined
  const result = await hooks.preToolUse({
    turn: info.turn,
    callId: info.call.id,
    toolName: info.call.name,
    input: info.input,
    ...(info.signal === undefined ? {} : { signal: info.signal }),
  })
  if (result.decision === undefined) return undefined
  return {
    decision: result.decision,
    reason: result.reason ?? `a PreToolUse hook answered ${result.decision}`,
    source: 'hook',
  }
}

/**
 * The hooks as a `hook` answerer of `@keel/user-approval`'s chain (the hooks plugin
 * registers it for its session): hook `allow` → allow once, `deny` → reject (the model gets
 * `HOOK_DENIED` with the hook's reason), `ask` → a person decides, no opinion → pass.
 */
export function hookApprovalAnswerer(session: Session, name = '@keel/hooks'): ApprovalAnswerer {
  return {
    name,
    kind: 'hook',
    async answer(question): Promise<ApprovalAnswer | undefined> {
      const said = await hookPermission(session, { ...question.info, signal: question.signal })
      if (said === undefined) return undefined
      switch (said.decision) {
        case 'allow':
          return { outcome: 'allow-once', reason: said.reason }
        case 'deny':
          return { outcome: 'reject', reason: said.reason }
        case 'ask':
          return { outcome: 'ask', reason: said.reason }
      }
    },
  }
}
