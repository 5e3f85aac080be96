import { callCost, type PriceTable, type TokenUsage } from '@keel/llm'
import type { SessionEvent } from '@keel/session'

/** Token and cost totals of one model (or of the whole session). */
export interface UsageTotals {
  /** Model calls that reported usage. */
  calls: number
  inputTokens: number
  outputTokens: number
  cacheHitTokens: number
  reasoningTokens: number
  /** US dollars at the published prices; calls of unpriced models count 0 (see `unpriced`). */
  costUsd: number
}

/** What a session's model calls used and cost, and how full the context is. */
export interface SessionUsage {
  readonly total: UsageTotals
  /** The same by model id, in the order the models were first used. */
  readonly byModel: ReadonlyMap<string, UsageTotals>
  /** Models used that the price table does not know (their calls are counted at $0). */
  readonly unpriced: readonly string[]
  /**
   * Tokens of the last model call (its input and its output): how much of the model's
   * context window the conversation filled then. Undefined before the first call.
   */
  readonly lastContextTokens: number | undefined
  /** The model of the last call. */
  readonly lastModel: string | undefined
}

const zero = (): UsageTotals => ({
  calls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheHitTokens: 0,
  reasoningTokens: 0,
  costUsd: 0,
})

function add(totals: UsageTotals, usage: TokenUsage, cost: number): void {
  totals.calls++
  totals.inputTokens += usage.inputTokens
  totals.outputTokens += usage.outputTokens
  totals.cacheHitTokens += usage.cacheHitTokens ?? 0
  totals.reasoningTokens += usage.reasoningTokens ?? 0
  totals.costUsd += cost
}

/**
 * Folds a session's `assistant/message` events (each model call's usage, model and start
 * time) into totals, each call priced at the tier in force when it started. Calls that
 * reported no usage are not counted (a stream the provider cut before its usage chunk).
 */
export function sessionUsage(events: readonly SessionEvent[], prices: PriceTable): SessionUsage {
  const total = zero()
  const byModel = new Map<string, UsageTotals>()
  const unpriced = new Set<string>()
  let lastContextTokens: number | undefined
  let lastModel: string | undefined
  for (const event of events) {
    if (event.type !== 'assistant/message' || event.data.usage === undefined) continue
    const { usage, stream } = event.data
    const price = prices[stream.model]
    if (!price) unpriced.add(stream.model)
    const cost = price ? callCost(usage, price, stream.startedAt) : 0
    let model = byModel.get(stream.model)
    if (!model) {
      model = zero()
      byModel.set(stream.model, model)
    }
    add(model, usage, cost)
    add(total, usage, cost)
    lastContextTokens = usage.inputTokens + usage.outputTokens
    lastModel = stream.model
  }
  return { total, byModel, unpriced: [...unpriced], lastContextTokens, lastModel }
}

/** `1234` → `1.2k`, `1048576` → `1.0M`. */
export function shortCount(n: number): string {
  if (n < 1000) return String(n)
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`
  return `${(n / 1_000_000).toFixed(1)}M`
}

/** Dollars with enough digits to see a cheap session move: `$0.0042`, `$1.23`. */
export function dollars(usd: number): string {
  if (usd === 0) return '$0'
  if (usd < 0.0001) return '<$0.0001'
  if (usd < 0.01) return `$${usd.toFixed(4)}`
  return `$${usd.toFixed(2)}`
}
