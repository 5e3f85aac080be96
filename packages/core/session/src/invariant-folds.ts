import { assertPlainJson, type JsonValue } from '@keel/base'
import { SessionError } from './errors.js'
import { foldDigest, type SavedFold } from './projections.js'
import type { EventInvariant, EventRegistration } from './registry.js'
import type { SessionEvent } from './types.js'

/** The next state of one invariant fold, recorded once its event is committed. */
export interface InvariantAdvance {
  readonly owner: string
  readonly state: unknown
}

/** The digest of an invariant fold's code and version (see `foldDigest`). */
export function invariantDigest(invariant: EventInvariant<unknown>, version: number): string {
  const spec = invariant.checkpoint
  return foldDigest(invariant, version, [invariant.init, invariant.check, spec?.save, spec?.restore])
}

/** The state of each registered invariant fold (see `registerEvents`), by owner, folded over one log. */
export class InvariantFolds {
  readonly #states = new Map<string, unknown>()

  /**
   * Runs the owning package's invariant fold over `event`. Returns the advance to
   * {@link commit} once the event is committed (undefined when the type has no fold);
   * throws `EVENT_INVARIANT_VIOLATED` when the fold refuses the event and `validate` is
   * set (without `validate`, a refusal leaves the fold's state as it was).
   */
  check(
    event: SessionEvent,
    registration: EventRegistration | undefined,
    validate: boolean,
  ): InvariantAdvance | undefined {
    const invariant = registration?.invariant
    if (!invariant) return undefined
    const owner = registration.owner
    const state = this.#states.has(owner) ? this.#states.get(owner) : invariant.init()
    const type = event.type as string
    const seq = event.seq as number
    const step = invariant.check(state, { type, seq, data: event.data })
    if (!step.ok) {
      if (!validate) return undefined
      throw new SessionError(
        'EVENT_INVARIANT_VIOLATED',
        `event '${type}' (seq ${seq}) breaks an invariant of ${owner}: ${step.reason}`,
        {
          type,
          seq,
          owner,
          reason: step.reason,
          ...(step.code === undefined ? {} : { invariantCode: step.code }),
        },
      )
    }
    return { owner, state: step.state }
  }

  commit(advance: InvariantAdvance | undefined): void {
    if (advance) this.#states.set(advance.owner, advance.state)
  }

  /**
   * The states folded so far, by owner, as a checkpoint keeps them; `unsupported` names the
   * owners whose fold has no `checkpoint` declaration. `invariantOf` finds an owner's fold.
   */
  save(invariantOf: (owner: string) => EventInvariant<unknown> | undefined): {
    saved: Record<string, SavedFold>
    unsupported: string[]
  } {
    const saved: Record<string, SavedFold> = {}
    const unsupported: string[] = []
    for (const [owner, state] of this.#states) {
      const invariant = invariantOf(owner)
      const spec = invariant?.checkpoint
      if (!invariant || !spec) {
        unsupported.push(`the invariant of ${owner}`)
        continue
      }
      const json = spec.save ? spec.save(state) : (state as JsonValue)
      assertPlainJson(json, 'state', `the checkpoint of the invariant of ${owner}`)
      saved[owner] = { version: spec.version, digest: invariantDigest(invariant, spec.version), state: json }
    }
    return { saved, unsupported }
  }

  /** Restores states saved by {@link save} (the caller checked versions and digests). */
  restore(
    saved: Readonly<Record<string, SavedFold>>,
    invariantOf: (owner: string) => EventInvariant<unknown>,
  ): void {
    for (const [owner, fold] of Object.entries(saved)) {
      const spec = invariantOf(owner).checkpoint!
      this.#states.set(owner, spec.restore ? spec.restore(fold.state) : fold.state)
    }
  }
}
