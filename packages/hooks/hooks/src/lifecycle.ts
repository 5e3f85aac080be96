import { messageText, type UserMessage } from '@keel/llm'
import { preCompact, sessionEnd, sessionStart, userPromptSubmit } from './points.js'
import type { HookSession } from './state.js'

/**
 * The hooks of the session-level interception points, shaped exactly as the agent's
 * `Interceptors` will declare them (`sessionStart`, `promptSubmit`, `sessionEnd`,
 * `beforeCompaction`). The hooks plugin connects them in one marked place once the agent
 * has these points.
 */
export interface HookLifecycleInterceptors {
  sessionStart(info: {
    source: 'startup' | 'resume' | 'compact'
  }): Promise<{ action: 'continue'; context?: string }>
  promptSubmit(info: {
    turn: number
    message: UserMessage
  }): Promise<{ action: 'accept'; context?: string } | { action: 'block'; reason: string }>
  sessionEnd(info: { reason: 'close' | 'error' }): Promise<void>
  beforeCompaction(info: {
    trigger: 'auto' | 'manual' | 'overflow'
    instructions?: string
  }): Promise<{ action: 'proceed'; instructions?: string } | { action: 'cancel'; reason: string }>
}

function joined(parts: readonly string[]): string | undefined {
  return parts.length > 0 ? parts.join('\n\n') : undefined
}

/**
 * Builds the session-level interceptors over one agent's hooks. `display` shows hook
 * notices (system messages, non-blocking errors) to the user.
 * - SessionStart: context (plain stdout, `additionalContext`) goes back as `context`.
 * - UserPromptSubmit: any block (exit 2, `decision: "block"`, `continue: false`) refuses
 *   the prompt with the reason for the user; otherwise context goes back with `accept`.
 * - PreCompact: exit 2 or `decision: "block"` cancels compaction; instructions are kept.
 * - SessionEnd: runs; nothing can be blocked.
 * A `continue: false` from SessionStart or PreCompact refuses the agent's next step.
 */
export function hookLifecycleInterceptors(
  hooks: HookSession,
  display: (text: string) => void,
): HookLifecycleInterceptors {
  const show = (notices: readonly string[]): void => {
    for (const notice of notices) display(notice)
  }
  return {
    async sessionStart(info) {
      const result = await sessionStart(hooks.engine, info)
      show(result.notices)
      if (result.halt !== undefined) hooks.halt = result.halt
      const context = joined(result.context)
      return context === undefined ? { action: 'continue' } : { action: 'continue', context }
    },
    async promptSubmit(info) {
      hooks.enterTurn(info.turn)
      const result = await userPromptSubmit(hooks.engine, {
        turn: info.turn,
        prompt: messageText(info.message),
      })
      show(result.notices)
      if (result.block !== undefined) return { action: 'block', reason: result.block }
      const context = joined(result.context)
      return context === undefined ? { action: 'accept' } : { action: 'accept', context }
    },
    async sessionEnd(info) {
      show((await sessionEnd(hooks.engine, info)).notices)
    },
    async beforeCompaction(info) {
      const result = await preCompact(hooks.engine, info)
      show(result.notices)
      if (result.halt !== undefined) hooks.halt = result.halt
      if (result.cancel !== undefined) return { action: 'cancel', reason: result.cancel }
      if (result.halt !== undefined) return { action: 'cancel', reason: result.halt }
      return info.instructions === undefined
        ? { action: 'proceed' }
        : { action: 'proceed', instructions: info.instructions }
    },
  }
}
