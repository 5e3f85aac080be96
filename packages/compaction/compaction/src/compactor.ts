import type { BeforeCompactionDecision, BeforeCompactionInfo } from '@keel/agent'
import { isKeelError } from '@keel/base'
import type { LlmAdapter } from '@keel/llm'
import type { ErrorRecord, Session, SessionSeq } from '@keel/session'
import {
  type CompactionConfig,
  type CompactionConfigInput,
  CompactionError,
  contextWindowOf,
  parseCompactionConfig,
} from './config.js'
import type { CompactionTrigger } from './events.js'
import { compactionLogProjection, INFORMATIONAL } from './guard.js'
import { applyPrune, planPrune, viewSurface } from './prune.js'
import { MIN_SUMMARY_RANGE_TOKENS, summarizeRange } from './summarize.js'
import { estimateSurface, formatCount, measureSurface, type SurfaceSize } from './tokens.js'
import {
  fileActivityProjection,
  readWorkingState,
  renderWorkingState,
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
  /** The model that writes summaries. */
  readonly llm: LlmAdapter
  /** Plain-JSON settings (window, threshold, tail, limits); defaults per {@link CompactionConfig}. */
  readonly config?: CompactionConfigInput
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
  /** Aborts the summary call (the compaction then fails and changes nothing more). */
  readonly signal?: AbortSignal
}

/** How a compaction request ended. */
export interface CompactionResult {
  /**
   * `compacted`: it ran and succeeded. `failed`: it ran and `error` says why (prunes made
   * before the failure stay). `skipped`: it did not run (`reason`: below the threshold,
   * nothing to compact, loop guard). `cancelled`: a PreCompact hook cancelled it.
   */
  readonly status: 'compacted' | 'failed' | 'skipped' | 'cancelled'
  /** The seq of its `compaction/start`, when it ran. */
  readonly start?: SessionSeq
  readonly tokensBefore: number
  readonly tokensAfter: number
  readonly pruned: number
  readonly summarized: boolean
  /** Whether the surface ended below the automatic threshold. */
  readonly belowThreshold: boolean
  readonly error?: ErrorRecord
  readonly reason?: string
}

/**
 * Keeps one session inside its model's context window. Tier 1 prunes old tool outputs
 * (no model call); tier 2 summarizes the older part of the surface with one model call.
 * Every compaction is bracketed by `compaction/start` … `compaction/end` and holds the
 * session's lock meanwhile; the raw history is never lost (each change is a surface
 * replace). Independent of the agent: the plugin wires it to the agent's interception
 * points.
 */
export class Compactor {
  readonly session: Session
  readonly config: CompactionConfig
  readonly #llm: LlmAdapter
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
    this.#llm = options.llm
    this.#beforeCompaction = options.beforeCompaction
    this.#onNotice = options.onNotice
    this.#files = fileActivityProjection(this.config.fileTools)
    this.#sources = options.workingState ?? {}
  }

  /** The working state now (files from the log, the rest from the other plugins' services). */
  workingState(): WorkingState {
    return readWorkingState(this.session, this.#files, this.#sources)
  }

  /** The model whose window applies and which writes summaries. */
  get model(): string {
    return this.config.model ?? this.#llm.model
  }

  get contextWindow(): number {
    return contextWindowOf(this.config, this.model)
  }

  /** Surface tokens above which an automatic compaction runs. */
  get thresholdTokens(): number {
    return Math.floor(this.contextWindow * this.config.threshold)
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
   * Why an automatic compaction may not run in the open turn now (the loop guard), or null
   * when it may.
   */
  automaticBlocked(): string | null {
    const open = this.session.openTurn
    if (!open) return null
    const state = this.session.project(compactionLogProjection)
    if (state.turn !== open.turn) return null
    if (state.stoppedInTurn) {
      return `a compaction in turn ${open.turn} did not bring the context below ${formatCount(this.thresholdTokens)} tokens`
    }
    if (state.automaticInTurn >= this.config.maxPerTurn) {
      return `turn ${open.turn} already had ${state.automaticInTurn} automatic compaction(s), the most allowed`
    }
    return null
  }

  /**
   * The automatic trigger, run before a step: compacts when the surface is over the
   * threshold and the loop guard allows it; otherwise returns a `skipped` result. When the
   * guard blocks, the user is told once per turn.
   */
  async compactIfNeeded(): Promise<CompactionResult> {
    const size = this.measure()
    if (size.tokens <= this.thresholdTokens) return this.#skipped(size.tokens, 'below the threshold')
    if (this.busy) return this.#skipped(size.tokens, 'another compaction is running')
    const blocked = this.automaticBlocked()
    if (blocked !== null) {
      const turn = this.session.openTurn?.turn
      if (turn !== undefined && !this.#notifiedTurns.has(turn)) {
        this.#notifiedTurns.add(turn)
        this.#notify('guard', `Automatic compaction is off for the rest of this turn: ${blocked}.`)
      }
      return this.#skipped(size.tokens, blocked)
    }
    return this.compact({ trigger: 'auto' })
  }

  /**
   * Runs one compaction now: prunes every old output outside the recent tail, then
   * summarizes when the request is manual or an overflow, or pruning did not reach the
   * target. Automatic and overflow requests honour the loop guard; a PreCompact hook that
   * throws cancels the run. Throws `COMPACTION_BUSY` when another compaction of the session
   * is running in this process; every other failure is a `failed` result with
   * `compaction/end` carrying the error.
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
      if (request.trigger !== 'manual') {
        const blocked = this.automaticBlocked()
        if (blocked !== null) return this.#skipped(this.measure().tokens, blocked)
      }
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
          const reason = `the PreCompact hook failed: ${error instanceof Error ? error.message : String(error)}`
          decision = { action: 'cancel', reason }
        }
        if (decision.action === 'cancel') {
          return { ...this.#skipped(this.measure().tokens, decision.reason), status: 'cancelled' }
        }
        if (decision.instructions !== undefined) instructions = decision.instructions
      }
      return await this.#run(request, instructions)
    } finally {
      this.#running = false
    }
  }

  async #run(request: CompactRequest, instructions: string | undefined): Promise<CompactionResult> {
    const session = this.session
    const config = this.config
    const window = this.contextWindow
    const before = this.measure()
    const estimateBefore = estimateSurface(session)
    const turn = session.openTurn?.turn ?? null
    const startData = {
      turn,
      trigger: request.trigger,
      tokensBefore: before.tokens,
      tokenSource: before.source,
      estimateBefore,
      contextWindow: window,
      thresholdTokens: this.thresholdTokens,
    }
    const start = session.append(
      'compaction/start',
      instructions === undefined ? startData : { ...startData, instructions },
      INFORMATIONAL,
    ).seq
    // The verbatim tail: `keepRecent` of the window, but never more than half the surface,
    // so a manual compaction of a short session still compacts something.
    const keepRecentTokens = Math.min(Math.floor(window * config.keepRecent), Math.floor(estimateBefore / 2))
    const targetTokens = Math.floor(window * config.target)
    // What the estimator misses (tool schemas, estimator error) stays after the compaction.
    const gap = Math.max(0, before.tokens - estimateBefore)
    let pruned = 0
    let summarized = false
    try {
      // Tier 1: prune every old output outside the tail in one pass (fewer, larger changes
      // keep a provider's prefix cache valid for longer than pruning just enough).
      for (const candidate of planPrune(session, viewSurface(session), {
        keepRecentTokens,
        minTokens: config.pruneMinTokens,
      })) {
        if (applyPrune(session, start, candidate)) pruned++
      }
      // Tier 2: summarize when asked to, after an overflow, or when pruning was not enough.
      if (request.trigger !== 'auto' || estimateSurface(session) + gap > targetTokens) {
        summarized = await summarizeRange(session, this.#llm, {
          start,
          keepRecentTokens,
          workingState: () => renderWorkingState(this.workingState()),
          maxTokens: config.summaryMaxTokens,
          ...(config.model === undefined ? {} : { model: config.model }),
          ...(instructions === undefined ? {} : { instructions }),
          ...(request.signal === undefined ? {} : { signal: request.signal }),
        })
      }
    } catch (error) {
      const record = errorRecordOf(error)
      const tokensAfter = estimateSurface(session) + gap
      session.append(
        'compaction/end',
        { start, turn, tokensAfter, pruned, summarized, error: record },
        INFORMATIONAL,
      )
      this.#notify('failed', `Compaction failed (${record.code}): ${record.message}`)
      this.#guardNotice(request.trigger, turn, tokensAfter)
      return {
        status: 'failed',
        start,
        tokensBefore: before.tokens,
        tokensAfter,
        pruned,
        summarized,
        belowThreshold: tokensAfter < this.thresholdTokens,
        error: record,
      }
    }
    const tokensAfter = estimateSurface(session) + gap
    session.append('compaction/end', { start, turn, tokensAfter, pruned, summarized }, INFORMATIONAL)
    const belowThreshold = tokensAfter < this.thresholdTokens
    this.#notify(
      'compacted',
      pruned === 0 && !summarized
        ? `Nothing to compact (${request.trigger}): no old tool output to prune and under ${MIN_SUMMARY_RANGE_TOKENS} tokens of older history to summarize; about ${formatCount(tokensAfter)} tokens.`
        : `Context compacted (${request.trigger}): ${formatCount(before.tokens)} → ${formatCount(tokensAfter)} tokens; ${pruned} output(s) pruned${summarized ? ', older history summarized' : ''}.`,
    )
    this.#guardNotice(request.trigger, turn, tokensAfter)
    return {
      status: 'compacted',
      start,
      tokensBefore: before.tokens,
      tokensAfter,
      pruned,
      summarized,
      belowThreshold,
    }
  }

  #skipped(tokens: number, reason: string): CompactionResult {
    return {
      status: 'skipped',
      tokensBefore: tokens,
      tokensAfter: tokens,
      pruned: 0,
      summarized: false,
      belowThreshold: tokens < this.thresholdTokens,
      reason,
    }
  }

  /** Tells the user, once per turn, that an automatic run that failed or stalled stopped automatic compaction. */
  #guardNotice(trigger: CompactionTrigger, turn: number | null, tokensAfter: number): void {
    if (trigger === 'manual' || turn === null || this.#notifiedTurns.has(turn)) return
    if (!this.session.project(compactionLogProjection).stoppedInTurn) return
    this.#notifiedTurns.add(turn)
    this.#notify(
      'guard',
      `Compaction left about ${formatCount(tokensAfter)} tokens, not below the ${formatCount(this.thresholdTokens)}-token threshold: automatic compaction is off for the rest of this turn.`,
    )
  }

  #notify(kind: CompactionNotice['kind'], text: string): void {
    this.#onNotice?.({ kind, text })
  }
}

function errorRecordOf(error: unknown): ErrorRecord {
  if (isKeelError(error)) return { code: error.code, message: error.message }
  return { code: 'COMPACTION_FAILED', message: error instanceof Error ? error.message : String(error) }
}
