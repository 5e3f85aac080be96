import type { TextBlock, TokenUsage } from '@keel/llm'
import type { ErrorRecord, SessionSeq } from '@keel/session'
import './events.generated.js'

/**
 * What started a compaction.
 * - `auto`: before a step, the surface was over the configured fraction of the window.
 * - `manual`: the user asked (the `compact()` API or the `/compact` command).
 * - `overflow`: the provider refused a request as too long for its context window.
 */
export type CompactionTrigger = 'auto' | 'manual' | 'overflow'

/** How the token count of the surface was obtained. */
export type TokenSource = 'provider' | 'estimate'

/**
 * A run of surface nodes, by the seqs of its first and last node (both inclusive), as they
 * were on the surface when the compaction replaced them.
 */
export interface CompactionRange {
  startSeq: SessionSeq
  endSeq: SessionSeq
}

declare module '@keel/session' {
  interface SessionEventMap {
    // Every compaction event is appended `ignorable`: the surface is decided by the core
    // replace events that follow them, so a reader without this plugin derives the same
    // messages by skipping them.

    /**
     * A compaction began and holds the session's compaction lock until its
     * `compaction/end`. Only one runs at a time. A start without an end is what a process
     * that died mid-compaction leaves behind; it does not block later compactions (the
     * lock lives in the process), and nothing it began is applied unless its replace
     * event was committed. `turn` is the open turn, or null for a standalone manual
     * compaction between turns. `tokensBefore` is the surface size when it began
     * (provider-reported usage plus estimates, or estimates only, per `tokenSource`) and
     * `estimateBefore` the estimator's count at the same moment: their difference is what
     * the estimator misses (tool schemas, estimator error) and is added to estimates until
     * the provider reports usage again. `thresholdTokens` is the automatic trigger level
     * for `contextWindow`.
     * @example {"turn":1,"trigger":"auto","tokensBefore":90000,"tokenSource":"provider","estimateBefore":88000,"contextWindow":128000,"thresholdTokens":89600}
     */
    'compaction/start': {
      turn: number | null
      trigger: CompactionTrigger
      /** What the user asked the summary to focus on (`/compact <instructions>`). */
      instructions?: string
      /** @integer @minimum 0 */
      tokensBefore: number
      tokenSource: TokenSource
      /** @integer @minimum 0 */
      estimateBefore: number
      /** @integer @minimum 1 */
      contextWindow: number
      /** @integer @minimum 0 */
      thresholdTokens: number
    }

    /**
     * One old tool output was pruned: the `tool/result` right after this event replaces
     * the result at `range` (one node) with a short placeholder naming the tool, the
     * output's size and where the full output is. `start` is the seq of the
     * `compaction/start` this belongs to; `shadowedSeqs` are the seqs of the shadowed
     * nodes and `tokens` their estimated size. No model call is made.
     * @example {"start":4,"range":{"startSeq":2,"endSeq":2},"shadowedSeqs":[2],"tokens":1200}
     */
    'compaction/prune': {
      start: SessionSeq
      range: CompactionRange
      shadowedSeqs: SessionSeq[]
      /** @integer @minimum 0 */
      tokens: number
    }

    /**
     * The model summarized `range`. Immediately followed by the `user/message` (source
     * `compaction/summary`) that replaces the range on the surface; that message opens
     * with a notice telling the model what was compacted, then the summary, then the
     * working state rebuilt from the log (todo list, approval policy, sandbox mode, files
     * read and modified). `summary` holds the model's text blocks; `tokens` is the
     * estimated size of the shadowed nodes, `summaryTokens` that of the replacing
     * message. `provider`, `model` and `usage` describe the summary call. A summary
     * without its replace (a crash in between) changes nothing.
     * @example {"start":4,"summary":[{"type":"text","text":"The user asked for a refactor; tests pass."}],"range":{"startSeq":1,"endSeq":3},"shadowedSeqs":[1,2,3],"tokens":5000,"summaryTokens":300,"provider":"deepseek","model":"deepseek-chat","usage":{"inputTokens":5200,"outputTokens":300,"totalTokens":5500}}
     */
    'compaction/summary': {
      start: SessionSeq
      summary: TextBlock[]
      range: CompactionRange
      shadowedSeqs: SessionSeq[]
      /** @integer @minimum 0 */
      tokens: number
      /** @integer @minimum 0 */
      summaryTokens: number
      provider: string
      model: string
      usage?: TokenUsage
    }

    /**
     * The compaction that began at `start` finished and released the lock. `tokensAfter`
     * is the estimated surface size afterwards, `pruned` how many outputs it pruned,
     * `summarized` whether a summary replaced a range. `error` says why it failed (a
     * failed summary call, a summary no smaller than what it replaces, …): a failed
     * summary leaves the surface as the prunes before it left it.
     * @example {"start":4,"turn":1,"tokensAfter":12000,"pruned":1,"summarized":true}
     */
    'compaction/end': {
      start: SessionSeq
      turn: number | null
      /** @integer @minimum 0 */
      tokensAfter: number
      /** @integer @minimum 0 */
      pruned: number
      summarized: boolean
      error?: ErrorRecord
    }
  }
}
