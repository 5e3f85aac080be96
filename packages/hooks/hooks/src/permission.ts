import type { ToolCallInfo } from '@keel/agent'
import type { Session } from '@keel/session'
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
 * is reused.
 *
 * Meant as the first answerer of an approval chain: it is consulted only after the
 * permission decision asked, so a hook `allow` skips the prompt but can never override a
 * sandbox or policy deny (a deny is final before any answerer is asked).
 */
export async function hookPermission(
  session: Session,
  info: Pick<ToolCallInfo, 'turn' | 'call' | 'input'>,
): Promise<HookPermissionAnswer | undefined> {
  const hooks = hookSessionOf(session)
  if (!hooks) return undefined
  const result = await hooks.preToolUse({
    turn: info.turn,
    callId: info.call.id,
    toolName: info.call.name,
    input: info.input,
  })
  if (result.decision === undefined) return undefined
  return {
    decision: result.decision,
    reason: result.reason ?? `a PreToolUse hook answered ${result.decision}`,
    source: 'hook',
  }
}
