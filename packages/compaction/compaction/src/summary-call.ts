import { type Clock, type ModelRetryPolicy, sleep } from '@keel/agent'
import {
  type LlmAdapter,
  LlmError,
  type Message,
  messageText,
  type TextBlock,
  type TokenUsage,
  type ToolSpec,
} from '@keel/llm'

/** The outcome of one summary call. */
export interface SummaryCall {
  readonly blocks: TextBlock[]
  readonly provider: string
  readonly model: string
  readonly usage?: TokenUsage
}

/** One summary request: the agent's prefix (system, tools, messages up to the range end), then the instruction. */
export interface SummaryRequest {
  readonly messages: readonly Message[]
  readonly tools: readonly ToolSpec[]
  readonly instruction: string
  readonly model?: string
  readonly maxTokens: number
  readonly signal?: AbortSignal
}

/**
 * One model call: `messages` as the model last saw them, then the instruction as a final
 * user message. The agent's tool specs are sent as its requests send them, so the request
 * repeats the agent's last one up to the range and a provider's prefix cache serves it;
 * the instruction forbids tool calls, and any the model makes anyway are ignored (only its
 * text counts). Throws {@link LlmError} when the call fails.
 */
export async function callSummary(llm: LlmAdapter, request: SummaryRequest): Promise<SummaryCall> {
  const stream = llm.stream({
    ...(request.model === undefined ? {} : { model: request.model }),
    messages: [...request.messages, { role: 'user', content: [{ type: 'text', text: request.instruction }] }],
    ...(request.tools.length === 0 ? {} : { tools: request.tools }),
    maxTokens: request.maxTokens,
    ...(request.signal === undefined ? {} : { signal: request.signal }),
  })
  let usage: TokenUsage | undefined
  for await (const chunk of stream) {
    if (chunk.type === 'usage') usage = chunk.usage
    if (chunk.type !== 'finish') continue
    const text = messageText(chunk.message).trim()
    const finalUsage = chunk.usage ?? usage
    return {
      blocks: text === '' ? [] : [{ type: 'text', text }],
      provider: chunk.record.provider,
      model: chunk.record.model,
      ...(finalUsage === undefined ? {} : { usage: finalUsage }),
    }
  }
  throw new LlmError('malformed-response', `the ${llm.provider} summary stream ended without a finish chunk`)
}

/** One retry of a summary call, as `compaction/retry` records it. */
export interface SummaryRetry {
  readonly attempt: number
  readonly delayMs: number
  readonly error: LlmError
}

/** How summary calls are retried, and where each call and retry is reported. */
export interface RetryPlan {
  readonly policy: ModelRetryPolicy
  readonly clock: Clock
  /** Called before every call (the first and each retry). */
  readonly onCall: () => void
  /** Called before each wait. */
  readonly onRetry: (retry: SummaryRetry) => void
}

/**
 * {@link callSummary} retried as the agent retries its own calls: a retryable failure
 * (rate limit, server error, network, cut stream) waits the policy's backoff (never less
 * than `Retry-After`) and calls again, at most `maxRetries` times. An abort during a call
 * or a wait throws the `aborted` {@link LlmError} at once.
 */
export async function callSummaryWithRetries(
  llm: LlmAdapter,
  request: SummaryRequest,
  plan: RetryPlan,
): Promise<SummaryCall> {
  for (let failures = 0; ; ) {
    plan.onCall()
    try {
      return await callSummary(llm, request)
    } catch (error) {
      const aborted = request.signal?.aborted === true
      if (aborted || !(error instanceof LlmError) || !error.retryable || failures >= plan.policy.maxRetries) {
        if (aborted && !(error instanceof LlmError && error.kind === 'aborted')) {
          throw new LlmError('aborted', 'the summary call was cancelled', { cause: error })
        }
        throw error
      }
      failures++
      const delayMs = plan.policy.delay(failures, error.retryAfterMs)
      plan.onRetry({ attempt: failures, delayMs, error })
      const signal = request.signal ?? new AbortController().signal
      if (!(await sleep(plan.clock, delayMs, signal))) {
        throw new LlmError('aborted', 'the summary call was cancelled while waiting to retry')
      }
    }
  }
}
