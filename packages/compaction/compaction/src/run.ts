// One compaction, plan → call → check → apply: everything is planned on the surface as the
// model last saw it, the summary (when one is due) is written from that, and only then are
// the cuts, the summary and the prunes appended. A failed summary still applies the free
// passes (cuts, prunes); a cancelled run applies nothing.
import type { Clock, ModelRetryPolicy } from '@keel/agent'
import { errorRecordOf } from '@keel/base'
import { LlmError, type ToolSpec } from '@keel/llm'
import type { ErrorRecord, Session, SessionSeq } from '@keel/session'
import type { Budget } from './budget.js'
import type { CompactionConfig } from './config.js'
import { applyCut, type CutCandidate, planCuts, withCuts } from './cut.js'
import type { CompactionTrigger } from './events.js'
import { ABORTED, INFORMATIONAL } from './guard.js'
import { applyPrune, type PruneCandidate, planPrune, type SurfaceView, viewSurface } from './prune.js'
import { applySummary, checkSummary, planSummary, writeSummary } from './summarize.js'
import { estimateMessageTokens, estimateSurface, measureSurface } from './tokens.js'
import { renderWorkingState, type WorkingState } from './working-state.js'

/** What one run needs. */
export interface RunInput {
  readonly session: Session
  readonly llm: import('@keel/llm').LlmAdapter
  readonly config: CompactionConfig
  readonly budget: Budget
  readonly trigger: CompactionTrigger
  /** Whether a summary may be written (the loop guard's answer for automatic runs). */
  readonly summaries: boolean
  readonly instructions?: string
  readonly signal?: AbortSignal
  readonly tools: readonly ToolSpec[]
  readonly retry: ModelRetryPolicy
  readonly clock: Clock
  readonly workingState: () => WorkingState
}

/** How a run ended: `skipped` logged nothing; `ran` is bracketed by `compaction/start` … `compaction/end`. */
export type RunOutcome =
  | { readonly kind: 'skipped'; readonly tokensBefore: number; readonly reason: string }
  | {
      readonly kind: 'ran'
      readonly start: SessionSeq
      readonly tokensBefore: number
      readonly tokensAfter: number
      readonly pruned: number
      readonly summarized: boolean
      readonly summaryCalls: number
      readonly error?: ErrorRecord
    }

/** The free passes of a run: oversized messages to cut, old outputs to prune. */
interface FreePlan {
  readonly cuts: readonly CutCandidate[]
  readonly prunes: readonly PruneCandidate[]
  /** The surface with the cuts applied in memory (what a summary request reads). */
  readonly seen: SurfaceView
  /** The estimated surface after both passes. */
  readonly estimateAfter: number
}

function planFree(session: Session, input: RunInput, keepRecentTokens: number): FreePlan {
  const view = viewSurface(session)
  const prunes = planPrune(session, view, { keepRecentTokens, minTokens: input.config.pruneMinTokens })
  // Every oversized node reads cut in a summary request; one outside the tail is pruned
  // (its placeholder is smaller still), one inside it is cut.
  const oversized = planCuts(session, view, Math.floor(input.budget.thresholdTokens / 2))
  const seen = withCuts(view, oversized)
  const pruned = new Map(prunes.map((p) => [p.seq, p]))
  const cuts = oversized.filter((c) => !pruned.has(c.seq))
  let estimateAfter = 0
  seen.messages.forEach((message, i) => {
    estimateAfter += pruned.get(seen.seqs[i]!)?.placeholderTokens ?? estimateMessageTokens(message)
  })
  return { cuts, prunes, seen, estimateAfter }
}

/** Appends the cuts and prunes still on the surface; returns how many were applied. */
function applyFree(session: Session, start: SessionSeq, plan: FreePlan): number {
  let applied = 0
  for (const cut of plan.cuts) if (applyCut(session, start, cut)) applied++
  for (const prune of plan.prunes) if (applyPrune(session, start, prune)) applied++
  return applied
}

/** Runs one compaction (the caller holds the lock and asked the PreCompact hooks). */
export async function runCompaction(input: RunInput): Promise<RunOutcome> {
  const { session, budget, config, trigger } = input
  const before = measureSurface(session)
  const estimateBefore = estimateSurface(session)
  // The verbatim tail: `keepRecent` of the window, but never more than half the surface,
  // so a manual compaction of a short session still compacts something.
  const keepRecentTokens = Math.min(budget.keepRecentTokens, Math.floor(estimateBefore / 2))
  const free = planFree(session, input, keepRecentTokens)
  // What the estimator misses (tool schemas, estimator error) stays after the compaction.
  const gap = Math.max(0, before.tokens - estimateBefore)
  const wantSummary =
    input.summaries && (trigger !== 'auto' || free.estimateAfter + gap > budget.targetTokens)
  if (!wantSummary && free.cuts.length === 0 && free.prunes.length === 0 && trigger !== 'manual') {
    return { kind: 'skipped', tokensBefore: before.tokens, reason: 'nothing to compact' }
  }
  const turn = session.openTurn?.turn ?? null
  const startData = {
    turn,
    trigger,
    tokensBefore: before.tokens,
    tokenSource: before.source,
    estimateBefore,
    contextWindow: budget.contextWindow,
    thresholdTokens: budget.thresholdTokens,
    model: budget.model,
    windowSource: budget.windowSource,
    reserveTokens: budget.reserveTokens,
  }
  const start = session.append(
    'compaction/start',
    input.instructions === undefined ? startData : { ...startData, instructions: input.instructions },
    INFORMATIONAL,
  ).seq
  let summaryCalls = 0
  const end = (pruned: number, summarized: boolean, error?: ErrorRecord): RunOutcome => {
    const tokensAfter = estimateSurface(session) + gap
    const data = { start, turn, tokensAfter, pruned, summarized, summaryCalls }
    session.append('compaction/end', error === undefined ? data : { ...data, error }, INFORMATIONAL)
    return {
      kind: 'ran',
      start,
      tokensBefore: before.tokens,
      tokensAfter,
      pruned,
      summarized,
      summaryCalls,
      ...(error === undefined ? {} : { error }),
    }
  }
  const plan = wantSummary ? planSummary(session, free.seen, keepRecentTokens) : null
  if (!plan) return end(applyFree(session, start, free), false)
  const aborted = (): RunOutcome =>
    end(0, false, {
      code: ABORTED,
      message: 'the compaction was cancelled before its summary was applied; nothing was changed',
    })
  try {
    const working = renderWorkingState(input.workingState())
    const written = await writeSummary(input.llm, free.seen, plan, {
      workingState: working,
      tools: input.tools,
      maxTokens: config.summaryMaxTokens,
      contextWindow: budget.contextWindow,
      gap,
      model: config.model ?? budget.model,
      ...(input.instructions === undefined ? {} : { instructions: input.instructions }),
      ...(input.signal === undefined ? {} : { signal: input.signal }),
      retry: {
        policy: input.retry,
        clock: input.clock,
        onCall: () => {
          summaryCalls++
        },
        onRetry: ({ attempt, delayMs, error }) => {
          const retry = { start, attempt, delayMs, error: { code: error.code, message: error.message } }
          session.append(
            'compaction/retry',
            {
              ...retry,
              ...(error.status === undefined ? {} : { status: error.status }),
              ...(error.retryAfterMs === undefined
                ? {}
                : { retryAfterMs: Math.max(0, Math.round(error.retryAfterMs)) }),
            },
            INFORMATIONAL,
          )
        },
      },
    })
    if (input.signal?.aborted) return aborted()
    // The working state is read again: the call took a while, and the log is the truth.
    const message = checkSummary(
      session,
      written.plan,
      written.call,
      renderWorkingState(input.workingState()),
    )
    applySummary(session, start, written.plan, written.call, message)
    return end(applyFree(session, start, free), true)
  } catch (error) {
    if (input.signal?.aborted || (error instanceof LlmError && error.kind === 'aborted')) return aborted()
    return end(applyFree(session, start, free), false, errorRecordOf(error, 'COMPACTION_FAILED'))
  }
}
