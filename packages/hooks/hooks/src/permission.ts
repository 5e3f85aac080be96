import type { ApprovalAnswer, ApprovalAnswerer, ToolCallInfo } from '@keel/agent'
import type { HookSession } from './state.js'

/** The hooks' opinion on one tool call, for the approval answerer chain. */
export interface HookPermissionAnswer {
  readonly decision: 'allow' | 'deny' | 'ask'
  readonly reason: string
  readonly source: 'hook'
}

/**
 * What the PreToolUse hooks decided for this call and input (deny > ask > allow), or
 * `undefined` when no hook had an opinion. The hooks run once per call and input: if the
 * hooks plugin's `beforeTool` vote already ran them, their result is reused (and if this
 * runs them first, the vote reuses it). `signal` (the turn's) kills running hooks when the
 * turn is aborted.
 */
export async function hookPermission(
  hooks: HookSession,
  info: Pick<ToolCallInfo, 'turn' | 'call' | 'input' | 'signal'>,
): Promise<HookPermissionAnswer | undefined> {
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
 * The hooks as a `hook` answerer of the agent's answerer chain (the hooks plugin registers
 * it): hook `allow` → allow once (Claude Code: an allowing hook skips the prompt), `deny` →
 * reject (`HOOK_DENIED` with the hook's reason), `ask` → a person decides, no opinion →
 * pass. It answers only questions some plugin asked: a call the sandbox refused was denied
 * before any answerer, so a hook's allow never lifts a limit.
 */
export function hookApprovalAnswerer(hooks: HookSession, name = '@keel/hooks'): ApprovalAnswerer {
  return {
    name,
    kind: 'hook',
    async answer(question): Promise<ApprovalAnswer | undefined> {
      const said = await hookPermission(hooks, { ...question.info, signal: question.signal })
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
