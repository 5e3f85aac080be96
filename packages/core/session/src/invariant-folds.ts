import { SessionError } from './errors.js'
import type { EventInvariant, EventRegistration } from './registry.js'
import type { SessionEvent } from './types.js'

/** The next state of one invariant fold, recorded once its event is committed. */
export interface InvariantAdvance {
  readonly invariant: EventInvariant<unknown>
  readonly state: unknown
}

/** The state of each registered invariant fold (see `registerEvents`), folded over one log. */
export class InvariantFolds {
  readonly #states = new Map<EventInvariant<unknown>, unknown>()

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
    const state = this.#states.has(invariant) ? this.#states.get(invariant) : invariant.init()
    const type = event.type as string
    const seq = event.seq as number
    const step = invariant.check(state, { type, seq, data: event.data })
    if (!step.ok) {
      if (!validate) return undefined
      throw new SessionError(
        'EVENT_INVARIANT_VIOLATED',
        `event '${type}' (seq ${seq}) breaks an invariant of ${registration.owner}: ${step.reason}`,
        {
          type,
          seq,
          owner: registration.owner,
          reason: step.reason,
          ...(step.code === undefined ? {} : { invariantCode: step.code }),
        },
      )
    }
    return { invariant, state: step.state }
  }

  commit(advance: InvariantAdvance | undefined): void {
    if (advance) this.#states.set(advance.invariant, advance.state)
  }
}
