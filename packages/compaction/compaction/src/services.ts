import type { CompactionResult } from './compactor.js'
import type { SurfaceSize } from './tokens.js'

/** `compaction.run`: the compaction engine of this agent, for other plugins and UIs. */
export interface CompactionService {
  /**
   * Compacts now (the manual trigger), with optional focus instructions; `signal` stops the
   * summary call (nothing more is applied). Throws `COMPACTION_BUSY` while one runs.
   */
  compact(options?: {
    readonly instructions?: string
    readonly signal?: AbortSignal
  }): Promise<CompactionResult>
  /** Whether a compaction is running. */
  readonly busy: boolean
  /** The surface size now, and the threshold and window it is judged against. */
  measure(): SurfaceSize & { readonly thresholdTokens: number; readonly contextWindow: number }
}

declare module '@keel/tools' {
  interface ServiceMap {
    /** The compaction plugin's engine: compact now, read the context size. */
    'compaction.run': CompactionService
  }
}
