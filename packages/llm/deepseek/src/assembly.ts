import type {
  AssistantMessage,
  FinishReason,
  LlmChunk,
  ReasoningBlock,
  TextBlock,
  TokenUsage,
  ToolCallBlock,
  ToolCallId,
} from '@keel/llm'
import { LlmError } from '@keel/llm'

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

interface PendingCall {
  type: 'call'
  index: number
  id?: string
  name?: string
  arguments: string
}

type Piece = TextBlock | ReasoningBlock | PendingCall

/**
 * Folds chunks into {@link LlmChunk}s and the assistant message. Consecutive text (or
 * reasoning) deltas form one block; a tool call takes its place at its first fragment and
 * later fragments for its index append to its raw arguments.
 */
export class StreamAssembly {
  readonly #pieces: Piece[] = []
  readonly #calls = new Map<number, PendingCall>()
  #highestIndex = -1
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
        this.#appendText('reasoning', delta.reasoning_content)
        out.push({ type: 'reasoning-delta', text: delta.reasoning_content })
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        this.#appendText('text', delta.content)
        out.push({ type: 'text-delta', text: delta.content })
      }
      for (const fragment of delta.tool_calls ?? []) {
        const argumentsDelta = fragment.function?.arguments ?? ''
        const id = fragment.id || undefined
        const name = fragment.function?.name || undefined
        let call = this.#calls.get(fragment.index)
        if (!call) {
          call = { type: 'call', index: fragment.index, arguments: '' }
          this.#calls.set(fragment.index, call)
          this.#pieces.push(call)
        }
        call.id ??= id
        call.name ??= name
        call.arguments += argumentsDelta
        if (fragment.index > this.#highestIndex) this.#highestIndex = fragment.index
        out.push({
          type: 'tool-call-delta',
          index: fragment.index,
          ...(id !== undefined ? { id } : {}),
          ...(name !== undefined ? { name } : {}),
          argumentsDelta,
        })
      }
      if (choice.finish_reason) this.finishReason = mapFinishReason(choice.finish_reason)
    }
    if (out.length > 0) this.firstContentAt ??= Date.now()
    if (chunk.usage) {
      this.usage = mapUsage(chunk.usage)
      out.push({ type: 'usage', usage: this.usage })
    }
    return out
  }

  /**
   * The complete message. Throws `malformed-response` when a tool call never got an id or
   * a name.
   */
  message(): AssistantMessage {
    const content: AssistantMessage['content'] = []
    for (const piece of this.#pieces) {
      if (piece.type === 'text' || piece.type === 'reasoning') {
        content.push({ ...piece })
        continue
      }
      if (!piece.id || !piece.name) {
        throw new LlmError(
          'malformed-response',
          `Tool call #${piece.index} of the stream never received ${piece.id ? 'a name' : 'an id'}.`,
          { partial: this.partial() },
        )
      }
      content.push(this.#block(piece, piece.id, piece.name))
    }
    return { role: 'assistant', content }
  }

  /**
   * What was delivered so far, for an interrupted stream: text and reasoning, and the tool
   * calls known to be complete (a later index started, or the finish reason arrived). The
   * last call, possibly cut anywhere, and calls without id or name are left out.
   */
  partial(): AssistantMessage {
    const content: AssistantMessage['content'] = []
    for (const piece of this.#pieces) {
      if (piece.type === 'text' || piece.type === 'reasoning') content.push({ ...piece })
      else if (
        piece.id &&
        piece.name &&
        (this.finishReason !== undefined || piece.index < this.#highestIndex)
      ) {
        content.push(this.#block(piece, piece.id, piece.name))
      }
    }
    return { role: 'assistant', content }
  }

  /** True when anything (text, reasoning or a tool call fragment) was delivered. */
  get delivered(): boolean {
    return this.#pieces.length > 0
  }

  #block(call: PendingCall, id: string, name: string): ToolCallBlock {
    return { type: 'tool-call', id: id as ToolCallId, name, arguments: call.arguments }
  }

  #appendText(type: 'text' | 'reasoning', text: string): void {
    const last = this.#pieces.at(-1)
    if (last && last.type === type) last.text += text
    else this.#pieces.push({ type, text })
  }
}
