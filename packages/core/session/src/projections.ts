import { createHash } from 'node:crypto'
import { assertPlainJson, type JsonValue, KeelError } from '@keel/base'
import type { SessionEvent } from './types.js'

/** The events a fold reads: by seq, `length` of them. */
export interface FoldSource {
  readonly length: number
  at(seq: number): SessionEvent
}

/**
 * How a fold's state is kept in a session checkpoint. A fold that declares it promises its
 * state after N events is a function of those N events only, so the state saved at seq N
 * and the state folded again from the log are the same value.
 */
export interface FoldCheckpoint<S> {
  /**
   * Bumped whenever `init`, `apply` (or `check`) or the shape of the state changes. A
   * checkpoint saved under another version (or by other code: the source text of the fold
   * is digested too) is not used; the log is replayed instead.
   */
  readonly version: number
  /** The state as plain JSON. Default: the state itself, which must then be plain JSON. */
  save?(state: S): JsonValue
  /** The state back from what `save` returned. Default: the saved JSON itself. */
  restore?(saved: JsonValue): S
}

/**
 * A pure fold over the log. Plugins keep no durable state of their own: their state is a
 * projection, so resume and fork rebuild it exactly. `apply` must not mutate `state` in a
 * way visible to earlier results; return a new value when something changes.
 */
export interface Projection<S> {
  readonly name: string
  init(): S
  apply(state: S, event: SessionEvent): S
  /**
   * Present when the state can be kept in a checkpoint (a JSON-serializable fold with a
   * version). A registered projection without it makes every load replay the whole log.
   */
  readonly checkpoint?: FoldCheckpoint<S>
}

/** A second, different projection registered under a name already taken. */
export class ProjectionRegistrationError extends KeelError<'PROJECTION_ALREADY_REGISTERED'> {}

const registered = new Map<string, Projection<unknown>>()

/**
 * Registers a projection every session folds into its checkpoints: its state is saved at
 * each checkpoint and restored on resume, so a resumed session does not read the log to
 * answer `project()`. A projection that is not registered still works everywhere; on a
 * session resumed from a checkpoint its first `project()` folds the log from the start
 * (unless the checkpoint happens to hold its state). Returns the projection.
 */
export function registerProjection<S>(projection: Projection<S>): Projection<S> {
  const existing = registered.get(projection.name)
  if (existing && existing !== projection) {
    throw new ProjectionRegistrationError(
      'PROJECTION_ALREADY_REGISTERED',
      `a different projection named '${projection.name}' is already registered; projection names must be unique`,
      { name: projection.name },
    )
  }
  registered.set(projection.name, projection as Projection<unknown>)
  return projection
}

/** Every registered projection, in registration order. */
export function registeredProjections(): Projection<unknown>[] {
  return [...registered.values()]
}

const digests = new WeakMap<object, string>()

/**
 * `sha256:` and the hex digest of a fold's source text (its functions' `toString()`) and
 * version: two builds agree on a checkpointed state only when their folds read the same.
 */
export function foldDigest(fold: object, version: number, parts: readonly unknown[]): string {
  let digest = digests.get(fold)
  if (digest === undefined) {
    const hash = createHash('sha256').update(`v${version}`)
    for (const part of parts) hash.update('\0').update(typeof part === 'function' ? part.toString() : '')
    digest = `sha256:${hash.digest('hex')}`
    digests.set(fold, digest)
  }
  return digest
}

/** The digest of a projection's code (see {@link foldDigest}). */
export function projectionDigest(p: Projection<unknown>, version: number): string {
  return foldDigest(p, version, [p.init, p.apply, p.checkpoint?.save, p.checkpoint?.restore])
}

/** One projection state as a checkpoint keeps it. */
export interface SavedFold {
  readonly version: number
  readonly digest: string
  readonly state: JsonValue
}

interface CachedFold {
  state: unknown
  /** Number of events already folded. */
  upTo: number
}

/**
 * Projection results of one log, cached per projection object and advanced incrementally:
 * a call after N new events costs N applies. Opaque events (types this build does not
 * know) are never folded. States restored from a checkpoint wait here by name until their
 * projection is first asked for.
 */
export class ProjectionCache {
  readonly #folds = new Map<Projection<unknown>, CachedFold>()
  /** Saved states of a checkpoint at seq `#savedAt`, by projection name. */
  #saved = new Map<string, SavedFold>()
  #savedAt = 0

  project<S>(projection: Projection<S>, events: FoldSource, isOpaque: (seq: number) => boolean): S {
    let fold = this.#folds.get(projection as Projection<unknown>)
    if (!fold) {
      fold = this.#restored(projection as Projection<unknown>) ?? { state: projection.init(), upTo: 0 }
      this.#folds.set(projection as Projection<unknown>, fold)
    }
    let state = fold.state as S
    const end = events.length
    for (let i = fold.upTo; i < end; i++) {
      if (!isOpaque(i)) state = projection.apply(state, events.at(i))
    }
    fold.state = state
    fold.upTo = end
    return state
  }

  /** Keeps the states of a checkpoint at `seq` for their projections' first `project()`. */
  restore(saved: ReadonlyMap<string, SavedFold>, seq: number): void {
    this.#saved = new Map(saved)
    this.#savedAt = seq
  }

  /**
   * The states of every registered projection and of every other checkpointable one folded
   * so far, each advanced to the end of `events` first; `unsupported` names the registered
   * ones that cannot be checkpointed. Throws `NON_JSON_DATA` when a saved state is not
   * plain JSON (a projection that needs a `save`).
   */
  save(
    events: FoldSource,
    isOpaque: (seq: number) => boolean,
  ): { saved: Record<string, SavedFold>; unsupported: string[] } {
    const saved: Record<string, SavedFold> = {}
    const unsupported: string[] = []
    for (const p of registeredProjections()) {
      if (!p.checkpoint) unsupported.push(`projection '${p.name}'`)
      else this.project(p, events, isOpaque)
    }
    for (const [p, fold] of [...this.#folds]) {
      const spec = p.checkpoint
      if (!spec) continue
      this.project(p, events, isOpaque)
      const state = spec.save ? spec.save(fold.state) : (fold.state as JsonValue)
      assertPlainJson(state, 'state', `the checkpoint of projection '${p.name}'`)
      saved[p.name] = { version: spec.version, digest: projectionDigest(p, spec.version), state }
    }
    // states restored but never asked for again are still valid: keep them
    for (const [name, fold] of this.#saved)
      if (!(name in saved) && this.#savedAt === events.length) saved[name] = fold
    return { saved, unsupported }
  }

  #restored(p: Projection<unknown>): CachedFold | undefined {
    const saved = this.#saved.get(p.name)
    const spec = p.checkpoint
    if (!saved || !spec) return undefined
    this.#saved.delete(p.name)
    if (saved.version !== spec.version || saved.digest !== projectionDigest(p, spec.version)) return undefined
    return { state: spec.restore ? spec.restore(saved.state) : saved.state, upTo: this.#savedAt }
  }
}
