import type { Message } from '@keel/llm'
import {
  checkpointMismatchError,
  type Interpretation,
  restoreLifecycle,
  type SessionCheckpoint,
} from './checkpoint.js'
import { SessionError } from './errors.js'
import type { InvariantFolds } from './invariant-folds.js'
import type { KnownEventType } from './known-event-types.generated.js'
import type { LifecycleState } from './lifecycle.js'
import { EventLog, type PrefixReader } from './log.js'
import type { ProjectionCache, SavedFold } from './projections.js'
import { invariantOf } from './registry.js'
import { readPrefixEvent } from './stored.js'
import { SURFACE_TYPES, type Surface } from './surface.js'
import type { SessionEvent } from './types.js'

/** The parts of a fresh session a checkpoint is restored into. */
export interface RestoreTarget {
  readonly id: string
  readonly known: Readonly<Record<string, KnownEventType>>
  readonly surface: Surface
  readonly opaque: Set<number>
  readonly types: Map<string, Interpretation>
  readonly invariants: InvariantFolds
  readonly projections: ProjectionCache
}

/**
 * Restores a checkpoint already checked against this build (`checkpointMismatch`) into a
 * fresh session's parts; returns its log (the covered prefix read through `prefix` on
 * demand, the checkpoint's events held in memory) and lifecycle state. Throws
 * `CHECKPOINT_MISMATCH` when the checkpoint does not hold what it names.
 */
export function restoreCheckpoint(
  checkpoint: SessionCheckpoint,
  prefix: PrefixReader,
  target: RestoreTarget,
): { log: EventLog; lifecycle: LifecycleState } {
  const { id, known } = target
  const base = checkpoint.nextSeq
  for (const seq of checkpoint.opaque) target.opaque.add(seq)
  for (const [type, how] of Object.entries(checkpoint.types)) target.types.set(type, how)
  const pinned = new Map<number, SessionEvent>()
  for (const raw of checkpoint.events) {
    const seq = (raw as { seq?: unknown } | null)?.seq
    if (typeof seq !== 'number' || seq < 0 || seq >= base || pinned.has(seq)) {
      throw checkpointMismatchError(id, `it holds an event with seq ${String(seq)} out of place`)
    }
    pinned.set(seq, readPrefixEvent(id, known, raw, seq, target.opaque.has(seq), false))
  }
  const log = new EventLog(base, pinned, (from, to) => {
    const raws = prefix.read(from, to)
    if (raws.length !== to - from) {
      throw new SessionError(
        'EVENT_ENVELOPE_INVALID',
        `session ${id}: reading events ${from}..${to - 1} of the stored log gave ${raws.length} events`,
        { seq: from },
      )
    }
    return raws.map((raw, i) => readPrefixEvent(id, known, raw, from + i, target.opaque.has(from + i), true))
  })
  const nodes = checkpoint.surface.map((seq) => {
    const event = pinned.get(seq)
    if (!event || !SURFACE_TYPES.has(event.type) || target.opaque.has(seq)) {
      throw checkpointMismatchError(
        id,
        `its surface names seq ${seq}, which it does not hold as a surface event`,
      )
    }
    return { seq, message: (event.data as { message: Message }).message }
  })
  if (new Set(checkpoint.surface).size !== nodes.length)
    throw checkpointMismatchError(id, 'its surface names a seq twice')
  target.surface.restore(nodes, base)
  target.invariants.restore(checkpoint.invariants, (owner) => invariantOf(owner)!)
  target.projections.restore(new Map<string, SavedFold>(Object.entries(checkpoint.projections)), base)
  return { log, lifecycle: restoreLifecycle(checkpoint.lifecycle) }
}
