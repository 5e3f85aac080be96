import { type CompactionConfig, DEFAULT_CONTEXT_WINDOW } from './config.js'
import type { WindowSource } from './events.js'

/**
 * The model the agent runs, as far as compaction needs it (the plugin passes `ctx.model()`):
 * its id, the window the agent knows for it and where that came from, and the output budget
 * (`max_tokens`) its requests carry.
 */
export interface ActiveModel {
  readonly model: string
  readonly contextWindow?: number
  /** `selection` (a model-selection plugin), `option` (the agent's or preset's `contextWindows`), `adapter`. */
  readonly windowSource?: 'selection' | 'option' | 'adapter'
  /** The adapter does not know the model: its window is the adapter's assumption, not the model's. */
  readonly assumed?: boolean
  /** `max_tokens` of the agent's requests, when known. */
  readonly maxTokens?: number
}

/** The token budget one compaction judges the surface by. */
export interface Budget {
  /** The model whose window applies (the agent's). */
  readonly model: string
  readonly contextWindow: number
  readonly windowSource: WindowSource
  /** The output budget kept free for the answer (`max_tokens` of the agent's requests), 0 when unknown. */
  readonly reserveTokens: number
  /** Above this the automatic trigger compacts. */
  readonly thresholdTokens: number
  /** Pruning alone is enough at or below this. */
  readonly targetTokens: number
  /** The recent tail kept verbatim, before the half-the-surface cap. */
  readonly keepRecentTokens: number
}

/**
 * The window of the agent's model: the config's `contextWindows` entry for it, else the
 * window a model selection or the agent's `contextWindows` option gives, else the config's
 * `contextWindow`, else the adapter's table, else {@link DEFAULT_CONTEXT_WINDOW}. A window the
 * adapter only assumed for a model it does not know is recorded as `default`, as that is.
 */
function windowOf(config: CompactionConfig, active: ActiveModel): [number, WindowSource] {
  const listed = config.contextWindows[active.model]
  if (listed !== undefined) return [listed, 'config']
  if (active.contextWindow !== undefined && active.windowSource !== 'adapter') {
    return [active.contextWindow, active.windowSource === 'selection' ? 'selection' : 'agent']
  }
  if (config.contextWindow !== undefined) return [config.contextWindow, 'config']
  if (active.contextWindow !== undefined)
    return [active.contextWindow, active.assumed ? 'default' : 'adapter']
  return [DEFAULT_CONTEXT_WINDOW, 'default']
}

/**
 * The budget for `active`. The automatic threshold is `threshold` × the window, but never
 * more than the window minus the output budget the agent's requests reserve (`max_tokens`:
 * a prompt above that is refused by the provider), and never less than `target` × the
 * window (a `max_tokens` that eats the window is a configuration the threshold cannot fix).
 */
export function budgetOf(config: CompactionConfig, active: ActiveModel): Budget {
  const [contextWindow, windowSource] = windowOf(config, active)
  const reserveTokens = active.maxTokens ?? 0
  const targetTokens = Math.floor(contextWindow * config.target)
  const thresholdTokens = Math.max(
    targetTokens,
    Math.min(Math.floor(contextWindow * config.threshold), contextWindow - reserveTokens),
  )
  return {
    model: active.model,
    contextWindow,
    windowSource,
    reserveTokens,
    thresholdTokens,
    targetTokens,
    keepRecentTokens: Math.floor(contextWindow * config.keepRecent),
  }
}
