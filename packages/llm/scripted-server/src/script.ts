import { boundIssues, KeelError } from '@keel/base'
import { z } from 'zod'

/**
 * How a string is cut into stream fragments: a fragment length in UTF-16 code units, or
 * explicit cut offsets (`[3, 10]` sends `s[0..3]`, `s[3..10]`, `s[10..]`). Offsets outside
 * the string or repeated are ignored. Cuts may land anywhere, including inside a JSON string
 * escape or between the two halves of a surrogate pair.
 */
export type Split = number | number[]

/** Token counts the server reports for one response (DeepSeek's usage shape). */
export interface ScriptedUsage {
  promptTokens: number
  completionTokens: number
  /** Defaults to `promptTokens + completionTokens`. */
  totalTokens?: number
  /** `prompt_cache_hit_tokens`; defaults to 0. */
  cacheHitTokens?: number
  /** `prompt_cache_miss_tokens`; defaults to `promptTokens - cacheHitTokens`. */
  cacheMissTokens?: number
  /** `completion_tokens_details.reasoning_tokens`; sent only when given. */
  reasoningTokens?: number
}

/** One tool call the scripted model makes. */
export interface ScriptedToolCall {
  /** Defaults to `call_<request>_<index>`. */
  id?: string
  name: string
  /** Raw JSON text sent as is, or an object serialized with `JSON.stringify`. */
  arguments: string | Record<string, unknown>
}

/** The `finish_reason` values DeepSeek sends. */
export type ScriptedFinishReason =
  | 'stop'
  | 'tool_calls'
  | 'length'
  | 'content_filter'
  | 'insufficient_system_resource'

/**
 * A fault replacing or damaging one response.
 * - `http`: any 4xx/5xx status with an OpenAI-shaped error body (`retryAfter` sets the
 *   `Retry-After` header: seconds, or an HTTP date string).
 * - `rate-limit` (429), `server-error` (500), `overloaded` (503), `context-length` (400 whose
 *   message names the maximum context length), `auth` (401), `insufficient-balance` (402):
 *   the same with DeepSeek-like messages.
 * - `cut`: after `afterChunks` data chunks (default: half of them) the socket is destroyed
 *   without `[DONE]`; with `graceful: true` the response is ended normally instead, still
 *   without `[DONE]` (a server that stops early but cleanly).
 * - `malformed`: after `afterChunks` data chunks (default 1) one raw data line is sent —
 *   `line`, default the invalid JSON `{"id": "broken` (any text works, e.g. an in-stream
 *   `{"error": {...}}` object); the stream then continues normally.
 * - `stall`: after `afterChunks` data chunks (default 1) the server keeps the socket open
 *   and sends nothing — or only a `: keep-alive` comment every `keepAliveMs` — for `forMs`
 *   milliseconds, then continues normally; without `forMs` it stalls until the client goes
 *   away (idle-timeout tests).
 */
export type ScriptedFault =
  | {
      type: 'http'
      status: number
      message?: string
      errorType?: string
      code?: string
      retryAfter?: number | string
    }
  | { type: 'rate-limit'; retryAfter?: number | string; message?: string }
  | { type: 'server-error'; message?: string }
  | { type: 'overloaded'; message?: string }
  | { type: 'context-length'; message?: string }
  | { type: 'auth'; message?: string }
  | { type: 'insufficient-balance'; message?: string }
  | { type: 'cut'; afterChunks?: number; graceful?: boolean }
  | { type: 'malformed'; afterChunks?: number; line?: string }
  | { type: 'stall'; afterChunks?: number; keepAliveMs?: number; forMs?: number }

/**
 * One scripted model answer, consumed by one request. Everything is optional: `{}` answers
 * with an empty text and `finish_reason: "stop"`.
 */
export interface ScriptedResponse {
  /** Response id; defaults to `chatcmpl-scripted-<n>`. */
  id?: string
  /** Model reported in chunks; defaults to the request's `model`. */
  model?: string
  /** Streamed as `reasoning_content` deltas (after an empty first one) before any text. */
  reasoning?: string
  /** Streamed as `content` deltas. */
  text?: string
  /** Streamed as `tool_calls` deltas keyed by index, after the text. */
  toolCalls?: ScriptedToolCall[]
  /** Usage to report; defaults to an estimate (4 characters per token). `false` sends none. */
  usage?: ScriptedUsage | false
  /** Defaults to `tool_calls` when there are tool calls, `stop` otherwise. */
  finishReason?: ScriptedFinishReason
  /** Fragment sizes for each streamed field (defaults: text 8, reasoning 8, arguments 7). */
  chunking?: { text?: Split; reasoning?: Split; arguments?: Split }
  /** Delay between data chunks, in milliseconds (slow streams). */
  delayMs?: number
  /** Delay before the response headers, in milliseconds (slow first byte, timeouts). */
  headersDelayMs?: number
  /** This many `: keep-alive` comment lines before the first chunk and between chunks. */
  keepAlive?: number
  /** Send an empty `reasoning_content` first when there is reasoning (as DeepSeek does); default true. */
  emptyFirstReasoning?: boolean
  fault?: ScriptedFault
}

const count = z.number().int().nonnegative()
const split = z.union([z.number().int().positive(), z.array(count)])
const message = z.string().optional()

const usageSchema = z.strictObject({
  promptTokens: count,
  completionTokens: count,
  totalTokens: count.optional(),
  cacheHitTokens: count.optional(),
  cacheMissTokens: count.optional(),
  reasoningTokens: count.optional(),
})

const retryAfter = z.union([count, z.string().min(1)]).optional()

const faultSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('http'),
    status: z.number().int().min(400).max(599),
    message,
    errorType: z.string().optional(),
    code: z.string().optional(),
    retryAfter,
  }),
  z.strictObject({ type: z.literal('rate-limit'), retryAfter, message }),
  z.strictObject({ type: z.literal('server-error'), message }),
  z.strictObject({ type: z.literal('overloaded'), message }),
  z.strictObject({ type: z.literal('context-length'), message }),
  z.strictObject({ type: z.literal('auth'), message }),
  z.strictObject({ type: z.literal('insufficient-balance'), message }),
  z.strictObject({ type: z.literal('cut'), afterChunks: count.optional(), graceful: z.boolean().optional() }),
  z.strictObject({
    type: z.literal('malformed'),
    afterChunks: count.optional(),
    line: z.string().optional(),
  }),
  z.strictObject({
    type: z.literal('stall'),
    afterChunks: count.optional(),
    keepAliveMs: z.number().int().positive().optional(),
    forMs: count.optional(),
  }),
])

/** Runtime schema of {@link ScriptedResponse}. */
export const scriptedResponseSchema: z.ZodType<ScriptedResponse> = z.strictObject({
  id: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  reasoning: z.string().optional(),
  text: z.string().optional(),
  toolCalls: z
    .array(
      z.strictObject({
        id: z.string().min(1).optional(),
        name: z.string().min(1),
        arguments: z.union([z.string(), z.record(z.string(), z.unknown())]),
      }),
    )
    .optional(),
  usage: z.union([usageSchema, z.literal(false)]).optional(),
  finishReason: z
    .enum(['stop', 'tool_calls', 'length', 'content_filter', 'insufficient_system_resource'])
    .optional(),
  chunking: z
    .strictObject({ text: split.optional(), reasoning: split.optional(), arguments: split.optional() })
    .optional(),
  delayMs: count.optional(),
  headersDelayMs: count.optional(),
  keepAlive: count.optional(),
  emptyFirstReasoning: z.boolean().optional(),
  fault: faultSchema.optional(),
})

/** One problem found in a script step. */
export interface ScriptIssue {
  /** JSON path inside the step, e.g. `toolCalls[0].name`. */
  path: string
  message: string
}

/**
 * A script step does not match {@link ScriptedResponse}. `details.step` is the step's
 * position (0-based, counted from the first step ever enqueued) and `details.issues` lists
 * what is wrong where.
 */
export class ScriptValidationError extends KeelError<'SCRIPTED_SERVER_INVALID_STEP'> {
  readonly step: number
  readonly issues: readonly ScriptIssue[]

  constructor(step: number, issues: ScriptIssue[], source: string) {
    const list = issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; ')
    super(
      'SCRIPTED_SERVER_INVALID_STEP',
      `Scripted server: ${source} step ${step} is not a valid scripted response (${list}). ` +
        'Fix that step; see ScriptedResponse in @keel/scripted-server for the accepted shape.',
      { step, issues, source },
    )
    this.step = step
    this.issues = issues
  }
}

/** Checks one step; throws {@link ScriptValidationError} naming the step when it is invalid. */
export function parseScriptedResponse(value: unknown, step: number, source = 'script'): ScriptedResponse {
  const result = scriptedResponseSchema.safeParse(value)
  if (result.success) return result.data
  const { issues, more } = boundIssues(result.error.issues)
  if (more > 0) issues.push({ path: '', message: `… and ${more} more issue${more === 1 ? '' : 's'}` })
  throw new ScriptValidationError(step, issues, source)
}
