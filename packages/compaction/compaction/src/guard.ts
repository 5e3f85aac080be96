import { type Projection, registerProjection } from '@keel/session'
import type { CompactionTrigger } from './events.js'

/** What the log says about compactions so far: the open one, the current turn's, and the run of failures. */
export interface CompactionLogState {
  /** The latest unclosed `compaction/start` (a crashed process leaves one), or null. */
  readonly open: {
    readonly seq: number
    readonly trigger: CompactionTrigger
    readonly threshold: number
  } | null
  /** The turn the two counters below describe. */
  readonly turn: number | null
  /** Automatic and overflow compactions of `turn` that made a summary call. */
  readonly automaticInTurn: number
  /**
   * An automatic or overflow compaction of `turn` failed or ended at or above the
   * threshold: no more automatic summaries in that turn (pruning still runs).
   */
  readonly stoppedInTurn: boolean
  /**
   * Automatic and overflow summaries in a row, across turns, that failed or left the
   * context at or above the threshold. Reset by an automatic summary that got below it and
   * by a manual compaction that succeeded; a cancelled run does not count.
   */
  readonly summaryFailures: number
}

/** The error code of a compaction that was cancelled (it applied nothing and counts for nothing). */
export const ABORTED = 'COMPACTION_ABORTED'

/**
 * Folds the compaction events. A `session/end-seed` drops an open start inherited from the
 * parent; a new start supersedes an unclosed one (its process died).
 */
export const compactionLogProjection: Projection<CompactionLogState> = registerProjection<CompactionLogState>(
  {
    name: '@keel/compaction/log',
    init: () => ({ open: null, turn: null, automaticInTurn: 0, stoppedInTurn: false, summaryFailures: 0 }),
    apply(state, event) {
      switch (event.type) {
        case 'compaction/start': {
          const { turn, trigger, thresholdTokens } = event.data
          const open = { seq: event.seq, trigger, threshold: thresholdTokens }
          if (turn === null || turn === state.turn) return { ...state, open }
          return { ...state, open, turn, automaticInTurn: 0, stoppedInTurn: false }
        }
        case 'compaction/end': {
          const open = state.open
          if (!open || open.seq !== event.data.start) return { ...state, open: null }
          const { error, summarized, tokensAfter } = event.data
          if (error?.code === ABORTED) return { ...state, open: null }
          if (open.trigger === 'manual') {
            return { ...state, open: null, summaryFailures: error === undefined ? 0 : state.summaryFailures }
          }
          const calls = event.data.summaryCalls ?? (error !== undefined || summarized ? 1 : 0)
          const stalled = error !== undefined || tokensAfter >= open.threshold
          const inTurn = event.data.turn !== null && event.data.turn === state.turn
          return {
            ...state,
            open: null,
            automaticInTurn: state.automaticInTurn + (inTurn && calls > 0 ? 1 : 0),
            stoppedInTurn: state.stoppedInTurn || (inTurn && stalled),
            summaryFailures: calls === 0 ? state.summaryFailures : stalled ? state.summaryFailures + 1 : 0,
          }
        }
        case 'session/end-seed':
          return state.open ? { ...state, open: null } : state
        default:
          return state
      }
    },
    checkpoint: { version: 1 },
  },
)

/**
 * How compaction events are appended: ignorable. The surface is decided by the replace
 * events that follow them, so a reader without this plugin may skip them and still derive
 * the same messages.
 */
export const INFORMATIONAL = { ignorable: true } as const
