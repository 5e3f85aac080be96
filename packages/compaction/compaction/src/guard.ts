import { type Projection, registerProjection } from '@keel/session'
import type { CompactionTrigger } from './events.js'

/** What the log says about compactions so far: the open one and the current turn's count. */
export interface CompactionLogState {
  /** The latest unclosed `compaction/start` (a crashed process leaves one), or null. */
  readonly open: {
    readonly seq: number
    readonly trigger: CompactionTrigger
    readonly threshold: number
  } | null
  /** The turn the counters below describe. */
  readonly turn: number | null
  /** Automatic and overflow compactions begun in `turn`. */
  readonly automaticInTurn: number
  /** An automatic or overflow compaction of `turn` failed or ended at or above the threshold. */
  readonly stoppedInTurn: boolean
}

/**
 * Folds the compaction events. A `session/end-seed` drops an open start inherited from the
 * parent; a new start supersedes an unclosed one (its process died).
 */
export const compactionLogProjection: Projection<CompactionLogState> = registerProjection<CompactionLogState>(
  {
    name: '@keel/compaction/log',
    init: () => ({ open: null, turn: null, automaticInTurn: 0, stoppedInTurn: false }),
    apply(state, event) {
      switch (event.type) {
        case 'compaction/start': {
          const { turn, trigger, thresholdTokens } = event.data
          const open = { seq: event.seq, trigger, threshold: thresholdTokens }
          if (turn === null) return { ...state, open }
          const same = turn === state.turn
          return {
            open,
            turn,
            automaticInTurn: (same ? state.automaticInTurn : 0) + (trigger === 'manual' ? 0 : 1),
            stoppedInTurn: same ? state.stoppedInTurn : false,
          }
        }
        case 'compaction/end': {
          const open = state.open
          if (!open || open.seq !== event.data.start) return { ...state, open: null }
          const stalled = event.data.error !== undefined || event.data.tokensAfter >= open.threshold
          const stops =
            open.trigger !== 'manual' && event.data.turn !== null && event.data.turn === state.turn
          return { ...state, open: null, stoppedInTurn: state.stoppedInTurn || (stops && stalled) }
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
