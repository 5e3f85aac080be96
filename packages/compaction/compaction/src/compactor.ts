import {
  type BeforeCompactionDecision,
  type BeforeCompactionInfo,
  backoffDelay,
  type Clock,
  defaultRetryOptions,
  type ModelRetryPolicy,
  systemClock,
} from '@keel/agent'
import { errorMessage } from '@keel/base'
import type { LlmAdapter, ToolSpec } from '@keel/llm'
import type { ErrorRecord, Session, SessionSeq } from '@keel/session'
import { type ActiveModel, type Budget, budgetOf } from './budget.js'
import {
  type CompactionConfig,
  type CompactionConfigInput,
  CompactionError,
  parseCompactionConfig,
} from './config.js'
import type { CompactionTrigger } from './events.js'
import { compactionLogProjection } from './guard.js'
import { type RunOutcome, runCompaction } from './run.js'
import { formatCount, measureSurface, type SurfaceSize } from './tokens.js'
import {
  fileActivityProjection,
  readWorkingState,
  type WorkingState,
  type WorkingStateSources,
} from './working-state.js'

/**
 * A `PreCompact` hook's question and answer are the agent's `beforeCompaction` types: the
 * plugin passes `ctx.trigger.beforeCompaction` straight through.
 */
export type { BeforeCompactionDecision, BeforeCompactionInfo } from '@keel/agent'

/** Something to show the user (the plugin forwards it to `display`). */
export interface CompactionNotice {
  readonly kind: 'compacted' | 'failed' | 'guard'
  readonly text: string
}

/** What a {@link Compactor} works on, and how. */
export interface CompactorOptions {
  readonly session: Session
  /** The model adapter that writes summaries. */
  readonly llm: LlmAdapter
  /** Plain-JSON settings (window, threshold, tail, limits); defaults per {@link CompactionConfig}. */
  readonly config?: CompactionConfigInput
  /**
   * The model the agent runs, asked at every compaction (the plugin passes `ctx.model()`):
   * its window and the output budget to keep free. Default: the config's `model`, else the
   * adapter's default, with the adapter's window and no output budget reserved.
   */
  readonly model?: () => ActiveModel
  /** The tool specs the agent's requests carry (sent with the summary request for the prefix cache). Default none. */
  readonly tools?: () => readonly ToolSpec[]
  /** How a failed summary call is retried. Default: the agent's defaults (3 retries, 500 ms doubling). */
  readonly retry?: ModelRetryPolicy
  /** Timers for the retry waits. Default: the wall clock. */
  readonly clock?: Clock
  /** Runs before every compaction (PreCompact hooks); may cancel it or change its instructions. */
  readonly beforeCompaction?: (
    info: BeforeCompactionInfo,
  ) => BeforeCompactionDecision | Promise<BeforeCompactionDecision>
  /** Receives notices for the user. */
  readonly onNotice?: (notice: CompactionNotice) => void
  /** The other plugins' state carried over into the summary (todo list, policy). */
  readonly workingState?: WorkingStateSources
}

/** One compaction request. */
export interface CompactRequest {
  readonly trigger: CompactionTrigger
  /** What the summary should focus on. */
  readonly instructions?: string
  /** Cancels the compaction: the summary call stops and nothing is applied (`COMPACTION_ABORTED`). */
  readonly signal?: AbortSignal
  /** The caller shows the result itself (the `/compact` command's answer): no notice repeats it. */
  readonly reported?: boolean
}

/** How a compaction request ended. */
export interface CompactionResult {
  /**
   * `compacted`: it ran and succeeded (`pruned` 0 and not `summarized`: it found nothing
   * to change). `failed`: it ran and `error` says why (prunes of the same run stay, unless
   * it was cancelled: `COMPACTION_ABORTED` applies nothing). `skipped`: it did not run
   * (`reason`: below the threshold, nothing to compact, loop guard). `cancelled`: a
   * PreCompact hook cancelled it.
   */
  readonly status: 'compacted' | 'failed' | 'skipped' | 'cancelled'
  /** The seq of its `compaction/start`, when it ran. */
  readonly start?: SessionSeq
  readonly tokensBefore: number
  readonly tokensAfter: number
  readonly pruned: number
  readonly summarized: boolean
  /** Summary model calls made (retries included). */
  readonly summaryCalls: number
  /** Whether the surface ended below the automatic threshold. */
  readonly belowThreshold: boolean
  readonly error?: ErrorRecord
  readonly reason?: string
}

const defaultRetry: ModelRetryPolicy = {
  maxRetries: defaultRetryOptions.maxRetries,
  delay: (failures, retryAfterMs) => backoffDelay(failures, defaultRetryOptions, Math.random, retryAfterMs),
}

/**
 * Keeps one session inside its model's context window. It cuts oversized messages, prunes
 * old tool outputs (no model call) and summarizes the older part of the surface with one
 * model call, planning everything first and applying it only after the summary call
 * succeeded (so the summary reads the outputs as the model saw them, and a cancelled run
 * changes nothing). Every compaction is bracketed by `compaction/start` …
 * `compaction/end` and holds the session's lock meanwhile; the raw history is never lost
 * (each change is a surface replace). Independent of the agent: the plugin wires it to
 * the agent's interception points and its model.
 */
export class Compactor {
  readonly session: Session
  readonly config: CompactionConfig
  readonly #llm: LlmAdapter
  readonly #model: () => ActiveModel
  readonly #tools: () => readonly ToolSpec[]
  readonly #retry: ModelRetryPolicy
  readonly #clock: Clock
  readonly #beforeCompaction: CompactorOptions['beforeCompaction']
  readonly #onNotice: CompactorOptions['onNotice']
  /** Turns whose guard notice was shown (display only, so not in the log). */
  readonly #notifiedTurns = new Set<number>()
  readonly #files: ReturnType<typeof fileActivityProjection>
  readonly #sources: WorkingStateSources
  /** A compaction of this engine is running (one at a time: the lock). */
  #running = false

  constructor(options: CompactorOptions) {
    this.session = options.session
    this.config = parseCompactionConfig(options.config)
    const llm = options.llm
    this.#llm = llm
    const fallback = (): ActiveModel => {
      const model = this.config.model ?? llm.model
      const known = llm.capabilities?.(model)
      if (known === undefined) return { model }
      const active = { model, contextWindow: known.contextWindow, windowSource: 'adapter' } as const
      return known.assumed === true ? { ...active, assumed: true } : active
    }
    this.#model = options.model ?? fallback
    this.#tools = options.tools ?? (() => [])
    this.#retry = options.retry ?? defaultRetry
    this.#clock = options.clock ?? systemClock
    this.#beforeCompaction = options.beforeCompaction
    this.#onNotice = options.onNotice
    this.#files = fileActivityProjection(this.config.fileTools)
    this.#sources = options.workingState ?? {}
  }

  /** The working state now (files from the log, the rest from the other plugins' services). */
  workingState(): WorkingState {
    return readWorkingState(this.session, this.#files, this.#sources)
  }

  /** The budget now: the agent's model, its window and where it came from, the threshold. */
  budget(): Budget {
    return budgetOf(this.config, this.#model())
  }

  /** The model whose window applies (the agent's). */
  get model(): string {
    return this.budget().model
  }

  get contextWindow(): number {
    return this.budget().contextWindow
  }

  /** Surface tokens above which an automatic compaction runs. */
  get thresholdTokens(): number {
    return this.budget().thresholdTokens
  }

  /** Whether a compaction of this engine is running. */
  get busy(): boolean {
    return this.#running
  }

  /** The surface size now. */
  measure(): SurfaceSize {
    return measureSurface(this.session)
  }

  /**
   * Why automatic summaries may not run now (the loop guard), or null when they may: a
   * summary of this turn failed or stalled, the turn had `maxPerTurn` of them, or
   * `maxSummaryFailures` in a row failed (until a manual compaction succeeds). Pruning is
   * never blocked.
   */
  automaticBlocked(): string | null {
    const state = this.session.project(compactionLogProjection)
    if (state.summaryFailures >= this.config.maxSummaryFailures) {
      return `${state.summaryFailures} automatic summaries in a row failed or did not bring the context below the threshold; run /compact to summarize (a compaction you start that succeeds turns automatic summaries back on)`
    }
    const open = this.session.openTurn
    if (!open || state.turn !== open.turn) return null
    if (state.stoppedInTurn) {
      return `a compaction in turn ${open.turn} did not bring the context below ${formatCount(this.thresholdTokens)} tokens`
    }
    if (state.automaticInTurn >= this.config.maxPerTurn) {
      return `turn ${open.turn} already had ${state.automaticInTurn} automatic summaries, the most allowed`
    }
    return null
  }

  /**
   * The automatic trigger, run before a step: compacts when the surface is over the
   * threshold. While the loop guard blocks summaries it still prunes (and cuts oversized
   * messages) when there is something to prune, and tells the user once per turn.
   */
  async compactIfNeeded(options: { readonly signal?: AbortSignal } = {}): Promise<CompactionResult> {
    const size = this.measure()
    if (size.tokens <= this.thresholdTokens) return this.#skipped(size.tokens, 'below the threshold')
    if (this.busy) return this.#skipped(size.tokens, 'another compaction is running')
    return this.compact({
      trigger: 'auto',
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    })
  }

  /**
   * Runs one compaction now: cuts oversized messages, prunes every old output outside the
   * recent tail, and summarizes when the request is manual or an overflow, or pruning would
   * not reach the target (automatic and overflow summaries honour the loop guard). A
   * PreCompact hook that throws cancels the run. Throws `COMPACTION_BUSY` when another
   * compaction of the session is running in this process; every other failure is a
   * `failed` result with `compaction/end` carrying the error.
   */
  async compact(request: CompactRequest): Promise<CompactionResult> {
    const session = this.session
    if (this.#running) {
      throw new CompactionError(
        'COMPACTION_BUSY',
        `a compaction of session ${session.id} is already running; wait for it to end`,
        { session: session.id },
      )
    }
    this.#running = true
    try {
      if (request.signal?.aborted) return this.#skipped(this.measure().tokens, 'cancelled before it began')
      let instructions = request.instructions
      if (this.#beforeCompaction) {
        const info: BeforeCompactionInfo =
          instructions === undefined
            ? { trigger: request.trigger }
            : { trigger: request.trigger, instructions }
        let decision: BeforeCompactionDecision
        try {
          decision = await this.#beforeCompaction(info)
        } catch (error) {
          // Fail closed: a broken PreCompact hook prevents the compaction, it does not fail the caller.
          decision = { action: 'cancel', reason: `the PreCompact hook failed: ${errorMessage(error)}` }
        }
        if (decision.action === 'cancel') {
          return { ...this.#skipped(this.measure().tokens, decision.reason), status: 'cancelled' }
        }
        if (decision.instructions !== undefined) instructions = decision.instructions
      }
      const blocked = request.trigger === 'manual' ? null : this.automaticBlocked()
      const outcome = await runCompaction({
        session,
        llm: this.#llm,
        config: this.config,
        budget: this.budget(),
        trigger: request.trigger,
        summaries: blocked === null,
        ...(instructions === undefined ? {} : { instructions }),
        ...(request.signal === undefined ? {} : { signal: request.signal }),
        tools: this.#tools(),
        retry: this.#retry,
        clock: this.#clock,
        workingState: () => this.workingState(),
      })
      return this.#report(request.trigger, outcome, blocked, request.reported === true)
    } finally {
      this.#running = false
    }
  }

  /** Turns a run's outcome into the result, and tells the user what happened. */
  #report(
    trigger: CompactionTrigger,
    outcome: RunOutcome,
    blocked: string | null,
    reported: boolean,
  ): CompactionResult {
    const notify = (kind: CompactionNotice['kind'], text: string): void => {
      if (!reported) this.#notify(kind, text)
    }
    if (outcome.kind === 'skipped') {
      if (blocked !== null)
        this.#guardNotice(`Automatic summaries are off: ${blocked}. Old tool output is still pruned.`)
      return this.#skipped(outcome.tokensBefore, blocked ?? outcome.reason)
    }
    const { start, tokensBefore, tokensAfter, pruned, summarized, summaryCalls } = outcome
    const belowThreshold = tokensAfter < this.thresholdTokens
    const base = { start, tokensBefore, tokensAfter, pruned, summarized, summaryCalls, belowThreshold }
    if (outcome.error) {
      const { error } = outcome
      notify(
        'failed',
        error.code === 'COMPACTION_ABORTED'
          ? 'Compaction cancelled: nothing was changed.'
          : `Compaction failed (${error.code}): ${error.message}`,
      )
      this.#afterAutomatic(trigger, tokensAfter)
      return { ...base, status: 'failed', error }
    }
    notify(
      'compacted',
      pruned === 0 && !summarized
        ? `Nothing to compact (${trigger}): no old tool output to prune, no oversized message and too little older history to summarize; about ${formatCount(tokensAfter)} tokens.`
        : `Context compacted (${trigger}): ${formatCount(tokensBefore)} → ${formatCount(tokensAfter)} tokens; ${pruned} output(s) pruned${summarized ? ', older history summarized' : ''}.`,
    )
    if (trigger === 'manual' && blocked === null && this.#wasOff) {
      this.#wasOff = false
      this.#notify('guard', 'Automatic summaries are back on.')
    }
    this.#afterAutomatic(trigger, tokensAfter)
    return { ...base, status: 'compacted' }
  }

  /** Whether the user was told automatic summaries are off (display only). */
  #wasOff = false

  /** After an automatic run: tell the user once when the guard switched summaries off. */
  #afterAutomatic(trigger: CompactionTrigger, tokensAfter: number): void {
    if (trigger === 'manual') return
    const state = this.session.project(compactionLogProjection)
    if (state.summaryFailures >= this.config.maxSummaryFailures) {
      this.#wasOff = true
      this.#notify(
        'guard',
        `Automatic summaries are off: ${state.summaryFailures} in a row failed or left the context at or above the ${formatCount(this.thresholdTokens)}-token threshold. Old tool output is still pruned; run /compact to summarize (a /compact that succeeds turns them back on).`,
      )
      return
    }
    const turn = this.session.openTurn?.turn
    if (turn === undefined || !state.stoppedInTurn || this.#notifiedTurns.has(turn)) return
    this.#notifiedTurns.add(turn)
    this.#notify(
      'guard',
      `Compaction left about ${formatCount(tokensAfter)} tokens, not below the ${formatCount(this.thresholdTokens)}-token threshold: automatic summaries are off for the rest of this turn (old tool output is still pruned).`,
    )
  }

  /** A guard notice, once per turn (or once while summaries are off between turns). */
  #guardNotice(text: string): void {
    const turn = this.session.openTurn?.turn ?? -1
    if (this.#notifiedTurns.has(turn)) return
    this.#notifiedTurns.add(turn)
    this.#notify('guard', text)
  }

  #skipped(tokens: number, reason: string): CompactionResult {
    return {
      status: 'skipped',
      tokensBefore: tokens,
      tokensAfter: tokens,
      pruned: 0,
      summarized: false,
      summaryCalls: 0,
      belowThreshold: tokens < this.thresholdTokens,
      reason,
    }
  }

  #notify(kind: CompactionNotice['kind'], text: string): void {
    this.#onNotice?.({ kind, text })
  }
}
