import { type Projection, registerProjection, type SessionEventMap } from '@keel/session'
import type { DeliveryReason } from './events.js'
import { INSTRUCTIONS_SOURCE } from './render.js'

/** The latest delivery, as the log holds it. */
export interface LastDelivery {
  /** The seq of its `instructions/loaded`. */
  readonly seq: number
  readonly loaded: SessionEventMap['instructions/loaded']
  /** The seq of the `developer/message` that carried it; absent while it waits to be sent. */
  readonly messageSeq?: number
}

/** What the log says about the instructions: the latest delivery and the approved outside imports. */
export interface InstructionsState {
  readonly last?: LastDelivery
  /** Real paths the person approved (`instructions/imports-approved`), in order. */
  readonly approved: readonly string[]
}

/**
 * Folds the deliveries: the latest `instructions/loaded`, paired with the first
 * `developer/message` of source {@link INSTRUCTIONS_SOURCE} after it (the agent appends the
 * injected message before the next step), and every approved import.
 */
export const instructionsProjection: Projection<InstructionsState> = registerProjection<InstructionsState>({
  name: '@keel/project-instructions',
  init: () => ({ approved: [] }),
  apply: (state, event) => {
    if (event.type === 'instructions/loaded') {
      return { ...state, last: { seq: event.seq, loaded: event.data } }
    }
    if (
      event.type === 'developer/message' &&
      event.data.source === INSTRUCTIONS_SOURCE &&
      state.last !== undefined &&
      state.last.messageSeq === undefined
    ) {
      return { ...state, last: { ...state.last, messageSeq: event.seq } }
    }
    if (event.type === 'instructions/imports-approved') {
      const approved = [...state.approved]
      for (const path of event.data.paths) if (!approved.includes(path)) approved.push(path)
      return { ...state, approved }
    }
    return state
  },
  checkpoint: { version: 1 },
})

/** The facts a delivery decision needs besides the log's state. */
export interface DeliveryFacts {
  /** The digest of the message the files would make now. */
  readonly digest: string
  /** Whether the files make a message at all (no files and nothing noteworthy: none). */
  readonly hasContent: boolean
  /** Whether a surface node (by seq) is still in the model's history. */
  isOnSurface(seq: number): boolean
  /** The first seq this process appended: a delivery at or after it that waits is still queued here. */
  readonly processStartSeq: number
  /** Asked right after a compaction replaced history. */
  readonly afterCompaction: boolean
}

/**
 * Whether to deliver the instructions now, and why; `null` when the model already has
 * them (or nothing is there to say). The same text is never sent twice while a copy is in
 * the model's history or still queued in this process; a change sends it again; so does
 * the loss of the copy (`compact` after a compaction, `missing` otherwise — a process that
 * stopped before sending it).
 */
export function deliveryDecision(state: InstructionsState, facts: DeliveryFacts): DeliveryReason | null {
  const last = state.last
  if (last === undefined) return facts.hasContent ? 'start' : null
  if (last.loaded.digest !== facts.digest) {
    // Nothing now, and the model was last told "none": nothing more to say.
    return facts.hasContent || last.loaded.files.length > 0 ? 'changed' : null
  }
  // "There are none now" need not be repeated once it is gone from the history.
  if (!facts.hasContent) return null
  if (last.messageSeq === undefined) return last.seq >= facts.processStartSeq ? null : 'missing'
  if (facts.isOnSurface(last.messageSeq)) return null
  return facts.afterCompaction ? 'compact' : 'missing'
}
