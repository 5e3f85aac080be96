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
  }
}
