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
 * Where a compaction's context window came from: the plugin's `contextWindows` entry or
 * `contextWindow` (`config`), a model selection (`selection`), the agent's (or the
 * preset's) `contextWindows` (`agent`), the adapter's capability table (`adapter`), or
 * the 128K assumed when nothing knows the model (`default`).
 */
export type WindowSource = 'config' | 'selection' | 'agent' | 'adapter' | 'default'

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
     * the provider reports usage again. `model` is the model the agent runs, whose
     * `contextWindow` applies (`windowSource` says where the window came from);
     * `thresholdTokens` is the automatic trigger level: `threshold` × the window, at most
     * the window minus `reserveTokens`, the output budget (`max_tokens`) the agent's
     * requests keep free.
     * @example {"turn":4,"trigger":"auto","tokensBefore":104233,"tokenSource":"provider","estimateBefore":101870,"contextWindow":128000,"thresholdTokens":102400,"model":"deepseek-chat","windowSource":"adapter","reserveTokens":8192}
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
      /** @minLength 1 */
      model?: string
      windowSource?: WindowSource
      /** @integer @minimum 0 */
      reserveTokens?: number
    }

    /**
     * One old tool output was pruned: the `tool/result` right after this event replaces
     * the result at `range` (one node) with a short placeholder naming the tool, the
     * output's size and where the full output is. `start` is the seq of the
     * `compaction/start` this belongs to; `shadowedSeqs` are the seqs of the shadowed
     * nodes and `tokens` their estimated size. No model call is made. With `keptTokens`
     * the node was an oversized message (a user message or tool output larger than half
     * the threshold, even in the recent tail): the `user/message` or `tool/result` that
     * follows keeps its beginning and end, about `keptTokens` tokens, around a notice
     * saying what was cut and where the full text is.
     * @example {"start":120,"range":{"startSeq":37,"endSeq":37},"shadowedSeqs":[37],"tokens":2150}
     */
    'compaction/prune': {
      start: SessionSeq
      range: CompactionRange
      shadowedSeqs: SessionSeq[]
      /** @integer @minimum 0 */
      tokens: number
      /** @integer @minimum 0 */
      keptTokens?: number
    }

    /**
     * The summary call of the compaction that began at `start` failed with a retryable
     * error (rate limit, server error, network, cut stream) and is made again after
     * `delayMs`, as the agent retries its own calls (`llm/retry`): the same backoff, never
     * sooner than the server's `Retry-After` (`retryAfterMs`). `attempt` is the failed
     * attempt's number, from 1.
     * @example {"start":120,"attempt":1,"delayMs":500,"error":{"code":"LLM_RATE_LIMIT","message":"rate limited"},"status":429}
     */
    'compaction/retry': {
      start: SessionSeq
      /** @integer @minimum 1 */
      attempt: number
      /** @integer @minimum 0 */
      delayMs: number
      error: ErrorRecord
      /** @integer */
      status?: number
      /** @integer @minimum 0 */
      retryAfterMs?: number
    }

    /**
     * The model summarized `range`. Immediately followed by the `user/message` (source
     * `compaction/summary`) that replaces the range on the surface; that message opens
     * with a notice telling the model what was compacted, then the summary, then the
     * working state rebuilt from the log (todo list, approval policy, sandbox mode, files
     * read and modified). `summary` holds the model's text blocks; `tokens` is the
     * estimated size of the shadowed nodes, `summaryTokens` that of the replacing
     * message. `provider`, `model` and `usage` describe the summary call (its
     * `cacheHitTokens` show how much of the request the provider's prefix cache served:
     * the request repeats the agent's last one up to the range). A summary without its
     * replace (a crash in between) changes nothing.
     * @example {"start":120,"summary":[{"type":"text","text":"## Goal\nFix the failing parser test."}],"range":{"startSeq":1,"endSeq":96},"shadowedSeqs":[1,2,5,6,7],"tokens":61234,"summaryTokens":1410,"provider":"deepseek","model":"deepseek-chat","usage":{"inputTokens":61900,"outputTokens":1200,"totalTokens":63100,"cacheHitTokens":61440}}
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
     * `summarized` whether a summary replaced a range, `summaryCalls` how many summary
     * model calls it made (retries included; absent in logs written before it was
     * recorded). `error` says why it failed (a failed summary call, a summary no smaller
     * than what it replaces, `COMPACTION_ABORTED` when it was cancelled): a failed summary
     * leaves the surface as the prunes of the same run left it (they are applied after the
     * summary call, so the summary reads the outputs as the model saw them); a cancelled
     * run applies nothing.
     * @example {"start":120,"turn":4,"tokensAfter":31877,"pruned":6,"summarized":true,"summaryCalls":1}
     */
    'compaction/end': {
      start: SessionSeq
      turn: number | null
      /** @integer @minimum 0 */
      tokensAfter: number
      /** @integer @minimum 0 */
      pruned: number
      summarized: boolean
      /** @integer @minimum 0 */
      summaryCalls?: number
      error?: ErrorRecord
    }
  }
}
