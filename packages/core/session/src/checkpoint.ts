import { boundIssues, type JsonValue } from '@keel/base'
import { z } from 'zod'
import { SessionError } from './errors.js'
import { type InvariantFolds, invariantDigest } from './invariant-folds.js'
import { applyLifecycle, isResultRewrite, type LifecycleState, planLifecycle } from './lifecycle.js'
import type { EventLog } from './log.js'
import {
  foldDigest,
  type ProjectionCache,
  projectionDigest,
  registeredProjections,
  type SavedFold,
} from './projections.js'
import { getEventRegistration, invariantOf } from './registry.js'
import { schemaIssues } from './schema-check.js'
import { Surface } from './surface.js'

/**
 * How a build read the events of one type: `registered` (its plugin was loaded: schema and
 * invariant applied), `known` (in the generated list, plugin not loaded: plain JSON kept
 * verbatim) or `opaque` (unknown and ignorable: kept, never interpreted).
 */
export type Interpretation = 'registered' | 'known' | 'opaque'

/** Bumped whenever the shape of {@link SessionCheckpoint} changes. */
export const CHECKPOINT_STATE_VERSION = 1

/** Events before the end kept in a checkpoint beside the surface (so recent history reads without the store). */
export const CHECKPOINT_RECENT_EVENTS = 64

/**
 * The folded state of a session after its first `nextSeq` events, as plain JSON: what
 * `Session.resume` needs to continue without reading those events. A store keeps it in a
 * checkpoint, tied to the exact log prefix it was folded from; it is derived data, never
 * the record (the log is), and is used only when it matches this build exactly.
 */
export interface SessionCheckpoint {
  /** {@link CHECKPOINT_STATE_VERSION}. */
  version: number
  /** The digest of this build's core folds (lifecycle and surface rules). */
  core: string
  /** The seqs covered: `[0, nextSeq)`. */
  nextSeq: number
  lifecycle: {
    openTurn: number | null
    lastTurn: number
    openStep: number | null
    lastStep: number
    toolCalls: [string, { step: number; name: string; answered: boolean }][]
  }
  /** The seqs of the surface nodes, in surface order. */
  surface: number[]
  /** The stored events held in memory on resume, in seq order: every surface node and the most recent events. */
  events: JsonValue[]
  /** Seqs of events of types this build did not know (kept verbatim, not interpreted). */
  opaque: number[]
  /** How every event type in the covered prefix was read. */
  types: Record<string, Interpretation>
  /** The invariant folds' states, by owner. */
  invariants: Record<string, SavedFold>
  /** The projections' states, by name. */
  projections: Record<string, SavedFold>
  /** Registered folds whose state cannot be checkpointed: a resume is refused while any is named. */
  unsupported: string[]
}

const savedFoldSchema = z.strictObject({ version: z.number(), digest: z.string(), state: z.unknown() })
const seqSchema = z.number().int().nonnegative()

/** The shape of a {@link SessionCheckpoint} (its events are checked as stored events when restored). */
export const sessionCheckpointSchema = z.strictObject({
  version: z.number(),
  core: z.string(),
  nextSeq: seqSchema,
  lifecycle: z.strictObject({
    openTurn: seqSchema.nullable(),
    lastTurn: seqSchema,
    openStep: seqSchema.nullable(),
    lastStep: seqSchema,
    toolCalls: z.array(
      z.tuple([z.string(), z.strictObject({ step: seqSchema, name: z.string(), answered: z.boolean() })]),
    ),
  }),
  surface: z.array(seqSchema),
  events: z.array(z.unknown()),
  opaque: z.array(seqSchema),
  types: z.record(z.string(), z.enum(['registered', 'known', 'opaque'])),
  invariants: z.record(z.string(), savedFoldSchema),
  projections: z.record(z.string(), savedFoldSchema),
  unsupported: z.array(z.string()),
})

/** The digest of the core folds of this build: a checkpoint of other rules is not used. */
export function coreDigest(): string {
  return foldDigest(coreDigest, CHECKPOINT_STATE_VERSION, [
    planLifecycle,
    applyLifecycle,
    isResultRewrite,
    Surface,
  ])
}

/** The parts of a session a checkpoint is taken from and restored into. */
export interface CheckpointParts {
  readonly log: EventLog
  readonly lifecycle: LifecycleState
  readonly surface: Surface
  readonly opaque: ReadonlySet<number>
  readonly types: ReadonlyMap<string, Interpretation>
  readonly invariants: InvariantFolds
  readonly projections: ProjectionCache
  readonly isOpaque: (seq: number) => boolean
}

/** Folds every registered projection to the end and captures the session's state. */
export function captureCheckpoint(parts: CheckpointParts): SessionCheckpoint {
  const { log, lifecycle } = parts
  const nextSeq = log.length
  const surface = parts.surface.seqs() as number[]
  const keep = new Set<number>(surface)
  for (let seq = Math.max(0, nextSeq - CHECKPOINT_RECENT_EVENTS); seq < nextSeq; seq++) keep.add(seq)
  const projections = parts.projections.save(log, parts.isOpaque)
  const invariants = parts.invariants.save(invariantOf)
  return {
    version: CHECKPOINT_STATE_VERSION,
    core: coreDigest(),
    nextSeq,
    lifecycle: {
      openTurn: lifecycle.openTurn,
      lastTurn: lifecycle.lastTurn,
      openStep: lifecycle.openStep,
      lastStep: lifecycle.lastStep,
      toolCalls: [...lifecycle.toolCalls].map(([id, c]) => [
        id,
        { step: c.step, name: c.name, answered: c.answered },
      ]),
    },
    surface,
    events: [...keep].sort((a, b) => a - b).map((seq) => log.at(seq) as unknown as JsonValue),
    opaque: [...parts.opaque].sort((a, b) => a - b),
    types: Object.fromEntries(parts.types),
    invariants: invariants.saved,
    projections: projections.saved,
    unsupported: [...projections.unsupported, ...invariants.unsupported],
  }
}

/** How this build reads events of `type`. */
export function interpretationOf(type: string, known: Readonly<Record<string, unknown>>): Interpretation {
  if (getEventRegistration(type)) return 'registered'
  return Object.hasOwn(known, type) ? 'known' : 'opaque'
}

/**
 * Why `checkpoint` cannot be used by this build, or undefined when it can: another format,
 * other core folds, an event type read differently, a fold that cannot be checkpointed or
 * whose version or code differs.
 */
export function checkpointMismatch(
  checkpoint: SessionCheckpoint,
  known: Readonly<Record<string, unknown>>,
): string | undefined {
  if (checkpoint.version !== CHECKPOINT_STATE_VERSION) {
    return `its state has version ${checkpoint.version}; this build reads version ${CHECKPOINT_STATE_VERSION}`
  }
  if (checkpoint.core !== coreDigest())
    return 'it was folded by other session rules (another build of @keel/session)'
  if (checkpoint.unsupported.length > 0) {
    return `${checkpoint.unsupported.join(', ')} cannot be checkpointed (no \`checkpoint\` declaration), so the log is replayed`
  }
  for (const [type, then] of Object.entries(checkpoint.types)) {
    const now = interpretationOf(type, known)
    if (now !== then)
      return `events of type '${type}' were read as ${then} when it was written and are read as ${now} now`
  }
  for (const p of registeredProjections()) {
    const spec = p.checkpoint
    if (!spec)
      return `projection '${p.name}' cannot be checkpointed (no \`checkpoint\` declaration), so the log is replayed`
    const saved = checkpoint.projections[p.name]
    if (!saved) return `projection '${p.name}' is not in it (the writer did not register it)`
    if (saved.version !== spec.version)
      return `projection '${p.name}' has version ${saved.version} there, ${spec.version} here`
    if (saved.digest !== projectionDigest(p, spec.version))
      return `projection '${p.name}' has other code here than when it was saved`
  }
  const owners = new Set<string>()
  for (const [type, how] of Object.entries(checkpoint.types)) {
    const owner = how === 'registered' ? getEventRegistration(type)?.owner : undefined
    if (owner !== undefined && invariantOf(owner)) owners.add(owner)
  }
  for (const owner of new Set([...owners, ...Object.keys(checkpoint.invariants)])) {
    const invariant = invariantOf(owner)
    const saved = checkpoint.invariants[owner]
    const spec = invariant?.checkpoint
    if (!invariant) return `it holds the invariant fold of ${owner}, which this build does not register`
    if (!spec)
      return `the invariant of ${owner} cannot be checkpointed (no \`checkpoint\` declaration), so the log is replayed`
    if (!saved) return `the invariant of ${owner} was not folded by the writer`
    if (saved.version !== spec.version || saved.digest !== invariantDigest(invariant, spec.version)) {
      return `the invariant of ${owner} has another version or other code here than when it was saved`
    }
  }
  return undefined
}

/** Throws `CHECKPOINT_MISMATCH` when `checkpoint` is malformed or this build cannot use it. */
export function assertResumable(
  id: string,
  checkpoint: SessionCheckpoint,
  known: Readonly<Record<string, unknown>>,
): void {
  const issues = schemaIssues(sessionCheckpointSchema, checkpoint)
  if (issues) {
    const issue = boundIssues(issues).issues[0]
    throw checkpointMismatchError(id, `its state is malformed (${issue?.message ?? 'unexpected shape'})`)
  }
  const reason = checkpointMismatch(checkpoint, known)
  if (reason !== undefined) throw checkpointMismatchError(id, reason)
}

/** The lifecycle state saved in `checkpoint`. */
export function restoreLifecycle(saved: SessionCheckpoint['lifecycle']): LifecycleState {
  return {
    openTurn: saved.openTurn,
    lastTurn: saved.lastTurn,
    openStep: saved.openStep,
    lastStep: saved.lastStep,
    toolCalls: new Map(saved.toolCalls.map(([id, c]) => [id, { ...c }])),
  }
}

/** The refusal of a checkpoint this build cannot use (the caller replays the log instead). */
export function checkpointMismatchError(id: string, reason: string): SessionError {
  return new SessionError(
    'CHECKPOINT_MISMATCH',
    `the checkpoint of session ${id} cannot be used: ${reason}`,
    {
      reason,
    },
  )
}
