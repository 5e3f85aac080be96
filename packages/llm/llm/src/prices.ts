import { z } from 'zod'
import type { TokenUsage } from './messages.js'

/** US dollars per million tokens of each kind. */
export const tokenRatesSchema = z.strictObject({
  /** Input tokens the provider served from its prompt cache. */
  cacheHit: z.number().nonnegative(),
  /** Input tokens not served from the cache (all input when the provider reports no split). */
  cacheMiss: z.number().nonnegative(),
  output: z.number().nonnegative(),
})

/** A daily window in UTC, `from` inclusive, `to` exclusive, in hours (0–24). */
export const utcWindowSchema = z.strictObject({
  from: z.number().min(0).max(24),
  to: z.number().min(0).max(24),
})

/**
 * What a model costs, as its provider publishes it: the rates, and when the provider bills
 * two tiers (DeepSeek since August 2026), the off-peak rates and the peak windows (UTC,
 * on `peakDays`, 0 = Sunday; every day when absent). A preset overrides a model's entry with
 * its own (`prices` in the preset file).
 */
export const modelPriceSchema = z.strictObject({
  /** The rates (at peak, when there are tiers). */
  rates: tokenRatesSchema,
  offPeak: z
    .strictObject({
      rates: tokenRatesSchema,
      peakHoursUtc: z.array(utcWindowSchema).min(1),
      peakDays: z.array(z.number().int().min(0).max(6)).optional(),
    })
    .optional(),
  /** Where the figures come from and when they were read (shown by `/cost`). */
  source: z.string().optional(),
})

/** See {@link modelPriceSchema}. */
export type ModelPrice = z.infer<typeof modelPriceSchema>

/** A table of prices by model id. */
export type PriceTable = Readonly<Record<string, ModelPrice>>

/** Whether `at` (epoch ms) falls in a peak window of `price` (always true for a single-tier price). */
export function isPeak(price: ModelPrice, at: number): boolean {
  const tiers = price.offPeak
  if (!tiers) return true
  const date = new Date(at)
  if (tiers.peakDays && !tiers.peakDays.includes(date.getUTCDay())) return false
  const hour = date.getUTCHours() + date.getUTCMinutes() / 60
  return tiers.peakHoursUtc.some((w) => hour >= w.from && hour < w.to)
}

/**
 * The cost in US dollars of one model call's usage, billed at the tier in force at `at`
 * (the call's start). Input without a cache split is billed as cache misses.
 */
export function callCost(usage: TokenUsage, price: ModelPrice, at: number): number {
  const rates = isPeak(price, at) || !price.offPeak ? price.rates : price.offPeak.rates
  const hit = usage.cacheHitTokens ?? 0
  const miss = usage.cacheMissTokens ?? Math.max(0, usage.inputTokens - hit)
  return (hit * rates.cacheHit + miss * rates.cacheMiss + usage.outputTokens * rates.output) / 1_000_000
}
