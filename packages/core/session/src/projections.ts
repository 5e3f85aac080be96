import type { SessionEvent } from './types.js'

/**
 * A pure fold over the log. Plugins keep no durable state of their own: their state is a
 * projection, so resume and fork rebuild it exactly. `apply` must not mutate `state` in a
 * way visible to earlier results; return a new value when something changes.
 */
export interface Projection<S> {
  readonly name: string
  init(): S
  apply(state: S, event: SessionEvent): S
}

interface CachedFold {
  state: unknown
  /** Number of events already folded. */
  upTo: number
}

/**
 * Projection results of one log, cached per projection object and advanced incrementally:
 * a call after N new events costs N applies. Opaque events (types this build does not
 * know) are never folded.
 */
export class ProjectionCache {
  readonly #folds = new Map<Projection<unknown>, CachedFold>()

  project<S>(
    projection: Projection<S>,
    events: readonly SessionEvent[],
    isOpaque: (seq: number) => boolean,
  ): S {
    let fold = this.#folds.get(projection as Projection<unknown>)
    if (!fold) {
      fold = { state: projection.init(), upTo: 0 }
      this.#folds.set(projection as Projection<unknown>, fold)
    }
    let state = fold.state as S
    for (let i = fold.upTo; i < events.length; i++) {
      if (!isOpaque(i)) state = projection.apply(state, events[i]!)
    }
    fold.state = state
    fold.upTo = events.length
    return state
  }
}
