import type { AssistantMessage, ContentDelta, FinishReason, LlmChunk, TokenUsage } from '@keel/llm'
import { MessageAssembly } from '@keel/llm'

/** The parts of a streamed chunk the adapter reads (DeepSeek adds `reasoning_content`). */
export interface WireChunk {
  id?: string
  choices?: Array<{
    delta?: {
      content?: string | null
      reasoning_content?: string | null
      tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }>
    }
    finish_reason?: string | null
  }>
  usage?: WireUsage | null
}

/** Usage as DeepSeek (or an OpenAI-compatible server) reports it. */
export interface WireUsage {
  prompt_tokens?: number
  completion_tokens?: number
  total_tokens?: number
  prompt_cache_hit_tokens?: number
  prompt_cache_miss_tokens?: number
  prompt_tokens_details?: { cached_tokens?: number } | null
  completion_tokens_details?: { reasoning_tokens?: number } | null
}

/** Maps a wire `finish_reason` to ours. */
export function mapFinishReason(reason: string): FinishReason {
  switch (reason) {
    case 'stop':
      return 'stop'
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls'
    case 'length':
      return 'length'
    case 'content_filter':
      return 'content-filter'
    case 'insufficient_system_resource':
      return 'insufficient-resources'
    default:
      return 'other'
  }
}

/** Maps wire usage to {@link TokenUsage}; DeepSeek's cache fields first, OpenAI's `cached_tokens` as fallback. */
export function mapUsage(usage: WireUsage): TokenUsage {
  const input = usage.prompt_tokens ?? 0
  const output = usage.completion_tokens ?? 0
  const hit = usage.prompt_cache_hit_tokens ?? usage.prompt_tokens_details?.cached_tokens ?? undefined
  const miss = usage.prompt_cache_miss_tokens ?? (hit !== undefined ? Math.max(0, input - hit) : undefined)
  const reasoning = usage.completion_tokens_details?.reasoning_tokens ?? undefined
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: usage.total_tokens ?? input + output,
    ...(hit !== undefined ? { cacheHitTokens: hit } : {}),
    ...(miss !== undefined ? { cacheMissTokens: miss } : {}),
    ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
  }
}

/**
 * Folds wire chunks into {@link LlmChunk}s and, through the shared {@link MessageAssembly},
 * into the assistant message; also keeps the response id, finish reason and usage.
 */
export class StreamAssembly {
  readonly #message = new MessageAssembly()
  responseId: string | undefined
  finishReason: FinishReason | undefined
  usage: TokenUsage | undefined
  firstContentAt: number | undefined
  chunks = 0

  /** Takes one wire chunk and returns what it delivers, in order. */
  accept(chunk: WireChunk): LlmChunk[] {
    this.chunks++
    this.responseId ??= chunk.id
    const out: LlmChunk[] = []
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta ?? {}
      if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
        out.push(this.#deliver({ type: 'reasoning-delta', text: delta.reasoning_content }))
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        out.push(this.#deliver({ type: 'text-delta', text: delta.content }))
      }
      for (const fragment of delta.tool_calls ?? []) {
        const id = fragment.id || undefined
        const name = fragment.function?.name || undefined
        out.push(
          this.#deliver({
            type: 'tool-call-delta',
            index: fragment.index,
            ...(id !== undefined ? { id } : {}),
            ...(name !== undefined ? { name } : {}),
            argumentsDelta: fragment.function?.arguments ?? '',
          }),
        )
      }
      if (choice.finish_reason) {
        this.finishReason = mapFinishReason(choice.finish_reason)
        this.#message.finished = true
      }
    }
    if (out.length > 0) this.firstContentAt ??= Date.now()
    if (chunk.usage) {
      this.usage = mapUsage(chunk.usage)
      out.push({ type: 'usage', usage: this.usage })
    }
    return out
  }

  /** The complete message. Throws `malformed-response` when a tool call never got an id or a name. */
  message(): AssistantMessage {
    return this.#message.message()
  }

  /** What was delivered so far (see {@link MessageAssembly.partial}). */
  partial(): AssistantMessage {
    return this.#message.partial()
  }

  /** True when anything (text, reasoning or a tool call fragment) was delivered. */
  get delivered(): boolean {
    return this.#message.delivered
  }

  #deliver<D extends ContentDelta>(delta: D): D {
    this.#message.accept(delta)
    return delta
  }
}
