import type { Message } from '@keel/llm'
import { type Projection, registerProjection, type Session, type SessionEvent } from '@keel/session'
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

/**
 * What the meter needs from the log, folded once: the seq of the latest surface replace,
 * the seq of the latest `assistant/message` carrying provider usage (each -1 when none),
 * and the estimator's gap — what it missed at the latest compaction (`tokensBefore -
 * estimateBefore`, at least 0: tool schemas, estimator error), added to estimates after a
 * compaction until the provider reports usage again, so the meter does not drop by more
 * than the compaction removed.
 */
export interface MeterState {
  readonly lastReplace: number
  readonly latestUsage: number
  readonly gap: number
}

/** Folds {@link MeterState}. */
export const meterProjection: Projection<MeterState> = registerProjection<MeterState>({
  name: '@keel/compaction/meter',
  init: () => ({ lastReplace: -1, latestUsage: -1, gap: 0 }),
  apply(state, event) {
    if (event.type === 'assistant/message' && event.data.usage) {
      return { ...state, latestUsage: event.seq, lastReplace: replaceSeq(event, state.lastReplace) }
    }
    if (event.type === 'compaction/start') {
      return { ...state, gap: Math.max(0, event.data.tokensBefore - event.data.estimateBefore) }
    }
    const lastReplace = replaceSeq(event, state.lastReplace)
    return lastReplace === state.lastReplace ? state : { ...state, lastReplace }
  },
  checkpoint: { version: 1 },
})

function replaceSeq(event: SessionEvent, last: number): number {
  return 'surfaceOp' in event && typeof event.surfaceOp === 'object' && event.surfaceOp !== null
    ? event.seq
    : last
}

/**
 * Measures the surface: the provider's count for the request that produced the latest
 * assistant message (`inputTokens + outputTokens`) when that message is on the surface and
 * no replace happened after it, plus the estimate of every surface node after it.
 * Otherwise (no usage yet, or a compaction made it stale) the estimate of the whole
 * surface plus the estimator's gap measured at the latest compaction. O(events since the
 * latest usage) when provider usage applies, O(surface) otherwise (cached per message).
 */
export function measureSurface(session: Session): SurfaceSize {
  const meter = session.project(meterProjection)
  const usageSeq = meter.latestUsage
  if (usageSeq > meter.lastReplace && session.isOnSurface(usageSeq)) {
    const events = session.events
    const usageEvent = events[usageSeq]!
    if (usageEvent.type === 'assistant/message' && usageEvent.data.usage) {
      const { inputTokens, outputTokens } = usageEvent.data.usage
      let tail = 0
      // After the latest replace, every surface event is still a surface node.
      for (let seq = events.length - 1; seq > usageSeq; seq--) {
        if (session.isOnSurface(seq))
          tail += estimateMessageTokens((events[seq]!.data as { message: Message }).message)
      }
      return { tokens: inputTokens + outputTokens + tail, source: 'provider' }
    }
  }
  return { tokens: estimateSurface(session) + meter.gap, source: 'estimate' }
}

/** The estimated size of the whole surface, ignoring provider usage. */
export function estimateSurface(session: Session): number {
  let total = 0
  for (const message of session.deriveMessages()) total += estimateMessageTokens(message)
  return total
}

/** A count with thousands separators (`12,345`); `toLocaleString` is far slower on hot paths. */
export function formatCount(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}
