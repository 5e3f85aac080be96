// What the model calls of a session cost: one price table (the provider's published prices,
// `deepSeekPrices` from @keel/deepseek, with a preset's `prices` over them) and one fold of
// the log's usage (`sessionUsage`). Used by the interactive footer, `/cost`, `keel -p`'s
// `total_cost_usd` and the HTML export's totals: one table, one rule.
import { deepSeekPrices } from '@keel/deepseek'
import type { PriceTable } from '@keel/llm'
import type { Preset } from '@keel/presets'
import type { SessionEvent } from '@keel/session'
import { sessionUsage } from './session-usage.js'

export type { PriceTable } from '@keel/llm'

/** The published prices with the preset's `prices` over them. */
export function priceTable(preset?: Pick<Preset, 'prices'>): PriceTable {
  return { ...deepSeekPrices, ...preset?.prices }
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
 * by the model its stream record names at the tier in force when it started). Rounded to 12
 * significant digits, so sums of small prices read cleanly.
 */
export function costOf(events: readonly SessionEvent[], table: PriceTable): Cost {
  const usage = sessionUsage(events, table)
  return {
    usd: usage.unpriced.length > 0 ? undefined : Number(usage.total.costUsd.toPrecision(12)),
    unpriced: [...usage.unpriced].sort(),
  }
}
