import { SessionError } from './errors.js'
import type { KnownEventType } from './known-event-types.generated.js'
import type { SessionHeaderInit, SessionOptions } from './options.js'
import type { SessionHeader } from './types.js'

/** What a fork copies and how its child is created. */
export interface ForkPlan {
  /** The last copied seq. */
  readonly last: number
  /** How many events the child inherits (its header's `seedLength`). */
  readonly seedLength: number
  readonly header: SessionHeaderInit
  readonly options: SessionOptions
}

/** The parent as a fork reads it. */
export interface ForkParent {
  readonly header: SessionHeader
  readonly length: number
  readonly clock: () => number
  readonly knownEventTypes: Readonly<Record<string, KnownEventType>>
}

/**
 * Plans a fork through `atSeq` (default: the whole log): checks the cut lies inside the
 * log (`FORK_CUT_INVALID`) and derives the child's header (lineage, inherited `cwd` and
 * `agentPreset`, `agentComposition`) and options (the parent's clock and known types unless overridden).
 */
export function planFork(parent: ForkParent, atSeq: number | undefined, options: SessionOptions): ForkPlan {
  const last = atSeq ?? parent.length - 1
  if (!Number.isInteger(last) || last < 0 || last >= parent.length) {
    throw new SessionError(
      'FORK_CUT_INVALID',
      `cannot fork session ${parent.header.id} at seq ${last}: the log has seqs 0..${parent.length - 1}`,
      { atSeq: last },
    )
  }
  const clock = options.clock ?? parent.clock
  const seedLength = last + 1
  const header: SessionHeaderInit = { createdAt: clock(), parentSession: parent.header.id, seedLength }
  if (parent.header.cwd !== undefined) header.cwd = parent.header.cwd
  if (parent.header.agentPreset !== undefined) header.agentPreset = parent.header.agentPreset
  if (parent.header.agentComposition !== undefined) header.agentComposition = parent.header.agentComposition
  return {
    last,
    seedLength,
    header,
    options: { clock, knownEventTypes: options.knownEventTypes ?? parent.knownEventTypes },
  }
}

/**
 * The refusal of a cut that leaves `turn` open in the child, naming the cuts that work: the
 * seq before its `turn/start` (`start`), and its `turn/end` (`end`, when it has one).
 */
export function forkInsideTurnError(
  parent: SessionHeader,
  last: number,
  turn: number,
  bounds: { readonly start: number; readonly end: number | undefined },
): SessionError {
  const { start, end } = bounds
  const span = end === undefined ? `from seq ${start}, not ended` : `seqs ${start}..${end}`
  const cuts = [
    ...(start > 0 ? [`at seq ${start - 1}, before it`] : []),
    ...(end === undefined ? [] : [`at seq ${end}, its turn/end`]),
  ]
  return new SessionError(
    'FORK_CUT_INVALID',
    `cannot fork session ${parent.id} at seq ${last}: turn ${turn} (${span}) is still open there${cuts.length > 0 ? `; cut ${cuts.join(', or ')}` : ''}`,
    { atSeq: last, turn },
  )
}

/** Where turn `turn` starts and ends in `events` (found from `at`, a seq inside it). */
export function turnBounds(
  events: { readonly length: number; at(seq: number): { readonly type: string; readonly data: unknown } },
  turn: number,
  at: number,
): { start: number; end: number | undefined } {
  const isTurn = (seq: number, type: string) => {
    const event = events.at(seq)
    return event.type === type && (event.data as { turn?: unknown }).turn === turn
  }
  let start = at
  while (start > 0 && !isTurn(start, 'turn/start')) start--
  let end: number | undefined = at
  while (end < events.length && !isTurn(end, 'turn/end')) end++
  if (end === events.length) end = undefined
  return { start, end }
}
