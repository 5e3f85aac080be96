// What the model calls of a session cost: one price table (the models' published prices,
// which a preset's `prices` override) and the cost of the usage the log records. Used by
// `keel -p`'s `total_cost_usd` and the HTML export's totals; meant for the interactive UI's
// cost display too (one table, one rule).
import type { TokenUsage } from '@keel/llm'
import type { ModelPrice, Preset } from '@keel/presets'
import type { SessionEvent } from '@keel/session'

/**
 * Published prices in US dollars per million tokens, as DeepSeek's pricing page lists them
 * (checked 2026-04-30: cache-hit input at one tenth of the launch price since 2026-04-26;
 * `deepseek-chat` and `deepseek-reasoner` are served by V4 Flash, non-thinking and thinking,
 * until their retirement). A preset's `prices` override any of them.
 */
export const PUBLISHED_PRICES: Readonly<Record<string, ModelPrice>> = {
  'deepseek-v4-flash': { input: 0.14, cachedInput: 0.0028, output: 0.28 },
  'deepseek-v4-pro': { input: 0.435, cachedInput: 0.003625, output: 0.87 },
  'deepseek-chat': { input: 0.14, cachedInput: 0.0028, output: 0.28 },
  'deepseek-reasoner': { input: 0.14, cachedInput: 0.0028, output: 0.28 },
}

/** Prices by model id. */
export type PriceTable = ReadonlyMap<string, ModelPrice>

/** The published prices with the preset's `prices` over them. */
export function priceTable(preset?: Pick<Preset, 'prices'>): PriceTable {
  return new Map([...Object.entries(PUBLISHED_PRICES), ...Object.entries(preset?.prices ?? {})])
}

/** The cost of one call's usage in US dollars (cache hits at the cached price, the rest at the input price). */
export function costOfUsage(usage: TokenUsage, price: ModelPrice): number {
  const hit = usage.cacheHitTokens ?? 0
  const miss = usage.cacheMissTokens ?? Math.max(0, usage.inputTokens - hit)
  return (miss * price.input + hit * price.cachedInput + usage.outputTokens * price.output) / 1_000_000
}

/** What a stretch of the log cost. */
export interface Cost {
  /** US dollars; `undefined` when a call's model has no price. */
  readonly usd: number | undefined
  /** Models of calls with usage but no price, sorted. */
  readonly unpriced: readonly string[]
}

/**
 * The cost of the model calls among `events` (their `assistant/message` usage, each priced
 * by the model its stream record names). Rounded to 12 significant digits, so sums of small
 * prices read cleanly.
 */
export function costOf(events: readonly SessionEvent[], table: PriceTable): Cost {
  let usd = 0
  const unpriced = new Set<string>()
  for (const event of events) {
    if (event.type !== 'assistant/message' || !event.data.usage) continue
    const model = event.data.stream.model
    const price = table.get(model)
    if (price === undefined) unpriced.add(model)
    else usd += costOfUsage(event.data.usage, price)
  }
  return {
    usd: unpriced.size > 0 ? undefined : Number(usd.toPrecision(12)),
    unpriced: [...unpriced].sort(),
  }
}
