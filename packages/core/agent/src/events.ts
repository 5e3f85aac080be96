import type { ErrorRecord, StepRef } from '@keel/session'
import './events.generated.js'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * A model call of the open step failed with a retryable error (rate limit, server error,
     * network failure, stream cut) and the agent will call the model again after `delayMs`.
     * Log-only. It follows the `assistant/attempt` that recorded the failed attempt:
     * `attempt` is that attempt's number (from 1 within the step), so the next try is
     * `attempt + 1`. `error.code` is the model error's code (`LLM_RATE_LIMIT`, …), `status`
     * the HTTP status when there was one, and `retryAfterMs` the wait the server asked for
     * (`Retry-After`), which `delayMs` honours.
     * @example {"turn":1,"step":1,"attempt":1,"delayMs":500,"error":{"code":"LLM_RATE_LIMIT","message":"rate limited"},"status":429,"retryAfterMs":500}
     */
    'llm/retry': StepRef & {
      /** @integer @minimum 1 */
      attempt: number
      /** @integer @minimum 0 */
      delayMs: number
      error: ErrorRecord
      /** @integer */
      status?: number
      /** @integer @minimum 0 */
      retryAfterMs?: number
    }
    /**
     * A plugin's `beforeTool` decision replaced the input of a tool call, and the agent
     * accepted it (it passed the tool's schema and differs from the input before). Log-only:
     * the `tool/call` keeps the arguments as the model sent them, and the model's history is
     * unchanged; `arguments` is the JSON of the input that replaced them (after validation).
     * The `beforeTool` chain then ran again on this input; the call's `tool/result` is what
     * running it produced (or why it did not run). A call rewritten twice has two of these,
     * in order; the last one is what ran.
     * @example {"turn":1,"step":1,"callId":"call-1","plugin":"@keel/hooks","arguments":"{\"path\":\"src/index.ts\"}"}
     */
    'tool/input-rewritten': StepRef & {
      /** @minLength 1 */
      callId: string
      /**
       * The plugin whose decision carried the new input.
       * @minLength 1
       */
      plugin: string
      arguments: string
    }
  }
}
