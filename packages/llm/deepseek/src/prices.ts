import type { ModelPrice, PriceTable } from '@keel/llm'

/**
 * DeepSeek's weekday peak windows: Beijing time 09:00–12:00 and 14:00–18:00, Monday to
 * Friday; every other hour, weekends included, is off-peak at half the peak rates. DeepSeek
 * also bills Chinese public holidays off-peak, which this table does not know: on those days
 * the cost shown is an upper bound (the peak rate).
 */
const PEAK = {
  peakHoursUtc: [
    { from: 1, to: 4 },
    { from: 6, to: 10 },
  ],
  peakDays: [1, 2, 3, 4, 5],
}

const SOURCE = 'api-docs.deepseek.com/quick_start/pricing, read 2026-12'

const flash: ModelPrice = {
  rates: { cacheHit: 0.006, cacheMiss: 0.3, output: 1.2 },
  offPeak: { rates: { cacheHit: 0.003, cacheMiss: 0.15, output: 0.6 }, ...PEAK },
  source: SOURCE,
}

const pro: ModelPrice = {
  rates: { cacheHit: 0.044, cacheMiss: 1.32, output: 3.96 },
  offPeak: { rates: { cacheHit: 0.022, cacheMiss: 0.66, output: 1.98 }, ...PEAK },
  source: SOURCE,
}

/**
 * DeepSeek's published prices (US dollars per million tokens). The legacy names
 * `deepseek-v4-flash`, `deepseek-chat` and `deepseek-reasoner` are served by the Flash
 * model and billed at its price. A preset overrides any entry (`prices` in its file).
 */
export const deepSeekPrices: PriceTable = Object.freeze({
  'deepseek-flash': flash,
  'deepseek-v4-flash': flash,
  'deepseek-chat': flash,
  'deepseek-reasoner': flash,
  'deepseek-v4-pro': pro,
})
