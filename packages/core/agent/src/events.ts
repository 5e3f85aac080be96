import { type ErrorRecord, registerEvents } from '@keel/session'
import { z } from 'zod'

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
     */
    'llm/retry': {
      turn: number
      step: number
      attempt: number
      delayMs: number
      error: ErrorRecord
      status?: number
      retryAfterMs?: number
    }
  }
}

const positive = z.number().int().positive()
const nonNegative = z.number().int().nonnegative()

registerEvents('@keel/agent', {
  'llm/retry': z.strictObject({
    turn: positive,
    step: positive,
    attempt: positive,
    delayMs: nonNegative,
    error: z.strictObject({ code: z.string().min(1), message: z.string() }),
    status: z.number().int().optional(),
    retryAfterMs: nonNegative.optional(),
  }),
})
