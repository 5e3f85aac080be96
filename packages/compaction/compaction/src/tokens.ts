import type { Message } from '@keel/llm'
import type { Projection, Session } from '@keel/session'
import type { TokenSource } from './events.js'

/**
 * The estimator used when the provider has not reported usage for what is on the surface:
 * one token per 4 characters of text, reasoning, tool name and arguments (rounded up),
 * {@link IMAGE_TOKENS} per image, plus {@link MESSAGE_OVERHEAD_TOKENS} per message for
 * role and framing. It tends to overcount code and undercount CJK text; provider usage
 * replaces it as soon as a model call reports one.
 */
export const CHARS_PER_TOKEN = 4
/** Tokens counted for one image block by the estimator. */
export const IMAGE_TOKENS = 1_000
/** Tokens counted per message for its role and framing by the estimator. */
export const MESSAGE_OVERHEAD_TOKENS = 4

const cache = new WeakMap<Message, number>()

/** Estimated tokens of one message (see {@link CHARS_PER_TOKEN}). Cached per message object. */
export function estimateMessageTokens(message: Message): number {
  const cached = cache.get(message)
  if (cached !== undefined) return cached
  let chars = 0
  let images = 0
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
      case 'reasoning':
        chars += block.text.length
        break
      case 'tool-call':
        chars += block.name.length + block.arguments.length
        break
      case 'image':
        images++
        break
    }
  }
  if (message.role === 'tool') chars += message.toolName.length
  const tokens = Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS + MESSAGE_OVERHEAD_TOKENS
  if (Object.isFrozen(message)) cache.set(message, tokens)
  return tokens
}

/** Estimated tokens of a text (see {@link CHARS_PER_TOKEN}). */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN)
}

/** How big the surface is, and how that was found out. */
export interface SurfaceSize {
  readonly tokens: number
  /**
   * `provider`: the usage the provider reported for the latest assistant message still on
   * an unchanged surface, plus estimates for the nodes after it. `estimate`: estimates
   * only (no usage yet, or a replace since made it stale).
   */
  readonly source: TokenSource
}

/** The seq of the latest surface replace (any surface event whose `surfaceOp` is a replace), or -1. */
export const lastReplaceProjection: Projection<number> = {
  name: '@keel/compaction/last-replace',
  init: () => -1,
  apply: (last, event) =>
    'surfaceOp' in event && typeof event.surfaceOp === 'object' && event.surfaceOp !== null
      ? event.seq
      : last,
}

/**
 * What the estimator missed at the latest compaction (`tokensBefore - estimateBefore`, at
 * least 0): tool schemas and estimator error, measured against the provider's count. Added
 * to estimates after a compaction until the provider reports usage again, so the meter
 * does not drop by more than the compaction removed. A compaction that began from an
 * estimate carries the previous gap forward unchanged.
 */
export const estimatorGapProjection: Projection<number> = {
  name: '@keel/compaction/estimator-gap',
  init: () => 0,
  apply: (gap, event) =>
    event.type === 'compaction/start'
      ? Math.max(0, event.data.tokensBefore - event.data.estimateBefore)
      : gap,
}

/**
 * Measures the surface: the provider's count for the request that produced the latest
 * assistant message (`inputTokens + outputTokens`) when that message is on the surface and
 * no replace happened after it, plus the estimate of every surface node after it.
 * Otherwise (no usage yet, or a compaction made it stale) the estimate of the whole
 * surface plus the estimator's gap measured at the latest compaction. O(events since the
 * latest usage) when provider usage applies, O(surface) otherwise.
 */
export function measureSurface(session: Session): SurfaceSize {
  const events = session.events
  const lastReplace = session.project(lastReplaceProjection)
  let tail = 0
  // After the latest replace, every surface event is still a surface node, in seq order.
  for (let seq = events.length - 1; seq > lastReplace; seq--) {
    const event = events[seq]!
    if (!session.isOnSurface(seq)) continue
    if (event.type === 'assistant/message' && event.data.usage) {
      const usage = event.data.usage
      return { tokens: usage.inputTokens + usage.outputTokens + tail, source: 'provider' }
    }
    tail += estimateMessageTokens((event.data as { message: Message }).message)
  }
  return { tokens: estimateSurface(session) + session.project(estimatorGapProjection), source: 'estimate' }
}

/** The estimated size of the whole surface, ignoring provider usage. */
export function estimateSurface(session: Session): number {
  let total = 0
  for (const message of session.deriveMessages()) total += estimateMessageTokens(message)
  return total
}
