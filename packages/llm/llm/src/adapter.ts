import { KeelError } from '@keel/base'
import type { AssistantMessage, FinishReason, Message, TokenUsage } from './messages.js'

/** A tool as the model sees it: name, description and a JSON Schema of its input. */
export interface ToolSpec {
  name: string
  description: string
  /** A JSON Schema (draft 2020-12) object describing the tool's arguments. */
  parameters: Record<string, unknown>
}

/** One model call. */
export interface LlmRequest {
  /** Model id passed through to the provider; the adapter's default when absent. */
  model?: string
  messages: readonly Message[]
  tools?: readonly ToolSpec[]
  maxTokens?: number
  temperature?: number
  /**
   * How hard a reasoning model thinks (DeepSeek's `reasoning_effort`: `low`, `high`,
   * `max`). Sent only when given; a model's accepted levels are in
   * {@link ModelCapabilities.reasoningEfforts}.
   */
  reasoningEffort?: string
  /** Aborting stops the stream; the adapter then throws an `aborted` {@link LlmError}. */
  signal?: AbortSignal
}

/**
 * Facts about one streamed model call, kept with the message it produced (or with the
 * failed attempt). Times are Unix epoch milliseconds.
 */
export interface StreamRecord {
  provider: string
  model: string
  /** The provider's id for the response, when it sent one. */
  responseId?: string
  startedAt: number
  /** When the first content chunk arrived; absent if none did. */
  firstChunkAt?: number
  endedAt: number
  /** Absent when the stream did not finish (cut, aborted, failed). */
  finishReason?: FinishReason
  /**
   * How many chunks the stream delivered.
   * @integer
   * @minimum 0
   */
  chunks: number
}

/** A piece of a streamed model answer, in arrival order. */
export type LlmChunk =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  /** A fragment of tool call `index`; the first fragment of an index carries `id` and `name`. */
  | { type: 'tool-call-delta'; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: 'usage'; usage: TokenUsage }
  /** Always last on success: the assembled message and the call's facts. */
  | {
      type: 'finish'
      reason: FinishReason
      message: AssistantMessage
      usage?: TokenUsage
      record: StreamRecord
    }

/** What a model can take and give; callers budget context and output with it. */
export interface ModelCapabilities {
  /** Input + output tokens the model accepts in one call. */
  contextWindow: number
  /** Most tokens the model may produce in one answer (sent as `max_tokens` by the agent by default). */
  maxOutputTokens: number
  /** True when the model streams `reasoning_content`. */
  reasoning: boolean
  /**
   * The reasoning effort levels the model accepts (sent as `reasoning_effort`), lowest
   * first; absent or empty when the provider has no such knob for it.
   */
  reasoningEfforts?: readonly string[]
  /**
   * True when the adapter does not know the model: these are what it assumes of an unknown
   * id (a mistyped one, or a model newer than the adapter), not figures of the model.
   */
  assumed?: boolean
}

/** Streams model calls. Implementations: `@keel/deepseek` (any OpenAI-compatible endpoint). */
export interface LlmAdapter {
  /** Provider name recorded in {@link StreamRecord.provider}. */
  readonly provider: string
  /** Default model id. */
  readonly model: string
  /**
   * Where requests go (`https://api.deepseek.com`), without credentials; recorded in the
   * agent's `request/context` so a log says which route a step took. Optional.
   */
  readonly endpoint?: string
  /** Streams one call. Throws {@link LlmError} on failure (before or during the stream). */
  stream(request: LlmRequest): AsyncIterable<LlmChunk>
  /** The capabilities of `model` (the default model when absent), when the adapter knows them. */
  capabilities?(model?: string): ModelCapabilities
}

/**
 * How a model call failed; decides whether it is retried. The error's `code` is
 * `LLM_` + the kind in upper snake case (`context-overflow` → `LLM_CONTEXT_OVERFLOW`).
 * - `context-overflow`: the request is longer than the model's context window (HTTP 400
 *   whose message says so, or 413); a compaction plugin may shorten the history and retry.
 * - `stream-cut`: the stream ended without its finish chunk or `[DONE]`.
 * - `stream-idle`: the stream sent no byte for `idleTimeoutMs` (keep-alive comments count).
 * - `malformed-stream`: a stream line was not a valid chunk; retried like a cut stream.
 * - `insufficient-resources`: the provider stopped the answer with
 *   `finish_reason: insufficient_system_resource`; retried like an overloaded server.
 * - `unanswered-tool-call`: the adapter refused to send a message list in which an
 *   assistant tool call has no tool result (the provider would answer HTTP 400).
 * - `malformed-response`: a complete answer that cannot be used (a tool call without id).
 */
export type LlmErrorKind =
  | 'auth'
  | 'insufficient-balance'
  | 'invalid-request'
  | 'context-overflow'
  | 'unanswered-tool-call'
  | 'rate-limit'
  | 'server'
  | 'insufficient-resources'
  | 'network'
  | 'stream-cut'
  | 'stream-idle'
  | 'malformed-stream'
  | 'malformed-response'
  | 'aborted'

const retryableKinds: ReadonlySet<LlmErrorKind> = new Set([
  'rate-limit',
  'server',
  'insufficient-resources',
  'network',
  'stream-cut',
  'stream-idle',
  'malformed-stream',
])

/** A failed model call. `retryable` is derived from `kind`. */
export class LlmError extends KeelError<`LLM_${string}`> {
  readonly kind: LlmErrorKind
  readonly status?: number
  /** Server-requested wait (`Retry-After`), in milliseconds. */
  readonly retryAfterMs?: number
  /** What the stream had delivered before it failed, if anything. */
  readonly partial?: AssistantMessage
  /** Facts of the failed call (no `finishReason`), when the adapter got as far as sending it. */
  readonly record?: StreamRecord

  constructor(
    kind: LlmErrorKind,
    message: string,
    options: {
      status?: number
      retryAfterMs?: number
      partial?: AssistantMessage
      record?: StreamRecord
      cause?: unknown
    } = {},
  ) {
    super(
      `LLM_${kind.toUpperCase().replaceAll('-', '_')}`,
      message,
      { kind, status: options.status },
      { cause: options.cause },
    )
    this.kind = kind
    if (options.status !== undefined) this.status = options.status
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs
    if (options.partial !== undefined) this.partial = options.partial
    if (options.record !== undefined) this.record = options.record
  }

  get retryable(): boolean {
    return retryableKinds.has(this.kind)
  }
}
