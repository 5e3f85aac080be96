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
    /**
     * A plugin's `beforeTool` decision replaced the input of a tool call, and the agent
     * accepted it (it passed the tool's schema and differs from the input before). Log-only:
     * the `tool/call` keeps the arguments as the model sent them, and the model's history is
     * unchanged; `arguments` is the JSON of the input that replaced them (after validation).
     * The `beforeTool` chain then ran again on this input; the call's `tool/result` is what
     * running it produced (or why it did not run). A call rewritten twice has two of these,
     * in order; the last one is what ran.
     */
    'tool/input-rewritten': {
      turn: number
      step: number
      callId: string
      /** The plugin whose decision carried the new input. */
      plugin: string
      arguments: string
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
  'tool/input-rewritten': z.strictObject({
    turn: positive,
    step: positive,
    callId: z.string().min(1),
    plugin: z.string().min(1),
    arguments: z.string(),
  }),
})
