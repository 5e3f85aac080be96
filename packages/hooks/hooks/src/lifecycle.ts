import type {
  BeforeCompactionDecision,
  BeforeCompactionInfo,
  PromptSubmitDecision,
  PromptSubmitInfo,
  SessionEndInfo,
  SessionStartDecision,
  SessionStartInfo,
} from '@keel/agent'
import { messageText } from '@keel/llm'
import { preCompact, sessionEnd, sessionStart, userPromptSubmit } from './points.js'
import type { HookSession } from './state.js'

/**
 * The hooks of the agent's session-level interception points (`sessionStart`,
 * `promptSubmit`, `sessionEnd`, `beforeCompaction`), as the hooks plugin passes them to
 * `ctx.intercept`.
 */
export interface HookLifecycleInterceptors {
  sessionStart(info: SessionStartInfo): Promise<SessionStartDecision>
  promptSubmit(info: PromptSubmitInfo): Promise<PromptSubmitDecision>
  sessionEnd(info: SessionEndInfo): Promise<void>
  beforeCompaction(info: BeforeCompactionInfo): Promise<BeforeCompactionDecision>
}

function joined(parts: readonly string[]): string | undefined {
  return parts.length > 0 ? parts.join('\n\n') : undefined
}

/**
 * Builds the session-level interceptors over one agent's hooks. `display` shows hook
 * notices (system messages, non-blocking errors) to the user.
 * - SessionStart (`startup`/`resume` when the agent starts, `compact` when a compaction
 *   plugin calls `host.sessionStart`): context (plain stdout, `additionalContext`) goes back
 *   as `context`.
 * - UserPromptSubmit: any block (exit 2, `decision: "block"`, `continue: false`) refuses
 *   the prompt with the reason for the user (the agent's `PROMPT_BLOCKED` notice, and a
 *   `hook-notice`); otherwise context goes back with `accept`. The turn's abort signal
 *   kills running handlers.
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
        ...(info.signal === undefined ? {} : { signal: info.signal }),
      })
      show(result.notices)
      if (result.block !== undefined) {
        display(`UserPromptSubmit hook blocked the prompt: ${result.block}`)
        return { action: 'block', reason: result.block }
      }
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
