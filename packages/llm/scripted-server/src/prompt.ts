import { createHash } from 'node:crypto'
import type { WireUsage } from './protocol.js'

/** A request body as far as its prompt goes. */
interface PromptBody {
  model?: unknown
  messages?: unknown
  tools?: unknown
  max_tokens?: unknown
}

/** Characters per token of the server's prompt count (the same rough rule as its default usage). */
const CHARS_PER_TOKEN = 4

/** The prompt cache works in blocks of this many tokens, as DeepSeek's context cache does (64). */
export const CACHE_BLOCK_TOKENS = 64

const BLOCK_CHARS = CACHE_BLOCK_TOKENS * CHARS_PER_TOKEN

/** What the model reads of a request, in order: the tool schemas, then the messages. */
function promptText(body: PromptBody): string {
  return `${JSON.stringify(body.tools ?? [])}${JSON.stringify(body.messages ?? [])}`
}

/** The prompt tokens of a request as the server counts them: tools and messages, 4 characters a token. */
export function promptTokensOf(body: PromptBody): number {
  return Math.ceil(promptText(body).length / CHARS_PER_TOKEN)
}

/**
 * The message of the HTTP 400 a request longer than `window` gets, in the words DeepSeek and
 * OpenAI use (prompt plus the `max_tokens` the request reserves for the answer), or null when
 * it fits.
 */
export function contextOverflowMessage(body: PromptBody, window: number): string | null {
  const prompt = promptTokensOf(body)
  const completion = typeof body.max_tokens === 'number' ? body.max_tokens : 0
  if (prompt + completion <= window) return null
  return (
    `This model's maximum context length is ${window} tokens. However, you requested ${prompt + completion} tokens ` +
    `(${prompt} in the messages, ${completion} in the completion). Please reduce the length of the messages or completion.`
  )
}

/**
 * A prefix cache like DeepSeek's: a request's prompt (per model: tool schemas, then messages)
 * is cut into {@link CACHE_BLOCK_TOKENS}-token blocks, and the leading blocks that an earlier
 * request already sent are hits. Only whole blocks count; a block is remembered by the digest
 * of everything up to its end, so a hit always means an identical prefix.
 */
export class PromptCache {
  readonly #seen = new Set<string>()

  /** The prompt and hit tokens of `body`; then remembers its blocks for later requests. */
  lookup(body: PromptBody): { promptTokens: number; hitTokens: number } {
    const text = promptText(body)
    const hash = createHash('sha256').update(`${String(body.model ?? '')}\n`)
    let hitBlocks = 0
    let missed = false
    for (let end = BLOCK_CHARS; end <= text.length; end += BLOCK_CHARS) {
      hash.update(text.slice(end - BLOCK_CHARS, end))
      const key = hash.copy().digest('base64')
      if (!missed && this.#seen.has(key)) hitBlocks++
      else missed = true
      this.#seen.add(key)
    }
    const promptTokens = Math.ceil(text.length / CHARS_PER_TOKEN)
    return { promptTokens, hitTokens: Math.min(promptTokens, hitBlocks * CACHE_BLOCK_TOKENS) }
  }
}

/**
 * The usage a response reports with the prompt cache on: a step's own `cacheHitTokens` win;
 * otherwise the cache's hits, and (when the step scripted no usage) the cache's prompt count,
 * which includes the tool schemas.
 */
export function withCacheHits(
  usage: WireUsage,
  cached: { promptTokens: number; hitTokens: number },
  scripted: { promptTokens: number; cacheHitTokens?: number } | undefined,
): WireUsage {
  if (scripted?.cacheHitTokens !== undefined) return usage
  const prompt = scripted === undefined ? cached.promptTokens : usage.prompt_tokens
  const hit = Math.min(prompt, cached.hitTokens)
  return {
    ...usage,
    prompt_tokens: prompt,
    total_tokens: prompt + usage.completion_tokens,
    prompt_cache_hit_tokens: hit,
    prompt_cache_miss_tokens: prompt - hit,
  }
}
