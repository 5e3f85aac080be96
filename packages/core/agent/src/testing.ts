import { type LlmAdapter, LlmError } from '@keel/llm'
import type { Clock, PluginHostView } from './plugin.js'

/**
 * A {@link Clock} for tests (`@keel/agent/testing`): time moves only when told, and timers
 * that come due run in order as it moves, so plugins with timers (`@keel/schedule`) are
 * tested exactly and fast, with no real waiting.
 */
export class ManualClock implements Clock {
  #now: number
  #next = 1
  readonly #timers = new Map<number, { at: number; callback: () => void }>()
  /** Every delay a timer was requested with, in order. */
  readonly requested: number[] = []

  /** Starts at `now` (Unix ms); default Monday 5 January 2026, 08:00 UTC. */
  constructor(now = Date.UTC(2026, 0, 5, 8, 0, 0)) {
    this.#now = now
  }

  now(): number {
    return this.#now
  }

  setTimeout(callback: () => void, ms: number): unknown {
    this.requested.push(ms)
    const id = this.#next++
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), callback })
    return id
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number)
  }

  /**
   * Moves time forward by `ms`, running every timer that comes due, earliest first, and
   * letting the promise work each one starts finish before the clock moves on, as it
   * would in real time.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms
    for (;;) {
      let first: [number, { at: number; callback: () => void }] | undefined
      for (const entry of this.#timers) if (!first || entry[1].at < first[1].at) first = entry
      if (!first || first[1].at > target) break
      this.#timers.delete(first[0])
      this.#now = Math.max(this.#now, first[1].at)
      first[1].callback()
      await new Promise((resolve) => setImmediate(resolve))
    }
    this.#now = target
  }

  /** How many timers are armed. */
  get pending(): number {
    return this.#timers.size
  }
}

/**
 * An {@link LlmAdapter} for plugin tests that build a `PluginContext` by hand and never
 * call the model: any call fails with an `LlmError` (`network`) saying so.
 */
export function offlineLlm(): LlmAdapter {
  return {
    provider: 'offline',
    model: 'offline',
    stream(): AsyncIterable<never> {
      return {
        [Symbol.asyncIterator]: () => ({
          next: () =>
            Promise.reject(new LlmError('network', 'offlineLlm: this test context has no model to call')),
        }),
      }
    },
  }
}

/**
 * A {@link PluginHostView} for hand-built plugin contexts in tests: `beforeCompaction`
 * proceeds with the instructions it was given (no other plugin is there to object), and
 * `sessionStart` adds no context (no other plugin is there to add any).
 */
export function soloHost(): PluginHostView {
  return {
    beforeCompaction: async (info) => ({
      decision:
        info.instructions === undefined
          ? { action: 'proceed' }
          : { action: 'proceed', instructions: info.instructions },
    }),
    sessionStart: async () => [],
  }
}
