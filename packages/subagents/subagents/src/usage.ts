// A session's token totals: its own model calls plus what its children reported.
import type { TokenUsage } from '@keel/llm'
import { type Projection, registerProjection, type Session } from '@keel/session'

/** Nothing used yet. */
export const NO_USAGE: TokenUsage = Object.freeze({ inputTokens: 0, outputTokens: 0, totalTokens: 0 })

/** The sum of two usages; an optional count is kept only when either side has it. */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const sum: TokenUsage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  }
  for (const key of ['cacheHitTokens', 'cacheMissTokens', 'reasoningTokens'] as const) {
    if (a[key] !== undefined || b[key] !== undefined) sum[key] = (a[key] ?? 0) + (b[key] ?? 0)
  }
  return sum
}

/**
 * The session's token totals: the usage of every `assistant/message` of its own, plus the
 * `usage` of every `subagent/settled` (each child's whole log, its own children included).
 * A fold over the log, so resume and fork get the same totals.
 */
export const usageTotalsProjection: Projection<TokenUsage> = registerProjection<TokenUsage>({
  name: '@keel/subagents/usage-totals',
  init: () => NO_USAGE,
  apply: (totals, event) => {
    if (event.type === 'assistant/message' && event.data.usage) return addUsage(totals, event.data.usage)
    if (event.type === 'subagent/settled') return addUsage(totals, event.data.usage)
    return totals
  },
  checkpoint: { version: 1 },
})

/** The model calls (steps) a session ran. */
export function stepsOf(session: Session): number {
  let steps = 0
  for (const event of session.events) if (event.type === 'step/start') steps++
  return steps
}
